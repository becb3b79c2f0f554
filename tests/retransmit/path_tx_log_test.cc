#include "retransmit/path_tx_log.h"

#include "gtest/gtest.h"

namespace braid::retransmit {
namespace {

using wire::PathSeq;
using wire::Psn;

TimeNs T(int64_t us) { return TimeNs(us * 1000); }

TEST(PathTxLogTest, FindReturnsTheTransmissionWithThatSeq) {
  PathTxLog log(8);
  for (uint32_t i = 0; i < 3; ++i)
    log.Append(PathSeq(i), Psn(100 + i), T(i), i);
  TxRecord* r = log.Find(PathSeq(1));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->psn, Psn(101));
  EXPECT_EQ(r->sent, T(1));
  EXPECT_EQ(log.Find(PathSeq(3)), nullptr);
}

TEST(PathTxLogTest, FindWorksWhenSeqsHaveGaps) {
  PathTxLog log(16);
  const uint32_t seqs[] = {2, 5, 6, 9, 20};
  for (uint32_t s : seqs) log.Append(PathSeq(s), Psn(s), T(s), s);
  for (uint32_t s : seqs) {
    TxRecord* r = log.Find(PathSeq(s));
    ASSERT_NE(r, nullptr) << s;
    EXPECT_EQ(r->psn, Psn(s));
  }
  EXPECT_EQ(log.Find(PathSeq(7)), nullptr);
  EXPECT_EQ(log.Find(PathSeq(1)), nullptr);
  EXPECT_EQ(log.Find(PathSeq(21)), nullptr);
}

TEST(PathTxLogTest, FindCopyAfterReturnsTheFirstCopySentLater) {
  PathTxLog log(16);
  // PSN 7 goes out at send indexes 10, 14 and 17; other PSNs between.
  log.Append(PathSeq(0), Psn(7), T(0), 10);
  log.Append(PathSeq(1), Psn(8), T(1), 12);
  log.Append(PathSeq(2), Psn(7), T(2), 14);
  log.Append(PathSeq(3), Psn(9), T(3), 15);
  log.Append(PathSeq(4), Psn(7), T(4), 17);
  log.PopFront();  // resolved ones are history, and still found
  TxRecord* r = log.FindCopyAfter(Psn(7), 10);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->tx_index, 14u);
  r = log.FindCopyAfter(Psn(7), 14);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->tx_index, 17u);
  EXPECT_EQ(log.FindCopyAfter(Psn(7), 17), nullptr);
  EXPECT_EQ(log.FindCopyAfter(Psn(8), 12), nullptr);
  EXPECT_EQ(log.FindCopyAfter(Psn(5), 0), nullptr);
}

TEST(PathTxLogTest, PoppedTransmissionsStayFindableAsHistory) {
  PathTxLog log(8);
  for (uint32_t i = 0; i < 3; ++i) log.Append(PathSeq(i), Psn(i), T(i), i);
  log.PopFront();
  log.PopFront();
  EXPECT_EQ(log.unresolved(), 1u);
  EXPECT_EQ(log.Front().seq, PathSeq(2));
  EXPECT_NE(log.Find(PathSeq(0)), nullptr);
}

TEST(PathTxLogTest, OldHistoryIsOverwrittenButUnresolvedEntriesNeverAre) {
  PathTxLog log(8);
  // Resolve as we go: the ring stays small and old history is recycled.
  for (uint32_t i = 0; i < 100; ++i) {
    log.Append(PathSeq(i), Psn(i), T(i), i);
    log.PopFront();
  }
  EXPECT_EQ(log.capacity(), 8u);
  EXPECT_EQ(log.Find(PathSeq(0)), nullptr);
  EXPECT_NE(log.Find(PathSeq(99)), nullptr);
  // Nothing resolved: the ring grows, every entry stays.
  for (uint32_t i = 100; i < 200; ++i) log.Append(PathSeq(i), Psn(i), T(i), i);
  EXPECT_EQ(log.unresolved(), 100u);
  EXPECT_GE(log.capacity(), 200u);
  for (uint32_t i = 100; i < 200; ++i) {
    ASSERT_NE(log.Find(PathSeq(i)), nullptr) << i;
    EXPECT_EQ(log.Find(PathSeq(i))->psn, Psn(i));
  }
  EXPECT_EQ(log.Front().seq, PathSeq(100));
}

TEST(PathTxLogTest, SeqWraparoundIsHandled) {
  PathTxLog log(8);
  const uint32_t start = 0xFFFFFFFEu;
  for (uint32_t i = 0; i < 4; ++i) {
    log.Append(PathSeq(start + i), Psn(i), T(i), i);
  }
  ASSERT_NE(log.Find(PathSeq(1)), nullptr);
  EXPECT_EQ(log.Find(PathSeq(1))->psn, Psn(3));
  EXPECT_EQ(log.Find(PathSeq(0xFFFFFFFFu))->psn, Psn(1));
  EXPECT_EQ(log.Find(PathSeq(0xFFFFFFFDu)), nullptr);
}

TEST(PathTxLogTest, AppendRunRecordsWhatAppendsOneByOneWould) {
  // Runs of varying length, some resolved as they go (history is
  // overwritten), some left unresolved (the ring grows): every unresolved
  // transmission and the latest history answer Find as with Append.
  PathTxLog by_run(8);
  PathTxLog by_one(8);
  uint32_t seq = 0xFFFFFFF0u;  // wraps on the way
  uint64_t tx = 1;
  const uint32_t runs[] = {3, 1, 7, 44, 2, 64, 5, 30};
  for (size_t k = 0; k < 8; ++k) {
    const uint32_t n = runs[k];
    by_run.AppendRun(PathSeq(seq), Psn(seq + 1000), n, T(k), tx);
    for (uint32_t i = 0; i < n; ++i) {
      by_one.Append(PathSeq(seq + i), Psn(seq + 1000 + i), T(k), tx + i);
    }
    seq += n;
    tx += n;
    if (k % 2 == 0) {  // resolve all but the last two
      while (by_run.unresolved() > 2) by_run.PopFront();
      while (by_one.unresolved() > 2) by_one.PopFront();
    }
    ASSERT_EQ(by_run.unresolved(), by_one.unresolved()) << "run " << k;
    ASSERT_EQ(by_run.Front().seq, by_one.Front().seq) << "run " << k;
    for (uint32_t back = 1; back <= n; ++back) {
      const PathSeq s(seq - back);
      const TxRecord* a = by_run.Find(s);
      const TxRecord* b = by_one.Find(s);
      ASSERT_NE(a, nullptr) << "run " << k << " seq " << s.value();
      ASSERT_NE(b, nullptr);
      EXPECT_EQ(a->psn, b->psn);
      EXPECT_EQ(a->sent, b->sent);
      EXPECT_EQ(a->tx_index, b->tx_index);
      EXPECT_EQ(a->repairs, TxRecord::kFirstSend);
      EXPECT_FALSE(a->sampled || a->superseded || a->dup_noted);
    }
  }
  EXPECT_GE(by_run.capacity(), 2 * by_run.unresolved());
}

TEST(PathTxLogTest, ClearForgetsEverything) {
  PathTxLog log(8);
  log.Append(PathSeq(1), Psn(1), T(1), 1);
  log.Clear();
  EXPECT_FALSE(log.HasUnresolved());
  EXPECT_EQ(log.Find(PathSeq(1)), nullptr);
}

}  // namespace
}  // namespace braid::retransmit

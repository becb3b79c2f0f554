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

TEST(PathTxLogTest, ClearForgetsEverything) {
  PathTxLog log(8);
  log.Append(PathSeq(1), Psn(1), T(1), 1);
  log.Clear();
  EXPECT_FALSE(log.HasUnresolved());
  EXPECT_EQ(log.Find(PathSeq(1)), nullptr);
}

}  // namespace
}  // namespace braid::retransmit

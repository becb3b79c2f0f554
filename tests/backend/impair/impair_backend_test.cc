#include "backend/impair/impair_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace braid::backend {
namespace {

// Records the bytes of every datagram it is given (a fake inner backend
// for this one component's tests).
class RecordingBackend final : public Backend {
 public:
  explicit RecordingBackend(std::vector<std::vector<uint8_t>>* sent)
      : sent_(sent) {}
  uint32_t EntropyCount() const override { return 4; }
  NetAddr LocalAddress() const override { return NetAddr::Ipv4(0x7f000001, 9); }
  uint32_t MaxDatagram() const override { return 1472; }
  size_t TxBurst(absl::Span<const TxPacket> pkts) override {
    for (const TxPacket& p : pkts) {
      sent_->emplace_back(p.size());
      p.CopyTo(sent_->back().data());
    }
    return pkts.size();
  }
  size_t RxBurst(absl::Span<RxPacket>) override { return 0; }
  BackendCounters counters() const override { return {}; }
  TimeNs LastRxTime() const override { return TimeNs(1234); }
  void SetRxTimestamps(bool on) override { timestamps = on; }

  bool timestamps = false;

 private:
  std::vector<std::vector<uint8_t>>* sent_;
};

// Datagram i: 40 head bytes in `heads`, the rest as a second piece in
// `tails`; every byte says which datagram it belongs to.
struct TwoPieceBurst {
  std::vector<uint8_t> heads, tails;
  std::vector<TxPacket> pkts;
  explicit TwoPieceBurst(int n) : heads(40 * n), tails(600 * n) {
    for (int i = 0; i < n; ++i) {
      std::memset(&heads[40 * i], i + 1, 40);
      std::memset(&tails[600 * i], i + 1, 600);
      TxPacket p{NetAddr::Ipv4(0x7f000001, 10), 0, false, &heads[40 * i], 40};
      p.tail = &tails[600 * i];
      p.tail_len = 600;
      pkts.push_back(p);
    }
  }
  void Scribble() {
    std::memset(heads.data(), 0xEE, heads.size());
    std::memset(tails.data(), 0xEE, tails.size());
  }
};

bool Whole(const std::vector<uint8_t>& d) {
  if (d.size() != 640) return false;
  for (uint8_t b : d) {
    if (b != d[0]) return false;
  }
  return d[0] != 0xEE;
}

TEST(ImpairBackendTest, ReorderedTwoPieceDatagramsKeepTheirBytes) {
  std::vector<std::vector<uint8_t>> sent;
  TestImpairments imp;
  imp.reorder = 0.5;
  imp.seed = 3;
  ImpairBackend b(std::make_unique<RecordingBackend>(&sent), imp);
  TwoPieceBurst burst(32);
  ASSERT_EQ(b.TxBurst(burst.pkts), 32u);
  // The caller may reuse its buffers once TxBurst returns: held datagrams
  // must have been copied whole, tail included.
  burst.Scribble();
  b.TxBurst({});  // releases whatever is still held
  ASSERT_EQ(sent.size(), 32u);
  std::vector<int> seen(33, 0);
  for (const auto& d : sent) {
    ASSERT_TRUE(Whole(d));
    ++seen[d[0]];
  }
  for (int i = 1; i <= 32; ++i) EXPECT_EQ(seen[i], 1) << "datagram " << i;
  EXPECT_GT(b.impair_counters().reordered, 0u);
}

// A sender that goes quiet (waiting for the ack of a datagram held here)
// must not strand it: the first RxBurst that finds it held for max_hold
// sends it, and not before.
TEST(ImpairBackendTest, HeldDatagramsGoOutAfterMaxHoldWithoutAnotherSend) {
  std::vector<std::vector<uint8_t>> sent;
  TestImpairments imp;
  imp.reorder = 1.0;  // every datagram is held
  imp.seed = 5;
  ManualClock clock(TimeNs(1000000));
  ImpairBackend b(std::make_unique<RecordingBackend>(&sent), imp,
                  DurationNs::Micros(50), &clock);
  EXPECT_TRUE(b.NextDeadline().IsInfinite());  // nothing held
  const TimeNs t0 = clock.Now();
  TwoPieceBurst first(2);
  ASSERT_EQ(b.TxBurst(first.pkts), 2u);
  clock.Advance(DurationNs::Micros(20));
  TwoPieceBurst second(1);
  ASSERT_EQ(b.TxBurst(second.pkts), 1u);
  // An endpoint blocked in its fd wakes then (it slept 19 ms per round trip
  // at --reorder 0.3 when nothing told it).
  EXPECT_EQ(b.NextDeadline(), t0 + DurationNs::Micros(50));
  first.Scribble();
  second.Scribble();
  RxPacket rx[4];
  b.RxBurst(rx);
  EXPECT_TRUE(sent.empty());              // held, and not long enough
  clock.Advance(DurationNs::Micros(30));  // the first two: 50 us
  b.RxBurst(rx);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_TRUE(Whole(sent[0]) && Whole(sent[1]));
  EXPECT_EQ(b.NextDeadline(), t0 + DurationNs::Micros(70));  // the third's
  clock.Advance(DurationNs::Micros(20));                     // the third: 50 us
  b.RxBurst(rx);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_TRUE(Whole(sent[2]));
  EXPECT_EQ(b.impair_counters().reordered, 3u);
  EXPECT_EQ(b.impair_counters().released_late, 3u);
  EXPECT_TRUE(b.NextDeadline().IsInfinite());
  b.RxBurst(rx);
  EXPECT_EQ(sent.size(), 3u);  // nothing twice
}

// The receive side is not impaired: what the inner backend reports about
// receiving passes through, and so does the timestamp switch.
TEST(ImpairBackendTest, ReceiveClockAndTimestampSwitchPassThrough) {
  std::vector<std::vector<uint8_t>> sent;
  auto inner = std::make_unique<RecordingBackend>(&sent);
  RecordingBackend* raw = inner.get();
  ImpairBackend b(std::move(inner), TestImpairments{});
  EXPECT_EQ(b.LastRxTime(), TimeNs(1234));
  b.SetRxTimestamps(true);
  EXPECT_TRUE(raw->timestamps);
  b.SetRxTimestamps(false);
  EXPECT_FALSE(raw->timestamps);
}

TEST(ImpairBackendTest, DropAllAndDuplicateAllAreCounted) {
  std::vector<std::vector<uint8_t>> sent;
  TestImpairments drop;
  drop.drop = 1.0;
  ImpairBackend d(std::make_unique<RecordingBackend>(&sent), drop);
  TwoPieceBurst burst(8);
  EXPECT_EQ(d.TxBurst(burst.pkts), 8u);
  EXPECT_TRUE(sent.empty());
  EXPECT_EQ(d.impair_counters().dropped, 8u);

  TestImpairments dup;
  dup.duplicate = 1.0;
  ImpairBackend u(std::make_unique<RecordingBackend>(&sent), dup);
  EXPECT_EQ(u.TxBurst(burst.pkts), 8u);
  ASSERT_EQ(sent.size(), 16u);
  for (const auto& s : sent) EXPECT_TRUE(Whole(s));
  EXPECT_EQ(u.impair_counters().duplicated, 8u);
  EXPECT_EQ(u.counters().impair_duplicated, 8u);
  EXPECT_EQ(d.counters().impair_dropped, 8u);
}

TEST(ImpairBackendTest, CorruptedDatagramsAreDiscardedAndCounted) {
  std::vector<std::vector<uint8_t>> sent;
  TestImpairments corrupt;
  corrupt.corrupt = 1.0;
  ImpairBackend c(std::make_unique<RecordingBackend>(&sent), corrupt);
  TwoPieceBurst burst(8);
  EXPECT_EQ(c.TxBurst(burst.pkts), 8u);
  EXPECT_TRUE(sent.empty());
  const BackendCounters n = c.counters();
  EXPECT_EQ(n.impair_corrupted, 8u);
  EXPECT_EQ(n.impair_dropped, 0u);
}

// Records, per datagram handed on, its first byte (a tag) and its run hint.
class HintRecorder final : public Backend {
 public:
  struct Seen {
    uint8_t tag;
    uint8_t run_follow;
  };
  explicit HintRecorder(std::vector<Seen>* seen) : seen_(seen) {}
  uint32_t EntropyCount() const override { return 4; }
  NetAddr LocalAddress() const override { return NetAddr::Ipv4(0x7f000001, 9); }
  uint32_t MaxDatagram() const override { return 1472; }
  size_t TxBurst(absl::Span<const TxPacket> pkts) override {
    for (const TxPacket& p : pkts) seen_->push_back({p.data[0], p.run_follow});
    return pkts.size();
  }
  size_t RxBurst(absl::Span<RxPacket>) override { return 0; }
  BackendCounters counters() const override { return {}; }
  TimeNs LastRxTime() const override { return TimeNs(0); }
  void SetRxTimestamps(bool) override {}

 private:
  std::vector<Seen>* seen_;
};

// A burst of runs of `run` same-shape datagrams, hinted as BuildFullDatagrams
// hints them; datagram i's bytes are its tag i (< 250), its run is i / run.
struct RunBurst {
  std::vector<uint8_t> bytes;
  std::vector<TxPacket> pkts;
  RunBurst(int n, int run) : bytes(64 * n) {
    for (int i = 0; i < n; ++i) {
      std::memset(&bytes[64 * i], i, 64);
      TxPacket p{NetAddr::Ipv4(0x7f000001, 10),
                 static_cast<wire::Entropy>(i / run), true, &bytes[64 * i], 64};
      p.run_follow = static_cast<uint8_t>(run - 1 - i % run);
      pkts.push_back(p);
    }
  }
};

// Every hint handed on claims only datagrams of the hinting one's run, and
// none reaches a datagram that was held back and released out of order.
void ExpectSoundHints(const std::vector<HintRecorder::Seen>& seen, int run,
                      const std::vector<bool>& released_late) {
  for (size_t i = 0; i < seen.size(); ++i) {
    for (size_t j = i + 1; j <= i + seen[i].run_follow; ++j) {
      ASSERT_LT(j, seen.size()) << "hint past the burst at " << i;
      EXPECT_EQ(seen[j].tag / run, seen[i].tag / run) << "at " << i;
      EXPECT_FALSE(released_late[j]) << "hint reaches a held datagram at " << i;
    }
  }
}

TEST(ImpairBackendTest, DropsAndDuplicatesKeepTrueRunHints) {
  std::vector<HintRecorder::Seen> seen;
  TestImpairments imp;
  imp.drop = 0.2;
  imp.duplicate = 0.2;
  ImpairBackend b(std::make_unique<HintRecorder>(&seen), imp);
  constexpr int kRun = 40;
  RunBurst burst(200, kRun);
  EXPECT_EQ(b.TxBurst(burst.pkts), 200u);
  ASSERT_GT(b.impair_counters().dropped, 0u);
  ASSERT_GT(b.impair_counters().duplicated, 0u);
  ASSERT_EQ(seen.size(),
            200 - b.impair_counters().dropped + b.impair_counters().duplicated);
  ExpectSoundHints(seen, kRun, std::vector<bool>(seen.size(), false));
  // And complete: each datagram counts every later one of its run (the
  // UDP backend then sends each surviving run as one GSO send).
  for (size_t i = 0; i < seen.size(); ++i) {
    size_t same = 0;
    while (i + same + 1 < seen.size() &&
           seen[i + same + 1].tag / kRun == seen[i].tag / kRun) {
      ++same;
    }
    EXPECT_EQ(seen[i].run_follow, same) << "at " << i;
  }
}

TEST(ImpairBackendTest, ReorderedDatagramsBreakRunHints) {
  std::vector<HintRecorder::Seen> seen;
  TestImpairments imp;
  imp.reorder = 0.2;
  imp.drop = 0.05;
  ImpairBackend b(std::make_unique<HintRecorder>(&seen), imp);
  constexpr int kRun = 40;
  RunBurst burst(200, kRun);
  b.TxBurst(burst.pkts);
  b.TxBurst({});  // releases what is still held
  ASSERT_GT(b.impair_counters().reordered, 0u);
  // A datagram is out of order if a higher tag went before it.
  std::vector<bool> late(seen.size(), false);
  int high = -1;
  for (size_t i = 0; i < seen.size(); ++i) {
    late[i] = seen[i].tag < high;
    high = std::max<int>(high, seen[i].tag);
  }
  ExpectSoundHints(seen, kRun, late);
  size_t hinted = 0;
  for (const auto& s : seen) hinted += s.run_follow > 0;
  EXPECT_GT(hinted, seen.size() / 2);  // runs between the holes keep theirs
}

// Rates come out as asked, whether bursts take the unimpaired fast path or
// not: counts within 5 standard deviations of n * p.
TEST(ImpairBackendTest, ImpairmentRatesMatchTheirProbabilities) {
  for (const double p : {0.001, 0.01, 0.2}) {
    std::vector<HintRecorder::Seen> seen;
    TestImpairments imp;
    imp.drop = p;
    imp.duplicate = p;
    imp.seed = 11;
    ImpairBackend b(std::make_unique<HintRecorder>(&seen), imp);
    constexpr int kBursts = 16000;
    RunBurst burst(64, 32);
    for (int i = 0; i < kBursts; ++i) b.TxBurst(burst.pkts);
    const double n = 64.0 * kBursts;
    const double dropped = static_cast<double>(b.impair_counters().dropped);
    EXPECT_NEAR(dropped, n * p, 5 * std::sqrt(n * p * (1 - p))) << p;
    // Duplication applies to the datagrams that were not dropped.
    const double kept = n - dropped;
    const double dups = static_cast<double>(b.impair_counters().duplicated);
    EXPECT_NEAR(dups, kept * p, 5 * std::sqrt(kept * p * (1 - p))) << p;
    EXPECT_EQ(seen.size(), kept + dups);
  }
}

TEST(ImpairBackendTest, UnimpairedBurstsPassWithTheirHints) {
  std::vector<HintRecorder::Seen> seen;
  TestImpairments imp;
  imp.drop = 1e-12;  // asked for, but no datagram of this test meets it
  ImpairBackend b(std::make_unique<HintRecorder>(&seen), imp);
  RunBurst burst(64, 40);
  b.TxBurst(burst.pkts);
  ASSERT_EQ(seen.size(), 64u);
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(seen[i].tag, i);
    EXPECT_EQ(seen[i].run_follow, burst.pkts[i].run_follow);
  }
}

}  // namespace
}  // namespace braid::backend

#include "cc/swift.h"

#include <cstdint>

#include "base/rng.h"
#include "gtest/gtest.h"

namespace braid::cc {
namespace {

constexpr uint32_t kMss = 4096;
const DurationNs kMinRtt = DurationNs::Micros(10);
// TestOptions' delay target: an RTT sample here shows queueing.
const DurationNs kTarget = kMinRtt + DurationNs::Micros(25);

CcOptions TestOptions() {
  CcOptions o;
  o.mss = kMss;
  o.initial_cwnd_bytes = 64 * kMss;
  o.fs_range = DurationNs::Zero();  // fixed target: min_rtt + base_target
  o.base_target = DurationNs::Micros(25);
  return o;
}

// Drives a controller in "rounds": each round acknowledges one window of
// packets in batches of `batch`, spread over one `rtt`, every sample = rtt.
class Driver {
 public:
  explicit Driver(Swift* cc) : cc_(cc) {}

  void Round(DurationNs rtt, double ce_fraction = 0, uint32_t batch = 8) {
    const uint64_t pkts = std::max<uint64_t>(1, cc_->cwnd_bytes() / kMss);
    const uint64_t batches = (pkts + batch - 1) / batch;
    uint64_t marked_so_far = 0, acked_so_far = 0;
    for (uint64_t b = 0; b < batches; ++b) {
      const uint32_t n =
          static_cast<uint32_t>(std::min<uint64_t>(batch, pkts - acked_so_far));
      acked_so_far += n;
      const uint64_t want_marked =
          static_cast<uint64_t>(ce_fraction * acked_so_far + 0.5);
      AckEvent e;
      now_ += rtt / static_cast<int64_t>(batches);
      e.now = now_;
      e.bytes_acked = uint64_t{n} * kMss;
      e.packets_acked = n;
      e.rtt = rtt;
      e.min_rtt = kMinRtt;
      e.srtt = rtt;
      e.ce_packets = static_cast<uint32_t>(want_marked - marked_so_far);
      marked_so_far = want_marked;
      cc_->OnAck(e);
    }
  }

  void Ack(DurationNs rtt, uint32_t packets = 1, uint32_t ce = 0,
           DurationNs advance = DurationNs::Nanos(100)) {
    now_ += advance;
    AckEvent e;
    e.now = now_;
    e.bytes_acked = uint64_t{packets} * kMss;
    e.packets_acked = packets;
    e.rtt = rtt;
    e.min_rtt = kMinRtt;
    e.srtt = rtt;
    e.ce_packets = ce;
    cc_->OnAck(e);
  }

  void Loss(uint32_t packets, bool rto = false,
            DurationNs advance = DurationNs::Nanos(100)) {
    now_ += advance;
    LossEvent e;
    e.now = now_;
    e.bytes_lost = uint64_t{packets} * kMss;
    e.packets_lost = packets;
    e.rto = rto;
    cc_->OnLoss(e);
  }

  // 20 % loss: `outcomes` packet outcomes 250 ns apart, the ones with
  // i % 5 == lost_at lost, the others acked with `rtt`; with `ce`, the ack
  // right after each loss carries a CE mark.
  void FifthLost(DurationNs rtt, int outcomes, int lost_at = 0,
                 bool ce = false) {
    for (int i = 0; i < outcomes; ++i) {
      if (i % 5 == lost_at) {
        Loss(1, false, DurationNs::Nanos(250));
      } else {
        const bool mark = ce && i % 5 == (lost_at + 1) % 5;
        Ack(rtt, 1, mark ? 1 : 0, DurationNs::Nanos(250));
      }
    }
  }

  void Advance(DurationNs d) { now_ += d; }
  TimeNs now() const { return now_; }

 private:
  Swift* cc_;
  TimeNs now_ = TimeNs(1'000'000);
};

TEST(SwiftTest, GrowsAboutOnePacketPerRttWhenDelayIsBelowTarget) {
  Swift cc(TestOptions());
  Driver d(&cc);
  const uint64_t start = cc.cwnd_bytes();
  for (int i = 0; i < 20; ++i) d.Round(kMinRtt + DurationNs::Micros(5));
  const double grown_pkts = static_cast<double>(cc.cwnd_bytes() - start) / kMss;
  EXPECT_GT(grown_pkts, 17.0);
  EXPECT_LT(grown_pkts, 21.0);
  EXPECT_EQ(cc.stats().delay_decreases, 0u);
}

TEST(SwiftTest, AdditiveIncreaseRateFollowsOption) {
  CcOptions o = TestOptions();
  o.additive_increase_packets = 4.0;
  Swift cc(o);
  Driver d(&cc);
  const uint64_t start = cc.cwnd_bytes();
  for (int i = 0; i < 10; ++i) d.Round(kMinRtt);
  const double grown_pkts = static_cast<double>(cc.cwnd_bytes() - start) / kMss;
  EXPECT_GT(grown_pkts, 36.0);
  EXPECT_LT(grown_pkts, 41.0);
}

TEST(SwiftTest, StartWindowDoublesEveryRttUpToInitial) {
  CcOptions o = TestOptions();
  o.start_cwnd_bytes = 4 * kMss;
  Swift cc(o);
  Driver d(&cc);
  EXPECT_EQ(cc.cwnd_bytes(), 4 * kMss);
  d.Round(kMinRtt);
  EXPECT_EQ(cc.cwnd_bytes(), 8 * kMss);
  d.Round(kMinRtt);
  EXPECT_EQ(cc.cwnd_bytes(), 16 * kMss);
  d.Round(kMinRtt);
  d.Round(kMinRtt);
  EXPECT_EQ(cc.cwnd_bytes(), o.initial_cwnd_bytes);  // 64 mss: capped there
  d.Round(kMinRtt);                                  // then one packet per RTT
  EXPECT_LE(cc.cwnd_bytes(), o.initial_cwnd_bytes + 2 * kMss);
}

TEST(SwiftTest, QueueingEndsTheStartDoubling) {
  CcOptions o = TestOptions();
  o.start_cwnd_bytes = 4 * kMss;
  Swift cc(o);
  Driver d(&cc);
  d.Round(kMinRtt);
  d.Round(kTarget + DurationNs::Micros(5));  // the queue shows: stop
  const uint64_t after = cc.cwnd_bytes();
  EXPECT_LE(after, 8 * kMss);
  d.Round(kMinRtt);
  EXPECT_LE(cc.cwnd_bytes(), after + 2 * kMss);  // additive from here on
  cc.Reset();  // a new session doubles again from the start window
  EXPECT_EQ(cc.cwnd_bytes(), 4 * kMss);
}

TEST(SwiftTest, StartWindowGrowsOnAcksWithoutAnRttSample) {
  // Acks of re-sends, and samples kept from congestion control (a path
  // being steered away from), carry no RTT: their bytes still count, as
  // long as nothing shows a queue. Additive increase needs a sample.
  CcOptions o = TestOptions();
  o.start_cwnd_bytes = 4 * kMss;
  Swift cc(o);
  AckEvent e;
  e.now = TimeNs(1000);
  e.bytes_acked = 4 * kMss;
  e.packets_acked = 4;
  cc.OnAck(e);
  EXPECT_EQ(cc.cwnd_bytes(), 8 * kMss);
  e.ce_packets = 1;  // a CE mark ends the start
  cc.OnAck(e);
  EXPECT_LE(cc.cwnd_bytes(), 8 * kMss);
  e.ce_packets = 0;
  const uint64_t after = cc.cwnd_bytes();
  cc.OnAck(e);
  EXPECT_EQ(cc.cwnd_bytes(), after);  // no sample: no additive increase
}

TEST(SwiftTest, DelayAboveTargetCutsInProportionToExcess) {
  Swift cc(TestOptions());
  Driver d(&cc);
  const double before = static_cast<double>(cc.cwnd_bytes());
  // target = 10 + 25 = 35 us; rtt 50 us: cut = 0.8 * 15 / 50 = 0.24.
  d.Ack(DurationNs::Micros(50));
  EXPECT_NEAR(static_cast<double>(cc.cwnd_bytes()), before * (1 - 0.24), 2.0);
  EXPECT_EQ(cc.stats().delay_decreases, 1u);
}

TEST(SwiftTest, DelayCutIsBoundedByMaxMdf) {
  Swift cc(TestOptions());
  Driver d(&cc);
  const uint64_t before = cc.cwnd_bytes();
  d.Ack(DurationNs::Millis(10));  // cut would be ~0.8
  EXPECT_EQ(cc.cwnd_bytes(), before / 2);
}

TEST(SwiftTest, DelayDecreasesAtMostOncePerRtt) {
  Swift cc(TestOptions());
  Driver d(&cc);
  const DurationNs rtt = DurationNs::Micros(100);
  d.Ack(rtt);
  const uint64_t after_first = cc.cwnd_bytes();
  for (int i = 0; i < 50; ++i) d.Ack(rtt, 1, 0, DurationNs::Micros(1));
  EXPECT_EQ(cc.cwnd_bytes(), after_first);
  EXPECT_EQ(cc.stats().delay_decreases, 1u);
  d.Ack(rtt, 1, 0, DurationNs::Micros(60));  // > 100 us since the first cut
  EXPECT_LT(cc.cwnd_bytes(), after_first);
  EXPECT_EQ(cc.stats().delay_decreases, 2u);
}

TEST(SwiftTest, ConvergesNearTargetUnderSustainedQueueing) {
  // A window above the path's BDP raises delay; Swift cuts until delay is
  // below target, then oscillates around it rather than collapsing.
  Swift cc(TestOptions());
  Driver d(&cc);
  const double bdp_pkts = 16;  // packets the pipe holds at min_rtt
  for (int i = 0; i < 300; ++i) {
    const double pkts = static_cast<double>(cc.cwnd_bytes()) / kMss;
    const double queue_pkts = std::max(0.0, pkts - bdp_pkts);
    // 1 packet of queue = min_rtt / bdp of delay.
    const DurationNs rtt =
        kMinRtt +
        DurationNs(static_cast<int64_t>(queue_pkts * kMinRtt.ns() / bdp_pkts));
    d.Round(rtt);
  }
  // Target 35 us of RTT = 10 us base + 25 us queue = 40 queued packets.
  const double pkts = static_cast<double>(cc.cwnd_bytes()) / kMss;
  EXPECT_GT(pkts, bdp_pkts + 20);
  EXPECT_LT(pkts, bdp_pkts + 45);
}

TEST(SwiftTest, EcnMarksCutByHalfAlpha) {
  CcOptions o = TestOptions();
  o.dctcp_initial_alpha = 0.5;
  Swift cc(o);
  Driver d(&cc);
  const double before = static_cast<double>(cc.cwnd_bytes());
  d.Ack(kMinRtt, 4, 1);
  EXPECT_NEAR(static_cast<double>(cc.cwnd_bytes()), before * 0.75, 2.0);
  EXPECT_EQ(cc.stats().ecn_decreases, 1u);
}

TEST(SwiftTest, DctcpAlphaConvergesToMarkFraction) {
  Swift cc(TestOptions());
  Driver d(&cc);
  EXPECT_DOUBLE_EQ(cc.alpha(), 1.0);
  // Batches of 10 packets every microsecond, RTT 10 us: one alpha window
  // holds ~100 packets.
  for (int i = 0; i < 3000; ++i) {
    d.Ack(kMinRtt, 10, 1, DurationNs::Micros(1));  // 10 % marked
  }
  EXPECT_NEAR(cc.alpha(), 0.1, 0.01);
  for (int i = 0; i < 3000; ++i) {
    d.Ack(kMinRtt, 10, 4, DurationNs::Micros(1));  // 40 % marked
  }
  EXPECT_NEAR(cc.alpha(), 0.4, 0.01);
  EXPECT_GT(cc.stats().ecn_decreases, 100u);
}

TEST(SwiftTest, EcnIgnoredWhenDisabled) {
  CcOptions o = TestOptions();
  o.ecn_enabled = false;
  Swift cc(o);
  Driver d(&cc);
  const uint64_t before = cc.cwnd_bytes();
  for (int i = 0; i < 10; ++i) d.Round(kMinRtt, 1.0);
  EXPECT_GT(cc.cwnd_bytes(), before);
  EXPECT_EQ(cc.stats().ecn_decreases, 0u);
}

TEST(SwiftTest, SingleLossDoesNotShrinkWindow) {
  Swift cc(TestOptions());
  Driver d(&cc);
  d.Round(kMinRtt + DurationNs::Micros(25));  // rtt == target: hold
  const uint64_t before = cc.cwnd_bytes();
  d.Loss(1);
  EXPECT_EQ(cc.cwnd_bytes(), before);
  EXPECT_EQ(cc.stats().losses_tolerated, 1u);
}

TEST(SwiftTest, ScatteredOnePercentLossKeepsWindowNearWhereItWas) {
  // Two controllers see the same acks; one also loses 1 % of packets at
  // random. Their windows must stay close.
  Swift clean(TestOptions()), lossy(TestOptions());
  Driver dc(&clean), dl(&lossy);
  Rng rng(42);
  const DurationNs rtt = kMinRtt + DurationNs::Micros(20);  // below target
  for (int i = 0; i < 20000; ++i) {
    dc.Ack(rtt, 1, 0, DurationNs::Nanos(500));
    if (rng.Bernoulli(0.01)) {
      dl.Loss(1, false, DurationNs::Nanos(250));
      dl.Ack(rtt, 1, 0, DurationNs::Nanos(250));
    } else {
      dl.Ack(rtt, 1, 0, DurationNs::Nanos(500));
    }
  }
  EXPECT_GT(lossy.stats().losses_tolerated, 150u);
  EXPECT_LE(lossy.stats().loss_decreases, 1u);
  const double ratio = static_cast<double>(lossy.cwnd_bytes()) /
                       static_cast<double>(clean.cwnd_bytes());
  EXPECT_GT(ratio, 0.95);
}

TEST(SwiftTest, SustainedHeavyLossShrinksWindowAtMostOncePerRtt) {
  Swift cc(TestOptions());
  Driver d(&cc);
  const DurationNs rtt = kMinRtt + DurationNs::Micros(25);  // == target: hold
  const uint64_t before = cc.cwnd_bytes();
  // 20 % loss for 20 RTTs of 35 us, one packet outcome every 250 ns.
  d.FifthLost(rtt, 2800);
  EXPECT_LT(cc.cwnd_bytes(), before / 4);
  EXPECT_GE(cc.stats().loss_decreases, 10u);
  EXPECT_LE(cc.stats().loss_decreases, 21u);
}

TEST(SwiftTest, SingleRtoCutsByMaxMdfAndRepeatedRtoCollapses) {
  Swift cc(TestOptions());
  Driver d(&cc);
  d.Ack(kTarget);  // the queue shows: a timeout is congestion
  const uint64_t before = cc.cwnd_bytes();
  d.Loss(1, /*rto=*/true);
  EXPECT_EQ(cc.cwnd_bytes(), before / 2);
  d.Loss(1, /*rto=*/true);
  EXPECT_EQ(cc.cwnd_bytes(), kMss);
  EXPECT_EQ(cc.stats().rto_events, 2u);
  EXPECT_EQ(cc.stats().rto_collapses, 1u);
}

// Loss is not congestion: with the RTT at its base and no CE, neither heavy
// random loss nor a run of timeouts shrinks the window.
TEST(SwiftTest, HeavyLossWithRttAtBaseNeverShrinksTheWindow) {
  Swift cc(TestOptions());
  Driver d(&cc);
  const DurationNs rtt = kMinRtt + DurationNs::Micros(2);  // no queue
  const uint64_t before = cc.cwnd_bytes();
  // 20 % loss for about 20 RTTs, one packet outcome every 250 ns.
  d.FifthLost(rtt, 1000);
  EXPECT_GE(cc.cwnd_bytes(), before);
  EXPECT_EQ(cc.stats().loss_decreases, 0u);
  EXPECT_EQ(cc.stats().losses_without_queueing, 200u);
}

TEST(SwiftTest, SameLossWithQueueingDelayShrinksTheWindow) {
  Swift cc(TestOptions());
  Driver d(&cc);
  const uint64_t before = cc.cwnd_bytes();
  d.FifthLost(kTarget, 1000, /*lost_at=*/4);  // an RTT sample comes first
  EXPECT_LT(cc.cwnd_bytes(), before / 2);
  EXPECT_GT(cc.stats().loss_decreases, 0u);
  EXPECT_EQ(cc.stats().losses_without_queueing, 0u);
}

TEST(SwiftTest, SameLossWithCeMarksAtBaseRttShrinksTheWindow) {
  CcOptions o = TestOptions();
  o.dctcp_initial_alpha = 0;  // the marks alone would cut almost nothing
  Swift cc(o);
  Driver d(&cc);
  const DurationNs rtt = kMinRtt + DurationNs::Micros(2);
  const uint64_t before = cc.cwnd_bytes();
  d.FifthLost(rtt, 1000, /*lost_at=*/0, /*ce=*/true);
  EXPECT_LT(cc.cwnd_bytes(), before / 2);
  EXPECT_GT(cc.stats().loss_decreases, 0u);
}

TEST(SwiftTest, RepeatedRtosWithRttAtBaseKeepTheWindow) {
  Swift cc(TestOptions());
  Driver d(&cc);
  d.Ack(kTarget);  // queueing once ...
  d.Ack(kMinRtt);  // ... but the newest sample says the queue is gone
  const uint64_t before = cc.cwnd_bytes();
  for (int i = 0; i < 10; ++i) d.Loss(1, /*rto=*/true, DurationNs::Millis(1));
  EXPECT_EQ(cc.cwnd_bytes(), before);
  EXPECT_EQ(cc.stats().rto_events, 10u);
  EXPECT_EQ(cc.stats().rtos_without_queueing, 10u);
  EXPECT_EQ(cc.stats().rto_collapses, 0u);
}

TEST(SwiftTest, ZeroQueueingFractionCountsEveryLossAsCongestion) {
  CcOptions o = TestOptions();
  o.loss_queueing_fraction = 0;
  Swift cc(o);
  Driver d(&cc);
  const uint64_t before = cc.cwnd_bytes();
  d.Loss(1, /*rto=*/true);  // no RTT sample at all
  EXPECT_EQ(cc.cwnd_bytes(), before / 2);
  EXPECT_EQ(cc.stats().rtos_without_queueing, 0u);
}

TEST(SwiftTest, AckBetweenRtosResetsCollapseCount) {
  Swift cc(TestOptions());
  Driver d(&cc);
  d.Ack(kTarget);
  d.Loss(1, true);
  d.Ack(kTarget);
  const uint64_t mid = cc.cwnd_bytes();
  d.Loss(1, true);
  EXPECT_GT(cc.cwnd_bytes(), kMss);
  EXPECT_LE(cc.cwnd_bytes(), mid / 2 + 1);
  EXPECT_EQ(cc.stats().rto_collapses, 0u);
}

TEST(SwiftTest, RtoWindowNeverExceedsInitial) {
  CcOptions o = TestOptions();
  Swift cc(o);
  Driver d(&cc);
  for (int i = 0; i < 400; ++i) d.Round(kMinRtt);  // grow well past 2x init
  ASSERT_GT(cc.cwnd_bytes(), 2 * o.initial_cwnd_bytes);
  d.Ack(kTarget);
  d.Loss(1, true);
  EXPECT_EQ(cc.cwnd_bytes(), o.initial_cwnd_bytes);
}

TEST(SwiftTest, SpuriousRtoRestoresTheWindowFromBeforeTheTimeouts) {
  CcOptions o = TestOptions();
  Swift cc(o);
  Driver d(&cc);
  for (int i = 0; i < 400; ++i) d.Round(kMinRtt);
  d.Ack(kTarget);
  const uint64_t before = cc.cwnd_bytes();
  ASSERT_GT(before, 2 * o.initial_cwnd_bytes);
  d.Loss(1, true);
  d.Loss(1, true);  // collapsed
  ASSERT_EQ(cc.cwnd_bytes(), kMss);
  cc.OnSpuriousRto();
  EXPECT_EQ(cc.cwnd_bytes(), before);
  EXPECT_EQ(cc.stats().rto_undos, 1u);
  // Once per RTO: a second report changes nothing.
  d.Loss(1, true);
  const uint64_t cut = cc.cwnd_bytes();
  cc.OnSpuriousRto();
  EXPECT_EQ(cc.cwnd_bytes(), before);
  cc.OnSpuriousRto();
  EXPECT_EQ(cc.cwnd_bytes(), before);
  EXPECT_LT(cut, before);
  EXPECT_EQ(cc.stats().rto_undos, 2u);
}

TEST(SwiftTest, SpuriousRtoWithoutAnRtoChangesNothing) {
  Swift cc(TestOptions());
  Driver d(&cc);
  const uint64_t w = cc.cwnd_bytes();
  cc.OnSpuriousRto();
  EXPECT_EQ(cc.cwnd_bytes(), w);
  EXPECT_EQ(cc.stats().rto_undos, 0u);
}

TEST(SwiftTest, FlowScalingRaisesTargetForSmallWindows) {
  CcOptions o = TestOptions();
  o.fs_range = DurationNs::Micros(20);
  o.fs_min_cwnd_packets = 1;
  o.fs_max_cwnd_packets = 64;
  o.initial_cwnd_bytes = kMss;
  Swift small(o);
  o.initial_cwnd_bytes = 128 * kMss;
  Swift large(o);
  Driver ds(&small), dl(&large);
  // Delay far above target: the small window stays clamped at one packet.
  ds.Ack(DurationNs::Millis(1));
  dl.Ack(kMinRtt);
  ASSERT_EQ(small.cwnd_bytes(), kMss);
  // At 1 packet the full range is added; at >= 64 packets nothing.
  EXPECT_NEAR(small.target_delay().us(), 10 + 25 + 20, 0.5);
  EXPECT_EQ(large.target_delay(), kMinRtt + DurationNs::Micros(25));
}

TEST(SwiftTest, WindowStaysWithinBoundsUnderRandomEvents) {
  CcOptions o = TestOptions();
  o.min_cwnd_bytes = 2 * kMss;
  o.max_cwnd_bytes = 100 * kMss;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Swift cc(o);
    Driver d(&cc);
    Rng rng(seed);
    for (int i = 0; i < 5000; ++i) {
      const uint64_t kind = rng.Uniform(10);
      const DurationNs adv = DurationNs::Nanos(1 + rng.Uniform(20000));
      if (kind < 7) {
        const uint32_t n = 1 + rng.Uniform(16);
        d.Ack(DurationNs::Micros(1 + rng.Uniform(500)), n, rng.Uniform(n + 1),
              adv);
      } else {
        d.Loss(1 + rng.Uniform(8), rng.Uniform(10) == 0, adv);
      }
      ASSERT_GE(cc.cwnd_bytes(), o.min_cwnd_bytes) << "seed " << seed;
      ASSERT_LE(cc.cwnd_bytes(), o.max_cwnd_bytes) << "seed " << seed;
    }
  }
}

TEST(SwiftTest, ResetRestoresInitialState) {
  Swift cc(TestOptions());
  Driver d(&cc);
  d.Loss(1, true);
  d.Loss(1, true);
  d.Ack(kMinRtt, 4, 1);
  cc.Reset();
  EXPECT_EQ(cc.cwnd_bytes(), TestOptions().initial_cwnd_bytes);
  EXPECT_DOUBLE_EQ(cc.alpha(), 1.0);
  EXPECT_EQ(cc.stats().rto_events, 2u);  // counters survive Reset
}

}  // namespace
}  // namespace braid::cc

#include "multipath/path_set.h"

#include <algorithm>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "tests/multipath/fake_fabric.h"

namespace braid::multipath {
namespace {

const TimeNs kT0 = TimeNs(1'000'000);
const DurationNs kRtt = DurationNs::Micros(10);

PathSetOptions Opts(uint16_t n = 16) {
  PathSetOptions o;
  o.num_paths = n;
  return o;
}

// Sends one packet on exactly path `p` (by picking until it comes up). The
// other paths' packets stay in flight, so `p` never looks like a hog.
wire::PathSeq SendOn(PathSet& ps, wire::PathId p, TimeNs now) {
  for (size_t i = 0; i < 4 * ps.size(); ++i) {
    const wire::PathId got = ps.Pick(now);
    const wire::PathSeq s = ps.OnSent(got, 1000, now);
    if (got == p) return s;
  }
  ADD_FAILURE() << "path " << int{p} << " never picked";
  return wire::PathSeq(0);
}

// `n` picks at `at` (each sent and acked at once) never choose path `p`.
void ExpectNeverPicked(PathSet& ps, wire::PathId p, TimeNs at, int n) {
  for (int i = 0; i < n; ++i) {
    const auto got = ps.Pick(at);
    EXPECT_NE(got, p);
    ps.OnSent(got, 100, at);
    ps.OnAcked(got, 100, at);
  }
}

// `n` picks at `at`, each sent and, unless it is on `held`, acked at once;
// returns how many went on `held` (whose packets stay in flight).
int PicksHoldingOnePath(PathSet& ps, wire::PathId held, TimeNs at, int n) {
  int on_held = 0;
  for (int i = 0; i < n; ++i) {
    const auto p = ps.Pick(at);
    ps.OnSent(p, 100, at);
    if (p == held) {
      ++on_held;
    } else {
      ps.OnAcked(p, 100, at);
    }
  }
  return on_held;
}

// Penalises path p by the burst rule (three losses, no ack between).
void PenaliseByLoss(PathSet& ps, wire::PathId p, TimeNs now) {
  for (int i = 0; i < 3; ++i) SendOn(ps, p, now);
  ps.OnLoss(p, now);
  ps.OnLoss(p, now);
  ps.OnLoss(p, now);
}

TEST(PathSetTest, InitialEntropiesAreDistinctAndInsideTheSpace) {
  PathSetOptions o = Opts(64);
  o.entropy_space = 100;
  PathSet ps(o, 7);
  std::set<wire::Entropy> seen;
  for (size_t p = 0; p < ps.size(); ++p) {
    const auto e = ps.entropy(static_cast<wire::PathId>(p));
    EXPECT_LT(e, 100);
    seen.insert(e);
  }
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_EQ(ps.healthy_paths(), 64u);
}

TEST(PathSetTest, SprayIsEvenAcrossSixteenPaths) {
  PathSet ps(Opts(), 1);
  std::vector<int> count(16);
  for (int i = 0; i < 16000; ++i) {
    const auto p = ps.Pick(kT0);
    ps.OnSent(p, 4096, kT0);
    ++count[p];
  }
  for (int c : count) {
    EXPECT_GE(c, 980);
    EXPECT_LE(c, 1020);
  }
}

TEST(PathSetTest, SprayStaysEvenWhilePacketsAreAcked) {
  PathSet ps(Opts(), 1);
  FakeFabric fab(&ps, 2, kRtt);
  std::vector<int> count(16);
  fab.on_send = [&](wire::PathId p, wire::Entropy, PathHealth) { ++count[p]; };
  TimeNs now = kT0;
  fab.Run(&now, kT0 + DurationNs::Nanos(100) * 16000, DurationNs::Nanos(100));
  for (int c : count) {
    EXPECT_GE(c, 980);
    EXPECT_LE(c, 1020);
  }
}

TEST(PathSetTest, PathSeqIsConsecutivePerPath) {
  PathSet ps(Opts(4), 1);
  std::vector<uint32_t> next(4, 0);
  for (int i = 0; i < 1000; ++i) {
    const auto p = ps.Pick(kT0);
    EXPECT_EQ(ps.OnSent(p, 100, kT0).value(), next[p]++);
  }
}

TEST(PathSetTest, AvoidedPathIsNotPickedWhenAnotherIsUsable) {
  PathSet ps(Opts(4), 1);
  for (int i = 0; i < 100; ++i) {
    const auto p = ps.Pick(kT0, /*avoid=*/2);
    EXPECT_NE(p, 2);
    ps.OnSent(p, 100, kT0);
  }
}

TEST(PathSetTest, AvoidedPathIsPickedWhenItIsTheOnlyUsableOne) {
  PathSet ps(Opts(3), 1);
  PenaliseByLoss(ps, 0, kT0);
  PenaliseByLoss(ps, 1, kT0);
  ASSERT_EQ(ps.healthy_paths(), 1u);
  EXPECT_EQ(ps.Pick(kT0, /*avoid=*/2), 2);
}

TEST(PathSetTest, SingleLossDoesNotPenalise) {
  PathSet ps(Opts(), 1);
  SendOn(ps, 5, kT0);
  EXPECT_EQ(ps.OnLoss(5, kT0), PathEvent::kNone);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kHealthy);
}

TEST(PathSetTest, ThreeLossesWithoutAnAckPenalise) {
  PathSet ps(Opts(), 1);
  for (int i = 0; i < 3; ++i) SendOn(ps, 5, kT0);
  EXPECT_EQ(ps.OnLoss(5, kT0), PathEvent::kNone);
  EXPECT_EQ(ps.OnLoss(5, kT0), PathEvent::kNone);
  EXPECT_EQ(ps.OnLoss(5, kT0), PathEvent::kPenalised);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kPenalised);
  EXPECT_EQ(ps.healthy_paths(), 15u);
  EXPECT_EQ(ps.total_penalties(), 1u);
}

TEST(PathSetTest, AnAckBetweenLossesClearsTheBurst) {
  PathSet ps(Opts(), 1);
  for (int i = 0; i < 6; ++i) SendOn(ps, 5, kT0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ps.OnLoss(5, kT0), PathEvent::kNone);
    ps.OnAcked(5, 1000, kT0);
  }
  EXPECT_EQ(ps.stats(5).health, PathHealth::kHealthy);
}

// One ack can report a path's deliveries and, after them, several of its
// losses (the gap rule runs once the acked packets are counted): scattered
// losses must not add up to a burst then, consecutive ones must.
TEST(PathSetTest, LossesWithDeliveriesBetweenThemDoNotBurstWhenReportedAtOnce) {
  PathSet ps(Opts(), 1);
  std::vector<wire::PathSeq> seq;
  for (int i = 0; i < 6; ++i) seq.push_back(SendOn(ps, 5, kT0));
  for (int i : {1, 3, 5}) ps.OnAcked(5, seq[i], 1000, kT0);
  for (int i : {0, 2, 4})
    EXPECT_EQ(ps.OnLoss(5, seq[i], kT0), PathEvent::kNone);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kHealthy);
}

TEST(PathSetTest, ConsecutiveLossesReportedAfterALaterDeliveryBurst) {
  PathSet ps(Opts(), 1);
  std::vector<wire::PathSeq> seq;
  for (int i = 0; i < 4; ++i) seq.push_back(SendOn(ps, 5, kT0));
  ps.OnAcked(5, seq[3], 1000, kT0);
  EXPECT_EQ(ps.OnLoss(5, seq[0], kT0), PathEvent::kNone);
  EXPECT_EQ(ps.OnLoss(5, seq[1], kT0), PathEvent::kNone);
  EXPECT_EQ(ps.OnLoss(5, seq[2], kT0), PathEvent::kPenalised);
}

TEST(PathSetTest, TwoTimeoutsPenalise) {
  PathSet ps(Opts(), 1);
  SendOn(ps, 5, kT0);
  SendOn(ps, 5, kT0);
  EXPECT_EQ(ps.OnTimeout(5, kT0), PathEvent::kNone);
  EXPECT_EQ(ps.OnTimeout(5, kT0), PathEvent::kPenalised);
  EXPECT_EQ(ps.stats(5).timeouts, 2u);
}

TEST(PathSetTest, PenalisedPathGetsNoNewData) {
  PathSet ps(Opts(), 1);
  PenaliseByLoss(ps, 5, kT0);
  ExpectNeverPicked(ps, 5, kT0 + DurationNs::Micros(100), 1000);
}

TEST(PathSetTest, PenaltyExpiryMovesPathToProbingAtNextTimerTime) {
  PathSet ps(Opts(), 1);
  EXPECT_EQ(ps.NextTimerTime(), TimeNs::Infinite());
  PenaliseByLoss(ps, 5, kT0);
  EXPECT_EQ(ps.NextTimerTime(), kT0 + DurationNs::Micros(500));
  ps.OnTimer(kT0 + DurationNs::Micros(499));
  EXPECT_EQ(ps.stats(5).health, PathHealth::kPenalised);
  ps.OnTimer(kT0 + DurationNs::Micros(500));
  EXPECT_EQ(ps.stats(5).health, PathHealth::kProbing);
  EXPECT_EQ(ps.NextTimerTime(), TimeNs::Infinite());
}

TEST(PathSetTest, ProbingPathCarriesAtMostOnePacketUntilAcked) {
  PathSet ps(Opts(), 1);
  PenaliseByLoss(ps, 5, kT0);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  ps.OnTimer(t);
  EXPECT_EQ(PicksHoldingOnePath(ps, 5, t, 1000), 1);
  EXPECT_EQ(ps.stats(5).in_flight, 1u);
  EXPECT_EQ(ps.stats(5).probes_sent, 1u);
  ps.OnAcked(5, 100, t);  // the probe got through
  EXPECT_EQ(ps.stats(5).health, PathHealth::kHealthy);
  EXPECT_EQ(ps.healthy_paths(), 16u);
  int again = 0;
  for (int i = 0; i < 160; ++i) {
    const auto p = ps.Pick(t);
    ps.OnSent(p, 100, t);
    again += p == 5;
  }
  // Its share again (1/16), a little more while it holds fewer packets
  // than the others (two choices).
  EXPECT_GE(again, 10);
  EXPECT_LE(again, 20);
}

// OnSentRun is OnSent `count` times: on a healthy path, and on a probing
// one, whose probe is the run's first packet (the rest of the run are
// ordinary packets: discarding the first's outcome lets the path probe
// again, discarding a later one does not).
TEST(PathSetTest, ARunIsTheSameAsItsPacketsSentOneByOne) {
  PathSet runs(Opts(), 1), single(Opts(), 1);
  PenaliseByLoss(runs, 5, kT0);
  PenaliseByLoss(single, 5, kT0);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  runs.OnTimer(t);
  single.OnTimer(t);
  ASSERT_EQ(runs.stats(5).health, PathHealth::kProbing);
  wire::PathSeq first5;
  for (const wire::PathId p : {wire::PathId{3}, wire::PathId{5}}) {
    const wire::PathSeq first = runs.OnSentRun(p, 1000, 7, t);
    for (uint32_t i = 0; i < 7; ++i) {
      EXPECT_EQ(single.OnSent(p, 1000, t), first + i);
    }
    const PathStats& a = runs.stats(p);
    const PathStats& b = single.stats(p);
    EXPECT_EQ(a.packets_sent, b.packets_sent);
    EXPECT_EQ(a.bytes_sent, b.bytes_sent);
    EXPECT_EQ(a.in_flight, b.in_flight);
    EXPECT_EQ(a.probes_sent, b.probes_sent);
    first5 = first;
  }
  EXPECT_EQ(runs.stats(5).probes_sent, 1u);
  EXPECT_EQ(runs.stats(5).in_flight, 7u);
  for (PathSet* ps : {&runs, &single}) {
    ps->OnDiscarded(5, first5 + 1);  // not the probe: still one in flight
    EXPECT_EQ(ps->OnSentRun(5, 1000, 1, t), first5 + 7);
    EXPECT_EQ(ps->stats(5).probes_sent, 1u);
    ps->OnDiscarded(5, first5);  // the probe: the next packet probes again
    ps->OnSentRun(5, 1000, 1, t);
    EXPECT_EQ(ps->stats(5).probes_sent, 2u);
  }
}

// OnAckedRun is OnAcked for each packet of the run, in order: in-flight
// slots, forgiveness of earlier penalties (clean acks), and the decay of a
// path's loss rate, seen through when the rate rule penalises it later.
// A run on a probing path is taken one by one (its first ack heals it).
TEST(PathSetTest, AnAckedRunIsTheSameAsItsAcksOneByOne) {
  PathSet runs(Opts(), 1), single(Opts(), 1);
  TimeNs t = kT0;
  for (PathSet* ps : {&runs, &single}) {
    PenaliseByLoss(*ps, 5, t);  // a loss rate, one penalty to forgive
    ps->OnTimer(t + DurationNs::Micros(500));
    ASSERT_EQ(ps->stats(5).health, PathHealth::kProbing);
  }
  t = t + DurationNs::Micros(500);
  // A run on the probing path: healed by its first ack, in both.
  wire::PathSeq first = runs.OnSentRun(5, 100, 4, t);
  ASSERT_EQ(single.OnSentRun(5, 100, 4, t), first);
  runs.OnAckedRun(5, first, 4, 100, t);
  for (uint32_t i = 0; i < 4; ++i) single.OnAcked(5, first + i, 100, t);
  // One loss on the healed path (whose rate restarted from the others'
  // mean, 0), then runs on it: as many clean acks as forgiveness takes,
  // each decaying the rate.
  for (PathSet* ps : {&runs, &single}) {
    ps->OnLoss(5, ps->OnSentRun(5, 100, 1, t), t);
    ASSERT_EQ(ps->stats(5).health, PathHealth::kHealthy);
  }
  for (int r = 0; r < 2; ++r) {
    first = runs.OnSentRun(5, 100, 40, t);
    ASSERT_EQ(single.OnSentRun(5, 100, 40, t), first);
    runs.OnAckedRun(5, first, 40, 100, t);
    for (uint32_t i = 0; i < 40; ++i) single.OnAcked(5, first + i, 100, t);
  }
  for (const PathSet* ps : {&runs, &single}) {
    EXPECT_EQ(ps->stats(5).health, PathHealth::kHealthy);
    EXPECT_EQ(ps->stats(5).in_flight, 0u);
    EXPECT_EQ(ps->stats(5).packets_acked, 84u);
    EXPECT_EQ(ps->stats(5).packets_lost, 4u);
  }
  // Every other packet lost from here: the rate rule penalises both after
  // the same number of losses (their rates decayed alike), and neither
  // recycles (the earlier penalty was forgiven in both).
  const wire::Entropy e = runs.entropy(5);
  int losses[2] = {0, 0};
  PathSet* sets[2] = {&runs, &single};
  for (int k = 0; k < 2; ++k) {
    PathSet& ps = *sets[k];
    while (ps.stats(5).health == PathHealth::kHealthy && losses[k] < 1000) {
      const wire::PathSeq s = ps.OnSentRun(5, 100, 2, t);
      ps.OnAcked(5, s, 100, t);
      ps.OnLoss(5, s + 1, t);
      ++losses[k];
    }
  }
  EXPECT_LT(losses[0], 1000);
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(runs.stats(5).health, PathHealth::kPenalised);
  EXPECT_EQ(runs.entropy(5), e);
  EXPECT_EQ(single.entropy(5), e);
}

TEST(PathSetTest, ProbeIsPickedEvenWhenPathHadPacketsInFlight) {
  // In-flight packets from before the penalty are stale: they neither block
  // the probe nor count as its failure.
  PathSet ps(Opts(), 1);
  for (int i = 0; i < 5; ++i) SendOn(ps, 5, kT0);
  for (int i = 0; i < 3; ++i) ps.OnLoss(5, kT0);
  ASSERT_EQ(ps.stats(5).health, PathHealth::kPenalised);
  ASSERT_EQ(ps.stats(5).in_flight, 2u);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  SendOn(ps, 5, t);  // Pick expires the penalty lazily; this is the probe
  EXPECT_EQ(ps.stats(5).probes_sent, 1u);
  EXPECT_EQ(ps.OnLoss(5, t), PathEvent::kNone);  // stale
  EXPECT_EQ(ps.OnLoss(5, t), PathEvent::kNone);  // stale
  EXPECT_EQ(ps.stats(5).health, PathHealth::kProbing);
  ps.OnAcked(5, 100, t);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kHealthy);
}

TEST(PathSetTest, FailedProbePenalisesForDoubleTheTime) {
  PathSetOptions o = Opts();
  o.recycle_after = 3;
  PathSet ps(o, 1);
  PenaliseByLoss(ps, 5, kT0);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  SendOn(ps, 5, t);
  EXPECT_EQ(ps.OnLoss(5, t), PathEvent::kPenalised);
  EXPECT_EQ(ps.NextTimerTime(), t + DurationNs::Micros(1000));
  EXPECT_EQ(ps.stats(5).penalties, 2u);
}

TEST(PathSetTest, ConsecutivePenaltiesRecycleToAFreshEntropy) {
  PathSet ps(Opts(), 1);
  const auto old = ps.entropy(5);
  PenaliseByLoss(ps, 5, kT0);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  const wire::PathSeq probe_seq = SendOn(ps, 5, t);
  EXPECT_EQ(ps.OnLoss(5, t), PathEvent::kRecycled);
  EXPECT_NE(ps.entropy(5), old);
  for (wire::PathId p = 0; p < 16; ++p) {
    if (p != 5) {
      EXPECT_NE(ps.entropy(p), ps.entropy(5));
    }
  }
  EXPECT_EQ(ps.stats(5).health, PathHealth::kProbing);
  EXPECT_EQ(ps.stats(5).recycles, 1u);
  EXPECT_EQ(ps.total_recycles(), 1u);
  // The per-path sequence keeps counting across the recycle.
  EXPECT_EQ(SendOn(ps, 5, t), probe_seq + 1);
}

TEST(PathSetTest, RecycleFindsTheOnlyUnusedEntropyInATightSpace) {
  PathSetOptions o = Opts();
  o.entropy_space = 17;  // exactly one value is unused at any time
  o.recycle_after = 1;
  PathSet ps(o, 3);
  for (int round = 0; round < 50; ++round) {
    const auto p = static_cast<wire::PathId>(round % 16);
    std::set<wire::Entropy> used;
    for (wire::PathId q = 0; q < 16; ++q) used.insert(ps.entropy(q));
    wire::Entropy unused = 0;
    while (used.count(unused)) ++unused;
    for (int i = 0; i < 3; ++i) ps.OnSent(p, 100, kT0);
    for (int i = 0; i < 2; ++i) ps.OnLoss(p, kT0);
    ASSERT_EQ(ps.OnLoss(p, kT0), PathEvent::kRecycled);
    ASSERT_EQ(ps.entropy(p), unused) << "round " << round;
    ps.OnSent(p, 100, kT0);  // probe
    ps.OnAcked(p, 100, kT0);
    ASSERT_EQ(ps.stats(p).health, PathHealth::kHealthy);
  }
}

TEST(PathSetTest, StaleLossesAfterRecycleDoNotCountAgainstTheNewEntropy) {
  PathSetOptions o = Opts();
  o.recycle_after = 1;
  PathSet ps(o, 1);
  for (int i = 0; i < 10; ++i) SendOn(ps, 5, kT0);
  ps.OnLoss(5, kT0);
  ps.OnLoss(5, kT0);
  ASSERT_EQ(ps.OnLoss(5, kT0), PathEvent::kRecycled);
  // The caller declares the 7 packets still in flight lost.
  for (int i = 0; i < 7; ++i) EXPECT_EQ(ps.OnLoss(5, kT0), PathEvent::kNone);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kProbing);
  EXPECT_EQ(ps.stats(5).in_flight, 0u);
  EXPECT_EQ(ps.stats(5).recycles, 1u);
}

// The fabric blackhole flake: outcomes that never come (a copy
// superseded by a tail probe or a re-send) used to stay counted in flight;
// on the next probe those phantom packets were "stale" and swallowed the
// probe's own ack, so the path stayed probing for good.
// Sends five packets on path 5 and penalises it by losing the first three
// (named by seq); returns the five seqs.
std::vector<wire::PathSeq> FiveSentThreeLost(PathSet& ps) {
  std::vector<wire::PathSeq> seqs;
  for (int i = 0; i < 5; ++i) seqs.push_back(SendOn(ps, 5, kT0));
  for (int i = 0; i < 3; ++i) ps.OnLoss(5, seqs[i], kT0);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kPenalised);
  return seqs;
}

TEST(PathSetTest, ProbeAckCountsEvenIfOlderOutcomesNeverCome) {
  PathSet ps(Opts(), 1);
  FiveSentThreeLost(ps);
  // seqs[3] and seqs[4] never get an outcome.
  const TimeNs t = kT0 + DurationNs::Micros(500);
  const wire::PathSeq probe = SendOn(ps, 5, t);
  EXPECT_EQ(ps.stats(5).in_flight, 1u);  // only the probe
  ps.OnAcked(5, probe, 100, t);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kHealthy);
  EXPECT_EQ(ps.stats(5).in_flight, 0u);
}

TEST(PathSetTest, StaleOutcomesBySeqNeitherFailNorPassTheProbe) {
  PathSet ps(Opts(), 1);
  const std::vector<wire::PathSeq> seqs = FiveSentThreeLost(ps);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  const wire::PathSeq probe = SendOn(ps, 5, t);
  // Outcomes of packets sent before the probe, in any order.
  ps.OnAcked(5, seqs[4], 100, t);
  EXPECT_EQ(ps.OnLoss(5, seqs[3], t), PathEvent::kNone);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kProbing);
  EXPECT_EQ(ps.stats(5).in_flight, 1u);
  EXPECT_EQ(ps.OnLoss(5, probe, t), PathEvent::kRecycled);  // 2nd penalty
}

TEST(PathSetTest, AProbeWhoseOutcomeIsDiscardedIsSentAgain) {
  PathSet ps(Opts(), 1);
  PenaliseByLoss(ps, 5, kT0);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  const wire::PathSeq probe = SendOn(ps, 5, t);
  ASSERT_EQ(ps.stats(5).probes_sent, 1u);
  // The probe's copy was superseded (say, by a tail probe elsewhere).
  ps.OnDiscarded(5, probe);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kProbing);
  SendOn(ps, 5, t);
  EXPECT_EQ(ps.stats(5).probes_sent, 2u);
}

TEST(PathSetTest, LateArrivalMakesAProbingPathHealthyWithoutFreeingASlot) {
  PathSet ps(Opts(), 1);
  PenaliseByLoss(ps, 5, kT0);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  const wire::PathSeq probe = SendOn(ps, 5, t);
  ps.OnLoss(5, probe, t);  // the probe "failed" (second penalty: recycled)
  ASSERT_EQ(ps.stats(5).health, PathHealth::kProbing);
  const wire::PathSeq again = SendOn(ps, 5, t);
  ASSERT_EQ(ps.stats(5).in_flight, 1u);
  ps.OnLateArrival(5, again, t);  // it was only slow, and was given up on
  EXPECT_EQ(ps.stats(5).health, PathHealth::kHealthy);
  EXPECT_EQ(ps.stats(5).in_flight, 1u);
}

TEST(PathSetTest, WithoutASpareEntropyARecycleIsALongerPenalty) {
  // As many paths as entropy values (e.g. 16 paths over 16 source ports):
  // recycling cannot change the route, so the path must not be probed at
  // once (which would send a packet into the same dead route every time).
  PathSetOptions o = Opts(4);
  o.entropy_space = 4;
  PathSet ps(o, 1);
  const wire::Entropy old = ps.entropy(2);
  PenaliseByLoss(ps, 2, kT0);
  TimeNs t = kT0 + DurationNs::Micros(500);
  const wire::PathSeq probe = SendOn(ps, 2, t);
  EXPECT_EQ(ps.OnLoss(2, probe, t), PathEvent::kPenalised);
  EXPECT_EQ(ps.entropy(2), old);
  EXPECT_EQ(ps.stats(2).recycles, 0u);
  EXPECT_EQ(ps.stats(2).health, PathHealth::kPenalised);
  EXPECT_EQ(ps.NextTimerTime(), t + DurationNs::Micros(1000));
  ExpectNeverPicked(ps, 2, t + DurationNs::Micros(999), 100);
}

// A path that cannot be recycled (no spare entropy) behind a route that
// keeps failing: every probe it is given is lost. Its penalty keeps
// doubling, so over two seconds it takes a handful of probes, not one
// every 16 ms (each probe is a message's datagram sent into the bad route;
// docs/protocol.md gap 19).
TEST(PathSetTest, AnUnrecyclablePathWhoseProbesKeepFailingIsProbedRarely) {
  PathSetOptions o = Opts(4);
  o.entropy_space = 4;
  PathSet ps(o, 1);
  PenaliseByLoss(ps, 2, kT0);
  const TimeNs end = kT0 + DurationNs::Seconds(2);
  int probes = 0;
  for (TimeNs t = kT0; t < end; t += DurationNs::Micros(100)) {
    ps.OnTimer(t);
    if (ps.stats(2).health != PathHealth::kProbing) continue;
    const wire::PathSeq probe = SendOn(ps, 2, t);
    ++probes;
    ps.OnLoss(2, probe, t);  // the route eats it
  }
  EXPECT_EQ(ps.stats(2).recycles, 0u);
  EXPECT_GE(probes, 8);   // it is still tried: the route may come back
  EXPECT_LE(probes, 20);  // 16 ms apart would be ~125
}

TEST(PathSetTest, ARetransmissionPrefersAHealthyPathToAProbe) {
  PathSet ps(Opts(4), 1);
  PenaliseByLoss(ps, 1, kT0);
  const TimeNs t = kT0 + DurationNs::Micros(500);
  ps.OnTimer(t);
  ASSERT_EQ(ps.stats(1).health, PathHealth::kProbing);
  for (int i = 0; i < 40; ++i) {
    const auto p = ps.Pick(t, -1, /*healthy_only=*/true);
    EXPECT_NE(p, 1);
    ps.OnAcked(p, ps.OnSent(p, 100, t), 100, t);
  }
  // With no healthy path left, it still gets a path.
  PathSet one(Opts(2), 1);
  PenaliseByLoss(one, 0, kT0);
  PenaliseByLoss(one, 1, kT0);
  one.OnTimer(t);
  EXPECT_LT(one.Pick(t, -1, true), 2);
}

TEST(PathSetTest, BlackholedPathStopsCarryingDataWithinAFewRtts) {
  PathSet ps(Opts(), 11);
  const wire::Entropy bad = ps.entropy(3);
  FakeFabric fab(&ps, 5, kRtt);
  fab.blackholed = [bad](wire::Entropy e) { return e == bad; };
  TimeNs now = kT0;
  TimeNs first_penalty = TimeNs::Infinite();
  int after_penalty_on_bad = 0, probes_on_bad = 0;
  fab.on_send = [&](wire::PathId p, wire::Entropy e, PathHealth h) {
    if (e != bad || first_penalty == TimeNs::Infinite()) return;
    ++after_penalty_on_bad;
    probes_on_bad += h == PathHealth::kProbing;
  };
  fab.Run(&now, kT0 + DurationNs::Millis(5), DurationNs::Nanos(100), [&] {
    if (first_penalty == TimeNs::Infinite() && ps.stats(3).penalties > 0) {
      first_penalty = now;
    }
  });
  // Losses are noticed 2 RTTs after the send; penalised right after.
  EXPECT_LE(first_penalty, kT0 + kRtt * 3);
  // After the penalty the bad entropy only ever saw single probes.
  EXPECT_EQ(after_penalty_on_bad, probes_on_bad);
  EXPECT_LE(after_penalty_on_bad, 1);
  // ...and the path was recycled onto a working entropy that carries data.
  EXPECT_NE(ps.entropy(3), bad);
  EXPECT_EQ(ps.stats(3).recycles, 1u);
  EXPECT_EQ(ps.stats(3).health, PathHealth::kHealthy);
  EXPECT_EQ(ps.healthy_paths(), 16u);
}

TEST(PathSetTest, PathWhoseEveryEntropyIsBlackholedKeepsBeingRecycled) {
  // A dead link behind path 3 whatever entropy it gets: the path keeps
  // being penalised/recycled, carrying only probes.
  PathSet ps(Opts(4), 1);
  FakeFabric fab(&ps, 5, kRtt);
  std::set<wire::Entropy> dead;
  auto refresh = [&] { dead.insert(ps.entropy(3)); };
  refresh();
  fab.blackholed = [&](wire::Entropy e) { return dead.count(e) > 0; };
  uint64_t data_on_dead = 0;
  fab.on_send = [&](wire::PathId p, wire::Entropy, PathHealth h) {
    if (p == 3 && h == PathHealth::kHealthy && ps.stats(3).penalties > 0) {
      ++data_on_dead;
    }
  };
  TimeNs now = kT0;
  fab.Run(&now, kT0 + DurationNs::Millis(20), DurationNs::Nanos(100), refresh);
  EXPECT_GE(ps.stats(3).recycles, 3u);
  EXPECT_EQ(data_on_dead, 0u);
  EXPECT_LT(ps.stats(3).packets_sent, fab.sent() / 100);
}

TEST(PathSetTest, OnePercentRandomLossKeepsMostPathsHealthy) {
  for (uint64_t seed : {1, 2, 3}) {
    PathSet ps(Opts(), seed);
    FakeFabric fab(&ps, seed * 77, kRtt);
    fab.loss_prob = [](wire::Entropy) { return 0.01; };
    TimeNs now = kT0;
    uint64_t samples = 0, healthy_sum = 0;
    fab.Run(&now, kT0 + DurationNs::Millis(50), DurationNs::Nanos(100), [&] {
      ++samples;
      healthy_sum += ps.healthy_paths();
    });
    const double avg = static_cast<double>(healthy_sum) / samples;
    EXPECT_GE(avg, 14.0) << "seed " << seed;
    EXPECT_GT(ps.stats(0).packets_lost, 200u);  // ~31k sent per path
  }
}

TEST(PathSetTest, GreyPathWithHeavyLossIsPenalised) {
  PathSet ps(Opts(), 4);
  const wire::Entropy grey = ps.entropy(7);
  FakeFabric fab(&ps, 9, kRtt);
  fab.loss_prob = [grey](wire::Entropy e) { return e == grey ? 0.15 : 0.01; };
  TimeNs now = kT0;
  fab.Run(&now, kT0 + DurationNs::Millis(10), DurationNs::Nanos(100));
  EXPECT_GE(ps.stats(7).penalties, 1u);
  EXPECT_NE(ps.entropy(7), grey);  // eventually recycled off the grey route
}

TEST(PathSetTest, EcnHotSpotPathIsPenalisedButLaterThanLoss) {
  PathSet ps(Opts(), 1);
  const TimeNs t = kT0;
  int marks = 0;
  PathEvent ev = PathEvent::kNone;
  while (ev == PathEvent::kNone && marks < 1000) {
    for (int i = 0; i < 16; ++i) {
      const auto p = ps.Pick(t);
      ps.OnSent(p, 100, t);
      ps.OnAcked(p, 100, t);
      if (p == 9) {
        ++marks;
        ev = ps.OnEcn(9, t);
      }
    }
  }
  EXPECT_EQ(ev, PathEvent::kPenalised);
  EXPECT_GT(marks, 3);   // a loss burst needs only 3
  EXPECT_LT(marks, 64);  // but a hot spot is still found quickly
  EXPECT_EQ(ps.NextTimerTime(), t + DurationNs::Micros(250));  // shorter
}

TEST(PathSetTest, UniformEcnMarkingPenalisesNobody) {
  PathSet ps(Opts(), 1);
  FakeFabric fab(&ps, 9, kRtt);
  fab.ce_prob = [](wire::Entropy) { return 0.8; };
  TimeNs now = kT0;
  fab.Run(&now, kT0 + DurationNs::Millis(5), DurationNs::Nanos(100));
  EXPECT_EQ(ps.total_penalties(), 0u);
  EXPECT_GT(ps.stats(0).ecn_marks, 1000u);
}

TEST(PathSetTest, WhenEveryPathIsPenalisedPickStillReturnsAPath) {
  PathSet ps(Opts(4), 1);
  for (wire::PathId p = 0; p < 4; ++p) {
    for (int i = 0; i < 3; ++i) ps.OnSent(p, 100, kT0);
    for (int i = 0; i < 3; ++i) ps.OnLoss(p, kT0 + DurationNs::Nanos(p));
  }
  ASSERT_EQ(ps.healthy_paths(), 0u);
  // Least bad: the penalty that expires first.
  EXPECT_EQ(ps.Pick(kT0 + DurationNs::Micros(1)), 0);
  EXPECT_EQ(ps.Pick(kT0 + DurationNs::Micros(1), /*avoid=*/0), 1);
}

TEST(PathSetTest, PathHoggingInFlightIsSkipped) {
  PathSet ps(Opts(4), 1);
  // Path 0's packets are never acked (slow path); others are acked at once.
  int on0 = 0;
  for (int i = 0; i < 400; ++i) {
    const auto p = ps.Pick(kT0);
    ps.OnSent(p, 100, kT0);
    if (p == 0) {
      ++on0;
    } else {
      ps.OnAcked(p, 100, kT0);
    }
  }
  // Mean in flight stays tiny, so path 0 is held near the slack (4):
  // at most 2 * (9 / 4) + 4 = 8.5.
  EXPECT_LE(ps.stats(0).in_flight, 9u);
  EXPECT_EQ(on0, static_cast<int>(ps.stats(0).in_flight));
}

TEST(PathSetTest, SinglePathIsNeverPenalised) {
  PathSet ps(Opts(1), 1);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(ps.Pick(kT0, 0), 0);
    ps.OnSent(0, 100, kT0);
    EXPECT_EQ(ps.OnLoss(0, kT0), PathEvent::kNone);
  }
  EXPECT_EQ(ps.stats(0).health, PathHealth::kHealthy);
}

TEST(PathSetTest, SameSeedGivesSameBehaviour) {
  auto run = [](uint64_t seed) {
    PathSetOptions o = Opts();
    o.recycle_after = 1;
    PathSet ps(o, seed);
    FakeFabric fab(&ps, 5, kRtt);
    fab.loss_prob = [](wire::Entropy e) { return e % 3 == 0 ? 0.5 : 0.0; };
    TimeNs now = kT0;
    fab.Run(&now, kT0 + DurationNs::Millis(2), DurationNs::Nanos(100));
    std::vector<uint32_t> out;
    for (wire::PathId p = 0; p < 16; ++p) {
      out.push_back(ps.entropy(p));
      out.push_back(static_cast<uint32_t>(ps.stats(p).packets_sent));
    }
    out.push_back(static_cast<uint32_t>(ps.total_recycles()));
    return out;
  };
  const auto a = run(42);
  EXPECT_EQ(a, run(42));
  EXPECT_NE(a, run(43));
  EXPECT_GT(a.back(), 0u);  // the scenario did recycle
}

TEST(PathSetTest, CleanAcksForgiveEarlierPenalties) {
  PathSet ps(Opts(), 1);
  PenaliseByLoss(ps, 5, kT0);
  TimeNs t = kT0 + DurationNs::Micros(500);
  SendOn(ps, 5, t);
  ps.OnAcked(5, 100, t);  // probe ok
  for (int i = 0; i < 64; ++i) {
    SendOn(ps, 5, t);
    ps.OnAcked(5, 100, t);
  }
  const auto e = ps.entropy(5);
  EXPECT_EQ((PenaliseByLoss(ps, 5, t), ps.stats(5).health),
            PathHealth::kPenalised);
  EXPECT_EQ(ps.entropy(5), e);  // not recycled: the count was forgiven
}

TEST(PathSetTest, ResetRestartsSequencesAndKeepsEntropies) {
  PathSet ps(Opts(4), 1);
  std::vector<wire::Entropy> before;
  for (wire::PathId p = 0; p < 4; ++p) before.push_back(ps.entropy(p));
  for (int i = 0; i < 10; ++i) ps.OnSent(ps.Pick(kT0), 100, kT0);
  ps.Reset();
  for (wire::PathId p = 0; p < 4; ++p) {
    EXPECT_EQ(ps.entropy(p), before[p]);
    EXPECT_EQ(ps.stats(p).in_flight, 0u);
  }
  const auto p = ps.Pick(kT0);
  EXPECT_EQ(ps.OnSent(p, 100, kT0).value(), 0u);
}

// Feeds `rounds` rounds of one acked packet per path, path p's RTT given by
// rtt_us(p); returns the events the delay rule produced per path.
template <typename F>
std::vector<PathEvent> FeedRtts(PathSet& ps, int rounds, F rtt_us) {
  std::vector<PathEvent> ev(ps.size(), PathEvent::kNone);
  TimeNs t = kT0;
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < ps.size(); ++i) {
      const auto p = static_cast<wire::PathId>(i);
      if (ps.stats(p).health != PathHealth::kHealthy) continue;
      const wire::PathSeq s = ps.OnSent(p, 100, t);
      ps.OnAcked(p, s, 100, t);
      const PathEvent e = ps.OnRttSample(p, DurationNs::Micros(rtt_us(p)), t);
      if (e != PathEvent::kNone) ev[i] = e;
    }
    t = t + DurationNs::Micros(10);
  }
  return ev;
}

TEST(PathSetTest, DelayHotSpotIsPenalisedAndSteeredAway) {
  PathSet ps(Opts(8), 1);
  const auto ev =
      FeedRtts(ps, 40, [](wire::PathId p) { return p == 3 ? 400 : 40; });
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(ev[i] != PathEvent::kNone, i == 3) << "path " << i;
  }
  EXPECT_EQ(ps.stats(3).delay_penalties, 1u);
  EXPECT_TRUE(ps.SteeredAway(3));
  EXPECT_FALSE(ps.SteeredAway(0));
}

TEST(PathSetTest, SharedBottleneckPenalisesNobody) {
  // Every path slow (the receiver's downlink queues): congestion control's
  // job, not a path's fault.
  PathSet ps(Opts(8), 1);
  const auto ev = FeedRtts(ps, 40, [](wire::PathId p) { return 400 + p; });
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(ev[i], PathEvent::kNone);
  for (wire::PathId p = 0; p < 8; ++p) EXPECT_FALSE(ps.SteeredAway(p));
  EXPECT_FALSE(ps.HotSample(0, DurationNs::Micros(420)));
}

TEST(PathSetTest, SmallDelayDifferencesAreNotHotSpots) {
  // Twice the others' RTT but within the margin (50 us): normal variation.
  PathSet ps(Opts(8), 1);
  const auto ev =
      FeedRtts(ps, 40, [](wire::PathId p) { return p == 5 ? 60 : 20; });
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(ev[i], PathEvent::kNone);
  EXPECT_FALSE(ps.SteeredAway(5));
}

TEST(PathSetTest, OneHotSampleIsPathLocalBeforeTheSmoothedRttCatchesUp) {
  // Every path at 40 us; then one sample of 400 us from path 2, whose
  // smoothed RTT is still far below the hot-spot threshold.
  PathSet ps(Opts(8), 1);
  FeedRtts(ps, 40, [](wire::PathId) { return 40; });
  EXPECT_FALSE(ps.SteeredAway(2));
  EXPECT_TRUE(ps.HotSample(2, DurationNs::Micros(400)));
  // Within the factor, or within the margin: ordinary variation.
  EXPECT_FALSE(ps.HotSample(2, DurationNs::Micros(70)));
  EXPECT_FALSE(ps.HotSample(2, DurationNs::Micros(85)));
  EXPECT_FALSE(ps.HotSample(99, DurationNs::Micros(400)));  // no such path
}

TEST(PathSetTest, HotSamplesNeedAMedianAndMostPathsHealthy) {
  PathSet fresh(Opts(8), 1);  // no samples yet: nothing to compare with
  EXPECT_FALSE(fresh.HotSample(0, DurationNs::Millis(5)));
  PathSet two(Opts(2), 1);  // too few paths to tell a path from the rest
  FeedRtts(two, 40, [](wire::PathId) { return 40; });
  EXPECT_FALSE(two.HotSample(0, DurationNs::Micros(400)));
  PathSetOptions o = Opts(8);
  o.delay_factor = 0;  // the delay rule off
  PathSet off(o, 1);
  FeedRtts(off, 40, [](wire::PathId) { return 40; });
  EXPECT_FALSE(off.HotSample(0, DurationNs::Micros(400)));
}

TEST(PathSetTest, AReturnLossMovesThePathToAFreshEntropy) {
  PathSet ps(Opts(8), 1);
  const wire::Entropy before = ps.entropy(5);
  EXPECT_EQ(ps.OnReturnLoss(5, kT0), PathEvent::kRecycled);
  EXPECT_NE(ps.entropy(5), before);
  EXPECT_EQ(ps.stats(5).health, PathHealth::kProbing);
  EXPECT_EQ(ps.stats(5).recycles, 1u);
  for (wire::PathId p = 0; p < 8; ++p) {
    if (p != 5) {
      EXPECT_NE(ps.entropy(p), ps.entropy(5)) << p;  // still distinct
    }
  }
  EXPECT_EQ(ps.OnReturnLoss(99, kT0), PathEvent::kNone);  // no such path
}

TEST(PathSetTest, AReturnLossWithNoFreshEntropyPenalises) {
  PathSetOptions o = Opts(4);
  o.entropy_space = 4;  // every value in use: the route cannot change
  PathSet ps(o, 1);
  EXPECT_EQ(ps.OnReturnLoss(2, kT0), PathEvent::kPenalised);
  EXPECT_EQ(ps.stats(2).health, PathHealth::kPenalised);
  PathSet one(Opts(1), 1);  // a single path is never steered off
  EXPECT_EQ(one.OnReturnLoss(0, kT0), PathEvent::kNone);
}

TEST(PathSetTest, TwoChoicesMoveLoadOffAPathWhosePacketsStayOut) {
  // Path 3's packets never come back (a long queue); the others' are acked
  // at once. With two choices path 3 loses every comparison once it holds
  // a packet; round robin keeps feeding it up to the in-flight limit.
  auto run = [](uint32_t choices) {
    PathSetOptions o = Opts();
    o.spray_choices = choices;
    PathSet ps(o, 1);
    return PicksHoldingOnePath(ps, 3, kT0, 1600);
  };
  EXPECT_EQ(run(2), 1);
  EXPECT_GE(run(1), 4);  // up to 2 x mean + 4 in flight
}

TEST(PathSetTest, LossesCountAsLoadUntilThePathDeliversAgain) {
  // A path whose packets are declared lost holds none in flight, but it
  // must not look empty (a dead route would attract every packet).
  PathSet ps(Opts(), 1);
  SendOn(ps, 5, kT0);
  EXPECT_EQ(ps.OnLoss(5, kT0), PathEvent::kNone);  // one loss: no penalty
  EXPECT_EQ(ps.stats(5).in_flight, 0u);
  ExpectNeverPicked(ps, 5, kT0, 200);  // the others: sent and acked at once
  SendOn(ps, 5, kT0);
  ps.OnAcked(5, 100, kT0);  // delivered: its load is back to none
  int on5 = 0;
  for (int i = 0; i < 160; ++i) {
    const auto p = ps.Pick(kT0);
    ps.OnSent(p, 100, kT0);
    ps.OnAcked(p, 100, kT0);
    on5 += p == 5;
  }
  EXPECT_GE(on5, 10);  // at least its share again
}

TEST(PathSetTest, SprayChoicesOutOfRangeAreClamped) {
  PathSetOptions o = Opts(4);
  o.spray_choices = 0;
  PathSet zero(o, 1);
  EXPECT_EQ(zero.options().spray_choices, 1u);
  o.spray_choices = 100;
  PathSet many(o, 1);
  EXPECT_EQ(many.options().spray_choices, 8u);
}

TEST(PathSetTest, ExploreMovesASilentPathToAFreshEntropyWithoutPenalty) {
  PathSet ps(Opts(8), 1);
  SendOn(ps, 3, kT0);
  const wire::Entropy before = ps.entropy(3);
  EXPECT_EQ(ps.Explore(3), PathEvent::kRecycled);
  EXPECT_NE(ps.entropy(3), before);
  EXPECT_EQ(ps.stats(3).health, PathHealth::kProbing);  // usable: a probe
  EXPECT_EQ(ps.stats(3).in_flight, 0u);  // what went the old way is stale
  EXPECT_EQ(ps.stats(3).recycles, 1u);
  EXPECT_EQ(ps.stats(3).penalties, 0u);
  for (wire::PathId p = 0; p < 8; ++p) {
    if (p != 3) {
      EXPECT_NE(ps.entropy(p), ps.entropy(3)) << p;
    }
  }
  EXPECT_EQ(ps.Explore(99), PathEvent::kNone);  // no such path
}

TEST(PathSetTest, ExploreWithNoFreshEntropyChangesNothing) {
  PathSetOptions o = Opts(4);
  o.entropy_space = 4;  // every value in use: the route cannot change
  PathSet ps(o, 1);
  const wire::Entropy before = ps.entropy(2);
  EXPECT_EQ(ps.Explore(2), PathEvent::kNone);
  EXPECT_EQ(ps.entropy(2), before);
  EXPECT_EQ(ps.stats(2).health, PathHealth::kHealthy);
  EXPECT_EQ(ps.stats(2).penalties, 0u);
  PathSet one(Opts(1), 1);  // a single path has nowhere else to go
  EXPECT_EQ(one.Explore(0), PathEvent::kNone);
}

TEST(PathSetTest, DelayRuleOffWithDelayFactorZero) {
  PathSetOptions o = Opts(8);
  o.delay_factor = 0;
  PathSet ps(o, 1);
  const auto ev =
      FeedRtts(ps, 40, [](wire::PathId p) { return p == 3 ? 400 : 40; });
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(ev[i], PathEvent::kNone);
}

TEST(PathSetTest, OutOfRangePathIsIgnored) {
  PathSet ps(Opts(4), 1);
  EXPECT_EQ(ps.OnLoss(200, kT0), PathEvent::kNone);
  EXPECT_EQ(ps.OnEcn(200, kT0), PathEvent::kNone);
  ps.OnAcked(200, 1, kT0);
  ps.OnRttSample(200, kRtt);
  EXPECT_EQ(ps.stats(200).packets_sent, 0u);
  EXPECT_EQ(ps.entropy(200), 0);
}

TEST(PathSetTest, RttSamplesTrackSmoothedAndMinimum) {
  PathSet ps(Opts(4), 1);
  SendOn(ps, 1, kT0);
  ps.OnAcked(1, 100, kT0);
  ps.OnRttSample(1, DurationNs::Micros(16));
  EXPECT_EQ(ps.stats(1).srtt, DurationNs::Micros(16));
  SendOn(ps, 1, kT0);
  ps.OnAcked(1, 100, kT0);
  ps.OnRttSample(1, DurationNs::Micros(8));
  EXPECT_EQ(ps.stats(1).srtt, DurationNs::Micros(15));
  EXPECT_EQ(ps.stats(1).min_rtt, DurationNs::Micros(8));
}

}  // namespace
}  // namespace braid::multipath

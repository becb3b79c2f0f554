// PathSet::PickHinted (the path of a hinted flow) and the probe whose loss
// is found late (OnLossFoundLate with its sequence).
#include <set>

#include "gtest/gtest.h"
#include "multipath/path_set.h"

namespace braid::multipath {
namespace {

const TimeNs kT0 = TimeNs(1'000'000);
const DurationNs kPenalty = DurationNs::Micros(500);

PathSetOptions Opts(uint16_t n = 16) {
  PathSetOptions o;
  o.num_paths = n;
  return o;
}

// Penalises path p by the burst rule: three consecutive losses.
void PenaliseByLoss(PathSet& ps, wire::PathId p, TimeNs now) {
  for (int i = 0; i < 3; ++i) {
    ps.OnLoss(p, ps.OnSent(p, 1000, now), now);
  }
  ASSERT_EQ(ps.stats(p).health, PathHealth::kPenalised);
}

TEST(PathSetHintTest, AHintNamesPathHintModuloThePathCount) {
  PathSet ps(Opts(16), 1);
  EXPECT_EQ(ps.PickHinted(kT0, 5), 5);
  EXPECT_EQ(ps.PickHinted(kT0, 21), 5);
  EXPECT_EQ(ps.PickHinted(kT0, 16), 0);
  EXPECT_EQ(ps.PickHinted(kT0, 0xFFFFF), 0xFFFFF % 16);
  std::set<int> paths;
  for (uint32_t h = 1; h <= 16; ++h) paths.insert(ps.PickHinted(kT0, h));
  EXPECT_EQ(paths.size(), 16u);
}

TEST(PathSetHintTest, AHintedPathKeepsCarryingHoweverLoaded) {
  PathSet ps(Opts(16), 1);
  // Pick would skip a path this far above the mean in flight.
  for (int i = 0; i < 1000; ++i) ps.OnSent(3, 1000, kT0);
  EXPECT_EQ(ps.PickHinted(kT0, 3), 3);
}

TEST(PathSetHintTest, APenalisedHintedPathIsRefusedUntilItProbes) {
  PathSet ps(Opts(16), 1);
  PenaliseByLoss(ps, 7, kT0);
  EXPECT_EQ(ps.PickHinted(kT0, 7), -1);
  // Expired (lazily, by the call itself): the path probes.
  const TimeNs t = kT0 + kPenalty;
  ASSERT_EQ(ps.PickHinted(t, 7), 7);
  EXPECT_EQ(ps.stats(7).health, PathHealth::kProbing);
  const wire::PathSeq probe = ps.OnSent(7, 1000, t);
  EXPECT_EQ(ps.stats(7).probes_sent, 1u);
  EXPECT_EQ(ps.PickHinted(t, 7), -1);  // one probe at a time
  ps.OnAcked(7, probe, 1000, t);
  EXPECT_EQ(ps.PickHinted(t, 7), 7);
}

TEST(PathSetHintTest, ASinglePathIsEveryHintsPath) {
  PathSet ps(Opts(1), 1);
  for (int i = 0; i < 3; ++i) ps.OnLoss(0, ps.OnSent(0, 1000, kT0), kT0);
  EXPECT_EQ(ps.PickHinted(kT0, 12345), 0);
}

TEST(PathSetHintTest, ADiscardedProbeFoundLostLaterFailsTheProbe) {
  PathSet ps(Opts(16), 1);
  PenaliseByLoss(ps, 7, kT0);
  const TimeNs t = kT0 + kPenalty;
  ASSERT_EQ(ps.PickHinted(t, 7), 7);
  const wire::PathSeq probe = ps.OnSent(7, 1000, t);
  ps.OnDiscarded(7, probe);  // a tail probe re-sent it elsewhere
  ASSERT_EQ(ps.stats(7).health, PathHealth::kProbing);
  const wire::Entropy before = ps.entropy(7);
  // The re-send arrived, the probe never did: the second consecutive
  // penalty recycles the path.
  EXPECT_EQ(ps.OnLossFoundLate(7, probe, t), PathEvent::kRecycled);
  EXPECT_NE(ps.entropy(7), before);
}

TEST(PathSetHintTest, ALateLossOfAnOlderPacketDoesNotFailTheProbe) {
  PathSet ps(Opts(16), 1);
  const wire::PathSeq old = ps.OnSent(7, 1000, kT0);
  PenaliseByLoss(ps, 7, kT0);
  const TimeNs t = kT0 + kPenalty;
  ASSERT_EQ(ps.PickHinted(t, 7), 7);
  const wire::PathSeq probe = ps.OnSent(7, 1000, t);
  ps.OnDiscarded(7, probe);
  EXPECT_EQ(ps.OnLossFoundLate(7, old, t), PathEvent::kNone);
  EXPECT_EQ(ps.stats(7).health, PathHealth::kProbing);
}

}  // namespace
}  // namespace braid::multipath

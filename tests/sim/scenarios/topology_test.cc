// Scenarios on the other topologies and traffic patterns: a k-ary fat-tree
// (healthy, oversubscribed, a core switch or a core link failing mid-run)
// and a leaf-spine with more than two leaves under all-to-all and mixed
// traffic. Each asserts the invariants (exactly-once, byte-exact, every send
// completes) and that the traffic really crossed the top tier.
#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/scenario/scenario.h"
#include "tests/sim/scenarios/scenario_base.h"
#include "tests/sim/scenarios/scenario_checks.h"

namespace braid::sim {
namespace {

// A k = 4 fat-tree: 16 hosts in 4 pods, 4 core switches.
ScenarioConfig FatTree4(uint64_t seed = 1) {
  ScenarioConfig c = ScenarioBase(seed, /*messages_per_sender=*/60);
  c.topology_kind = TopologyKind::kFatTree;
  c.fat_tree.k = 4;
  c.fat_tree.host_link.queue_bytes = 16u << 20;
  c.fat_tree.edge_link.queue_bytes = 512u << 10;
  c.fat_tree.core_link.queue_bytes = 512u << 10;
  c.traffic = Traffic::kPermutation;
  return c;
}

// FatTree4 with 120 messages per sender, in which core switch `core` fails
// 100 us into the run, both ways, for good: every one of its links
// (link < 0), or only its link to pod `link`.
ScenarioConfig FatTree4CoreFailing(uint64_t seed, int core, int link) {
  ScenarioConfig c = FatTree4(seed);
  c.messages_per_sender = 120;
  TimedImpairment t;
  t.spine = core;
  t.link = link;
  t.impairment.blackhole = true;
  t.start = TimeNs::Zero() + DurationNs::Micros(100);
  c.impairments.push_back(t);
  return c;
}

// A leaf-spine with 3 leaves of 3 hosts and 4 spines.
ScenarioConfig ThreeLeaves(uint64_t seed = 1) {
  ScenarioConfig c = ScenarioBase(seed, /*messages_per_sender=*/60);
  c.topology.num_leaves = 3;
  c.topology.hosts_per_leaf = 3;
  c.topology.num_spines = 4;
  c.topology.host_link.queue_bytes = 16u << 20;
  c.topology.fabric_link.queue_bytes = 512u << 10;
  return c;
}

// ExpectClean, and every sender sent all its messages.
void ExpectAllDelivered(const ScenarioConfig& c, const ScenarioResult& r,
                        uint64_t senders) {
  ExpectClean(c, r);
  EXPECT_EQ(r.messages_sent, senders * c.messages_per_sender) << Describe(c, r);
}

// Every top switch carried at least `share` of an equal split.
void ExpectEveryTopSwitchUsed(const ScenarioResult& r, size_t switches,
                              double share) {
  ASSERT_EQ(r.spine_packets.size(), switches);
  uint64_t total = 0;
  for (uint64_t p : r.spine_packets) total += p;
  for (size_t s = 0; s < switches; ++s) {
    EXPECT_GE(static_cast<double>(r.spine_packets[s]),
              share * static_cast<double>(total) / switches)
        << "top switch " << s;
  }
}

TEST(TopologyScenarioTest, ShapeOfGivesTheSizesTheTopologiesBuild) {
  ScenarioConfig f = FatTree4();
  EXPECT_EQ(ShapeOf(f).hosts, 16);
  EXPECT_EQ(ShapeOf(f).top_switches, 4);
  EXPECT_EQ(ShapeOf(f).top_links, 4);
  f.fat_tree.k = 16;
  f.fat_tree.hosts_per_edge = 12;
  EXPECT_EQ(ShapeOf(f).hosts, 16 * 8 * 12);
  EXPECT_EQ(ShapeOf(f).top_switches, 64);
  ScenarioConfig l = ThreeLeaves();
  EXPECT_EQ(ShapeOf(l).hosts, 9);
  EXPECT_EQ(ShapeOf(l).top_switches, 4);
  EXPECT_EQ(ShapeOf(l).top_links, 3);
}

TEST(TopologyScenarioTest, FatTreePermutationDeliversAllOverEveryCore) {
  const ScenarioConfig c = FatTree4(3);
  const ScenarioResult r = RunScenario(c);
  ExpectAllDelivered(c, r, 16);
  ExpectEveryTopSwitchUsed(r, 4, 0.5);
}

TEST(TopologyScenarioTest, OversubscribedFatTreeDeliversEverything) {
  ScenarioConfig c = FatTree4(4);
  c.fat_tree.hosts_per_edge = 4;  // 2:1 at the edge tier, 32 hosts
  const ScenarioResult r = RunScenario(c);
  ExpectAllDelivered(c, r, 32);
}

TEST(TopologyScenarioTest, CoreSwitchFailingMidRunLosesNothing) {
  // Core switch 2: every one of its links.
  const ScenarioConfig c = FatTree4CoreFailing(5, /*core=*/2, /*link=*/-1);
  const ScenarioResult r = RunScenario(c);
  ExpectAllDelivered(c, r, 16);
  EXPECT_GT(r.link_drops, 0u) << "the failure dropped nothing";
  EXPECT_GT(r.path_recycles, 0u) << Describe(c, r);
}

TEST(TopologyScenarioTest, CoreLinkFailingMidRunLosesNothing) {
  // Core 1's link to pod 3 only.
  const ScenarioConfig c = FatTree4CoreFailing(6, /*core=*/1, /*link=*/3);
  const ScenarioResult r = RunScenario(c);
  ExpectAllDelivered(c, r, 16);
  EXPECT_GT(r.link_drops, 0u) << "the failure dropped nothing";
}

TEST(TopologyScenarioTest, AllToAllOnThreeLeavesDeliversEverything) {
  ScenarioConfig c = ThreeLeaves(7);
  c.traffic = Traffic::kAllToAll;
  c.messages_per_sender = 64;  // 8 to each of the 8 other hosts
  const ScenarioResult r = RunScenario(c);
  ExpectAllDelivered(c, r, 9);
  ExpectEveryTopSwitchUsed(r, 4, 0.5);
}

TEST(TopologyScenarioTest, MixRunsIncastBesideABackgroundPermutation) {
  ScenarioConfig c = ThreeLeaves(8);
  c.traffic = Traffic::kMix;
  c.incast = 3;  // hosts 1..3 to host 0; hosts 4..8 among themselves
  const ScenarioResult r = RunScenario(c);
  ExpectAllDelivered(c, r, 8);
}

TEST(TopologyScenarioTest, ImpairmentOfAMissingLinkChangesNothing) {
  ScenarioConfig c = ThreeLeaves(9);
  c.traffic = Traffic::kPermutation;
  TimedImpairment t;
  t.spine = 0;
  t.link = 7;  // there are 3 leaves
  t.impairment.blackhole = true;
  c.impairments.push_back(t);
  const ScenarioResult r = RunScenario(c);
  ExpectAllDelivered(c, r, 9);
  EXPECT_EQ(r.link_drops, 0u);
}

}  // namespace
}  // namespace braid::sim

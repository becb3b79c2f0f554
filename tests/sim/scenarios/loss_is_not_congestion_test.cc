// Congestion control in the simulated fabric: loss without a queueing signal
// (random or burst loss on every spine) neither fails messages nor costs
// Swift much goodput against no congestion control at all, while a real
// bottleneck (incast) is still held: its queue stays bounded and drops
// nothing. Ratios of runs in the same scenario; no wall-clock timing.
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/scenario/scenario.h"

namespace braid::sim {
namespace {

// braid-sim's defaults: 2 leaves, 4 spines, 100 Gbit/s, 512 KiB fabric
// queues, 16 MiB host queues, 64 KiB messages, 16 outstanding per sender.
ScenarioConfig Fabric(int hosts, uint32_t messages, uint64_t seed) {
  ScenarioConfig c;
  c.topology.hosts_per_leaf = hosts / 2;
  c.topology.host_link.queue_bytes = 16u << 20;
  c.topology.fabric_link.queue_bytes = 512u << 10;
  c.protocol.peer_timeout = DurationNs::Millis(50);
  c.protocol.min_rto = DurationNs::Micros(200);
  c.messages_per_sender = messages;
  c.seed = seed;
  return c;
}

void LossOnEverySpine(ScenarioConfig* c, const sim::Impairment& imp) {
  TimedImpairment t;
  t.spine = -1;
  t.impairment = imp;
  c->impairments.push_back(t);
}

// Sum of goodput over `seeds` with Swift and with no congestion control;
// every Swift run must complete every message.
void ExpectSwiftKeepsUp(ScenarioConfig c, std::initializer_list<uint64_t> seeds,
                        double at_least) {
  double swift = 0, none = 0;
  for (uint64_t seed : seeds) {
    c.seed = seed;
    c.protocol.cc = CcAlgorithm::kSwift;
    const ScenarioResult s = RunScenario(c);
    EXPECT_TRUE(s.Clean()) << "seed " << seed;
    EXPECT_EQ(s.messages_failed, 0u) << "seed " << seed;
    EXPECT_EQ(s.messages_delivered, s.messages_sent) << "seed " << seed;
    c.protocol.cc = CcAlgorithm::kNone;
    const ScenarioResult n = RunScenario(c);
    swift += s.goodput_gbps;
    none += n.goodput_gbps;
  }
  EXPECT_GE(swift, at_least * none)
      << "swift " << swift << " vs none " << none << " Gbit/s (sum)";
}

TEST(LossIsNotCongestionTest,
     BurstLossOnEverySpineFailsNothingAndKeepsGoodput) {
  // braid-sim --impair spine=all,ge=0.005:0.05 --messages 300 --seed S
  // (bursts of mean length 20, about 9 % of packets on every link).
  ScenarioConfig c = Fabric(8, 300, 1);
  sim::Impairment imp;
  imp.ge_p_good_to_bad = 0.005;
  imp.ge_p_bad_to_good = 0.05;
  LossOnEverySpine(&c, imp);
  ExpectSwiftKeepsUp(c, {3, 4, 5}, 0.7);
}

TEST(LossIsNotCongestionTest, TenPercentRandomLossKeepsGoodput) {
  // braid-sim --loss 0.1 --messages 300 --seed S
  ScenarioConfig c = Fabric(8, 300, 1);
  sim::Impairment imp;
  imp.loss = 0.1;
  LossOnEverySpine(&c, imp);
  ExpectSwiftKeepsUp(c, {4, 5}, 0.8);
}

TEST(LossIsNotCongestionTest,
     IncastStaysBoundedAndDropsNothingWithAStartWindow) {
  // braid-sim --hosts 66 --traffic incast --incast 64 --messages 20
  //   [--start-cwnd-kb 64] [--cc none]: 64 x 64 KiB go into the first
  // round trip, inside the 16 MiB queue.
  ScenarioConfig c = Fabric(66, 20, 1);
  c.traffic = Traffic::kIncast;
  c.incast = 64;
  c.protocol.start_cwnd_bytes = 64 * 1024;
  const ScenarioResult swift = RunScenario(c);
  EXPECT_TRUE(swift.Clean());
  EXPECT_EQ(swift.messages_failed, 0u);
  EXPECT_LE(swift.queue_drops * 100, swift.sim_packets);  // <= 1 %
  EXPECT_LE(swift.max_queue_bytes, 6u << 20);
  // Every sender at the full window (512 KiB, the default) overflows it in
  // the first round trip: the start window is what holds it.
  c.protocol.start_cwnd_bytes = 0;
  const ScenarioResult full = RunScenario(c);
  EXPECT_GT(full.queue_drops * 100, full.sim_packets * 5);  // > 5 %
  // Without congestion control the same incast overflows the 16 MiB queue:
  // the scenario does congest.
  c.protocol.cc = CcAlgorithm::kNone;
  const ScenarioResult none = RunScenario(c);
  EXPECT_GT(none.queue_drops * 10, none.sim_packets);  // > 10 %
}

}  // namespace
}  // namespace braid::sim

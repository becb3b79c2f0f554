// Checksum mode (packets carry lengths and message headers, not payload
// bytes) must simulate the very same run as byte-exact mode: the protocol
// core never looks at payload bytes, and links queue, serialise, corrupt
// and drop packets of the same sizes. Each case runs both and compares
// everything the run reports.
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/scenario/scenario.h"

namespace braid::sim {
namespace {

ScenarioConfig Base(uint64_t seed) {
  ScenarioConfig c;
  c.topology.num_leaves = 2;
  c.topology.hosts_per_leaf = 4;
  c.topology.num_spines = 4;
  c.topology.host_link.queue_bytes = 16u << 20;
  c.protocol.peer_timeout = DurationNs::Millis(50);
  c.protocol.min_rto = DurationNs::Micros(200);
  c.sizes = {16, 100000};
  c.messages_per_sender = 100;
  c.seed = seed;
  return c;
}

std::string Summary(const ScenarioResult& r) {
  return absl::StrCat(
      "sent=", r.messages_sent, " delivered=", r.messages_delivered,
      " failed=", r.messages_failed, " bad=", r.byte_mismatches,
      " dup=", r.duplicates_delivered, " lost=", r.lost_without_error,
      " bytes=", r.bytes_delivered, " retx=", r.retransmits,
      " spur=", r.spurious_retransmits, " rtos=", r.rtos,
      " drops=", r.link_drops, " mct=", r.mct_p50.ns(), "/", r.mct_p99.ns(),
      " last=", r.last_delivery.ns(), " packets=", r.sim_packets,
      " events=", r.sim_events, " timed_out=", r.timed_out);
}

void ExpectSameRun(ScenarioConfig c) {
  c.payload = PayloadMode::kBytes;
  const ScenarioResult bytes = RunScenario(c);
  c.payload = PayloadMode::kChecksum;
  const ScenarioResult sums = RunScenario(c);
  EXPECT_TRUE(bytes.Clean()) << Summary(bytes);
  EXPECT_TRUE(sums.Clean()) << Summary(sums);
  EXPECT_EQ(Summary(bytes), Summary(sums));
  EXPECT_EQ(bytes.spine_packets, sums.spine_packets);
}

TimedImpairment OnAllSpines(Impairment imp) {
  TimedImpairment t;
  t.spine = -1;
  t.impairment = imp;
  return t;
}

TEST(PayloadModeTest, CleanRunIsTheSameInBothModes) { ExpectSameRun(Base(1)); }

TEST(PayloadModeTest, LossCorruptionDuplicationAndReorderingAreTheSame) {
  Impairment imp;
  imp.loss = 0.01;
  imp.corrupt = 0.01;
  imp.duplicate = 0.01;
  imp.reorder = 0.02;
  ScenarioConfig c = Base(2);
  c.impairments.push_back(OnAllSpines(imp));
  ExpectSameRun(c);
}

TEST(PayloadModeTest, RestartAndOrderedStreamsAreTheSame) {
  ScenarioConfig c = Base(3);
  c.streams = 3;
  c.restarts.push_back({2, TimeNs::Zero() + DurationNs::Micros(300)});
  ExpectSameRun(c);
}

}  // namespace
}  // namespace braid::sim

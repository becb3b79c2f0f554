#include "sim/fat_tree.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim/simulator.h"

namespace braid::sim {
namespace {

using Tier = FatTree::Tier;

// Flow f leaves from this UDP source port + f.
constexpr uint16_t kFirstFlowPort = 49152;

// Sends one 100-byte packet from host `from` to host `to` with the given UDP
// source port.
void Send(FatTree& net, int from, int to, uint16_t src_port) {
  Host& h = net.host(from);
  Packet* p = h.sim()->pool().Alloc();
  p->src = h.address();
  p->src.port = src_port;
  p->dst = net.host(to).address();
  p->len = 100;
  std::memset(p->data, from, p->len);
  h.Send(p);
}

// Pops every received packet; returns how many host `i` had.
size_t Drain(FatTree& net, int i) {
  size_t n = 0;
  while (Packet* p = net.host(i).PopRx()) {
    net.host(i).sim()->pool().Free(p);
    ++n;
  }
  return n;
}

uint64_t TierPackets(FatTree& net, Tier tier) {
  uint64_t n = 0;
  for (int s = 0; s < net.num_switches(tier); ++s) {
    n += net.switch_at(tier, s).counters().rx_packets;
  }
  return n;
}

// The core switch whose counter moved since `before` (updated), or -1.
int CoreUsed(FatTree& net, std::vector<uint64_t>& before) {
  int used = -1;
  for (int c = 0; c < net.num_switches(Tier::kCore); ++c) {
    if (net.core_packets(c) != before[c]) used = c;
    before[c] = net.core_packets(c);
  }
  return used;
}

// Sends flow `flow` from host `from` to host `to`, runs the simulator until
// idle and returns the core switch it crossed (-1: none), by the counters
// in `before` (updated).
int SendFlowAndFindCore(FatTree& net, int from, int to, int flow,
                        std::vector<uint64_t>& before) {
  Send(net, from, to, static_cast<uint16_t>(kFirstFlowPort + flow));
  net.host(from).sim()->RunUntilIdle();
  return CoreUsed(net, before);
}

// Sends flows 0 .. flows-1 from host `from` to host `to` (does not run the
// simulator).
void SendFlows(FatTree& net, int from, int to, int flows) {
  for (int f = 0; f < flows; ++f) {
    Send(net, from, to, static_cast<uint16_t>(kFirstFlowPort + f));
  }
}

// Sends one packet from host `from` to host `to`, runs the simulator until
// idle and returns how many packets host `to` had.
size_t SendOneAndDrain(FatTree& net, int from, int to) {
  Send(net, from, to, 50000);
  net.host(from).sim()->RunUntilIdle();
  return Drain(net, to);
}

Impairment Blackhole() {
  Impairment down;
  down.blackhole = true;
  return down;
}

// The default fat-tree: k = 4, 16 hosts in 4 pods, 4 core switches.
class FatTreeKFourTest : public testing::Test {
 protected:
  void SetUp() override {
    auto net = FatTree::Create(&sim_, FatTreeOptions{});
    ASSERT_TRUE(net.ok()) << net.status();
    net_ = std::move(*net);
  }

  // Applies `impairment` in `dir` to every link of every core switch.
  void SetAllCores(Fabric::Direction dir, const Impairment& impairment) {
    for (int c = 0; c < net_->num_top_switches(); ++c) {
      net_->SetTopImpairment(c, -1, dir, impairment);
    }
  }

  Simulator sim_;
  std::unique_ptr<FatTree> net_;
};

TEST_F(FatTreeKFourTest, KFourHasSixteenHostsInFourPodsWithPodEdgeAddresses) {
  FatTree& n = *net_;
  EXPECT_EQ(n.num_hosts(), 16);
  EXPECT_EQ(n.num_switches(Tier::kEdge), 8);
  EXPECT_EQ(n.num_switches(Tier::kAggregation), 8);
  EXPECT_EQ(n.num_switches(Tier::kCore), 4);
  EXPECT_EQ(n.host(0).address().ToString(), "10.0.0.1:7000");
  EXPECT_EQ(n.host(1).address().ToString(), "10.0.0.2:7000");
  EXPECT_EQ(n.host(2).address().ToString(), "10.0.1.1:7000");
  EXPECT_EQ(n.host(5).address().ToString(), "10.1.0.2:7000");
  EXPECT_EQ(n.PodOf(5), 1);
  EXPECT_EQ(n.EdgeOf(5), 2);
  for (int i = 0; i < n.num_hosts(); ++i) {
    EXPECT_EQ(n.HostIndex(n.host(i).address()), i);
  }
  EXPECT_EQ(n.HostIndex(NetAddr::Ipv4(0x0a040001, 7000)), -1);  // pod 4
  EXPECT_EQ(n.HostIndex(NetAddr::Ipv4(0x0a000201, 7000)), -1);  // edge 2
  EXPECT_EQ(n.HostIndex(NetAddr::Ipv4(0x0a000003, 7000)), -1);  // host 3
  EXPECT_DOUBLE_EQ(n.BisectionFraction(), 1.0);
}

TEST(FatTreeTest, KSixteenHasOneThousandTwentyFourHosts) {
  Simulator sim;
  FatTreeOptions o;
  o.k = 16;
  auto net = FatTree::Create(&sim, o);
  ASSERT_TRUE(net.ok()) << net.status();
  EXPECT_EQ((*net)->num_hosts(), 1024);
  EXPECT_EQ((*net)->num_switches(Tier::kCore), 64);
  EXPECT_EQ((*net)->HostIndex((*net)->host(1023).address()), 1023);
}

TEST(FatTreeTest, InvalidSizesAreRejectedWithTheirRange) {
  Simulator sim;
  for (int k : {0, 3, 66}) {
    FatTreeOptions o;
    o.k = k;
    absl::Status s = ValidateFatTreeOptions(o);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << k;
    EXPECT_NE(s.message().find("even number in 2..64"), std::string::npos) << s;
    EXPECT_FALSE(FatTree::Create(&sim, o).ok());
  }
  FatTreeOptions o;
  o.hosts_per_edge = 255;
  EXPECT_EQ(ValidateFatTreeOptions(o).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FatTreeKFourTest,
       EveryHostReachesEveryOtherHostThroughTheLowestCommonTier) {
  FatTree& net = *net_;
  for (int from = 0; from < net.num_hosts(); ++from) {
    for (int to = 0; to < net.num_hosts(); ++to) {
      if (from == to) continue;
      const uint64_t agg = TierPackets(net, Tier::kAggregation);
      const uint64_t core = TierPackets(net, Tier::kCore);
      ASSERT_EQ(SendOneAndDrain(net, from, to), 1u) << from << " -> " << to;
      const bool same_edge = net.EdgeOf(from) == net.EdgeOf(to);
      const bool same_pod = net.PodOf(from) == net.PodOf(to);
      EXPECT_EQ(TierPackets(net, Tier::kAggregation) - agg,
                same_edge ? 0u : (same_pod ? 1u : 2u))
          << from << " -> " << to;
      EXPECT_EQ(TierPackets(net, Tier::kCore) - core, same_pod ? 0u : 1u)
          << from << " -> " << to;
    }
  }
  EXPECT_EQ(net.TotalLinkDrops(), 0u);
}

TEST(FatTreeTest, SourcePortsSpreadOverEveryCoreAndEachFlowSticksToOne) {
  Simulator sim(SimulatorOptions{.seed = 3});
  FatTreeOptions o;
  o.k = 8;  // 16 cores
  auto net_or = FatTree::Create(&sim, o);
  ASSERT_TRUE(net_or.ok());
  FatTree& net = **net_or;
  const int to = net.num_hosts() - 1;  // another pod
  std::vector<uint64_t> before(16, 0);
  std::vector<int> core_of(256);
  std::set<int> used;
  for (int e = 0; e < 256; ++e) {
    core_of[e] = SendFlowAndFindCore(net, 0, to, e, before);
    ASSERT_GE(core_of[e], 0);
    used.insert(core_of[e]);
  }
  EXPECT_EQ(used.size(), 16u) << "256 flows should reach all 16 cores";
  for (int e = 0; e < 256; e += 17) {
    EXPECT_EQ(SendFlowAndFindCore(net, 0, to, e, before), core_of[e])
        << "source port " << e;
  }
  EXPECT_EQ(Drain(net, to), 256u + 16u);
}

TEST_F(FatTreeKFourTest, FailedCoreSwitchLosesExactlyItsFlowsUntilRestored) {
  FatTree& net = *net_;
  const int to = 12;  // pod 3
  std::vector<uint64_t> before(4, 0);
  std::vector<int> core_of(64);
  for (int e = 0; e < 64; ++e) {
    core_of[e] = SendFlowAndFindCore(net, 0, to, e, before);
  }
  ASSERT_EQ(Drain(net, to), 64u);
  net.SetSwitchImpairment(Tier::kCore, 1, Blackhole());
  SendFlows(net, 0, to, 64);
  const size_t expected =
      64 - static_cast<size_t>(std::count(core_of.begin(), core_of.end(), 1));
  sim_.RunUntilIdle();
  EXPECT_GT(expected, 0u);
  EXPECT_LT(expected, 64u) << "core 1 carried none of the 64 flows";
  EXPECT_EQ(Drain(net, to), expected);
  EXPECT_EQ(net.TotalLinkDrops(), 64u - expected);
  net.SetSwitchImpairment(Tier::kCore, 1, Impairment{});
  SendFlows(net, 0, to, 64);
  sim_.RunUntilIdle();
  EXPECT_EQ(Drain(net, to), 64u);
}

TEST_F(FatTreeKFourTest, FailedEdgeSwitchCutsOffOnlyItsHosts) {
  FatTree& net = *net_;
  net.SetSwitchImpairment(Tier::kEdge, net.EdgeOf(6), Blackhole());  // 6, 7
  for (int to : {5, 6, 7, 8}) Send(net, 0, to, 50000);
  sim_.RunUntilIdle();
  EXPECT_EQ(Drain(net, 5), 1u);
  EXPECT_EQ(Drain(net, 6), 0u);
  EXPECT_EQ(Drain(net, 7), 0u);
  EXPECT_EQ(Drain(net, 8), 1u);
}

TEST_F(FatTreeKFourTest, FailedCoreLinkLosesOnlyTheFlowsHashedOntoIt) {
  FatTree& net = *net_;
  // Core 0's link to pod 0 (pod 0's aggregation switch 0, its uplink 0).
  net.SetTopImpairment(0, 0, Fabric::Direction::kBoth, Blackhole());
  std::vector<uint64_t> before(4, 0);
  size_t delivered_expected = 0;
  for (int e = 0; e < 64; ++e) {
    // A flow hashed to agg 0 -> core 0 dies before core 0 counts it.
    if (SendFlowAndFindCore(net, 0, 12, e, before) >= 0) ++delivered_expected;
  }
  EXPECT_GT(delivered_expected, 0u);
  EXPECT_LT(delivered_expected, 64u);
  EXPECT_EQ(Drain(net, 12), delivered_expected);
}

TEST(FatTreeTest, MoreHostsPerEdgeOversubscribeTheFabric) {
  Simulator sim;
  FatTreeOptions o;
  o.k = 4;
  o.hosts_per_edge = 4;  // 4 hosts on 2 uplinks: 2:1
  auto net = FatTree::Create(&sim, o);
  ASSERT_TRUE(net.ok());
  EXPECT_EQ((*net)->num_hosts(), 32);
  EXPECT_DOUBLE_EQ((*net)->BisectionFraction(), 0.5);
  o.hosts_per_edge = 0;
  o.core_link.rate_bps = o.host_link.rate_bps / 4;  // slow core links
  auto slow = FatTree::Create(&sim, o);
  ASSERT_TRUE(slow.ok());
  EXPECT_DOUBLE_EQ((*slow)->BisectionFraction(), 0.25);
}

TEST_F(FatTreeKFourTest, NetworkLinksAreEveryLinkButTheHostsUplinks) {
  int links = 0;
  net_->ForEachNetworkLink([&links](const Link&) { ++links; });
  // 16 host downlinks, 8 edges x 2 aggregation switches x 2 directions,
  // 8 aggregation switches x 2 cores x 2 directions.
  EXPECT_EQ(links, 16 + 32 + 32);
}

TEST_F(FatTreeKFourTest, ImpairingACoreUpwardsLeavesItsDownwardTrafficAlone) {
  SetAllCores(Fabric::Direction::kUp, Blackhole());
  EXPECT_EQ(SendOneAndDrain(*net_, 0, 12), 0u);
  SetAllCores(Fabric::Direction::kUp, Impairment{});
  SetAllCores(Fabric::Direction::kDown, Blackhole());
  EXPECT_EQ(SendOneAndDrain(*net_, 0, 12), 0u);
  EXPECT_EQ(net_->TotalLinkDrops(), 2u);
  SetAllCores(Fabric::Direction::kBoth, Impairment{});
  EXPECT_EQ(SendOneAndDrain(*net_, 0, 12), 1u);
}

}  // namespace
}  // namespace braid::sim

#include "sim/switch.h"

#include <memory>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "sim/link.h"
#include "sim/simulator.h"

namespace braid::sim {
namespace {

constexpr uint32_t kIp(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// Frees whatever leaves the switch (links count what they carried).
struct PortCounter {
  Simulator* sim;
  static void Take(void* self_ptr, Packet* p) {
    auto* self = static_cast<PortCounter*>(self_ptr);
    self->sim->pool().Free(p);
  }
};

class SwitchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sw_ = std::make_unique<Switch>(&sim_, "sw", /*hash_seed=*/1234);
    for (int i = 0; i < 4; ++i) {
      LinkOptions o;
      o.rate_bps = 0;
      links_.push_back(std::make_unique<Link>(&sim_, o, "out", i));
      links_.back()->Connect(PacketSink{&PortCounter::Take, &sink_});
      sw_->AddPort(links_.back().get());
    }
  }

  Packet MakeHeader(uint32_t src_ip, uint16_t src_port, uint32_t dst_ip,
                    uint16_t dst_port) {
    Packet p;
    p.src = NetAddr::Ipv4(src_ip, src_port);
    p.dst = NetAddr::Ipv4(dst_ip, dst_port);
    return p;
  }

  Simulator sim_;
  PortCounter sink_{&sim_};
  std::unique_ptr<Switch> sw_;
  std::vector<std::unique_ptr<Link>> links_;
};

TEST_F(SwitchTest, SameFiveTupleAlwaysTakesTheSamePort) {
  ASSERT_TRUE(sw_->AddRoute(0, 0, {0, 1, 2, 3}).ok());
  const Packet p = MakeHeader(kIp(10, 0, 0, 1), 50000, kIp(10, 1, 0, 1), 7000);
  const int first = sw_->SelectPort(p);
  ASSERT_GE(first, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sw_->SelectPort(p), first);
}

TEST_F(SwitchTest, SixteenSourcePortsSpreadOverTheFourPorts) {
  ASSERT_TRUE(sw_->AddRoute(0, 0, {0, 1, 2, 3}).ok());
  std::set<int> used;
  for (uint16_t e = 0; e < 16; ++e) {
    used.insert(sw_->SelectPort(
        MakeHeader(kIp(10, 0, 0, 1), 49152 + e, kIp(10, 1, 0, 1), 7000)));
  }
  EXPECT_GE(used.size(), 3u);
}

TEST_F(SwitchTest, ChangingOnlyTheSourcePortChangesThePortForSomeFlows) {
  ASSERT_TRUE(sw_->AddRoute(0, 0, {0, 1, 2, 3}).ok());
  int changed = 0;
  for (uint16_t e = 0; e < 64; ++e) {
    const int a = sw_->SelectPort(
        MakeHeader(kIp(10, 0, 0, 1), 49152 + e, kIp(10, 1, 0, 1), 7000));
    const int b = sw_->SelectPort(
        MakeHeader(kIp(10, 0, 0, 1), 49152 + e + 1000, kIp(10, 1, 0, 1), 7000));
    if (a != b) ++changed;
  }
  // A good hash moves ~3/4 of flows; require clearly more than a few.
  EXPECT_GT(changed, 32);
  EXPECT_LT(changed, 64);
}

TEST_F(SwitchTest, HashSplitsManyFlowsEvenly) {
  ASSERT_TRUE(sw_->AddRoute(0, 0, {0, 1, 2, 3}).ok());
  std::vector<int> count(4, 0);
  for (uint32_t e = 0; e < 16384; ++e) {
    ++count[sw_->SelectPort(MakeHeader(kIp(10, 0, 0, 1),
                                       static_cast<uint16_t>(49152 + e),
                                       kIp(10, 1, 0, 1), 7000))];
  }
  for (int c : count) EXPECT_NEAR(c, 4096, 250);
}

TEST_F(SwitchTest, DifferentSeedsSplitFlowsDifferently) {
  Packet p = MakeHeader(kIp(10, 0, 0, 1), 50000, kIp(10, 1, 0, 1), 7000);
  EXPECT_NE(Switch::FlowHash(p, 1), Switch::FlowHash(p, 2));
  // Every field of the 5-tuple feeds the hash.
  const uint64_t base = Switch::FlowHash(p, 1);
  Packet q = p;
  q.dst.port = 7001;
  EXPECT_NE(Switch::FlowHash(q, 1), base);
  q = p;
  q.src = NetAddr::Ipv4(kIp(10, 0, 0, 2), 50000);
  EXPECT_NE(Switch::FlowHash(q, 1), base);
  q = p;
  q.dst = NetAddr::Ipv4(kIp(10, 1, 0, 2), 7000);
  EXPECT_NE(Switch::FlowHash(q, 1), base);
}

TEST_F(SwitchTest, ExactHostRouteBeatsLongerAndShorterPrefixes) {
  ASSERT_TRUE(sw_->AddRoute(0, 0, {0}).ok());
  ASSERT_TRUE(sw_->AddRoute(kIp(10, 1, 0, 0), 16, {1}).ok());
  ASSERT_TRUE(sw_->AddRoute(kIp(10, 1, 2, 0), 24, {2}).ok());
  ASSERT_TRUE(sw_->AddRoute(kIp(10, 1, 2, 3), 32, {3}).ok());
  auto port_for = [&](uint32_t ip) {
    return sw_->SelectPort(MakeHeader(kIp(10, 0, 0, 1), 1, ip, 2));
  };
  EXPECT_EQ(port_for(kIp(10, 1, 2, 3)), 3);
  EXPECT_EQ(port_for(kIp(10, 1, 2, 4)), 2);
  EXPECT_EQ(port_for(kIp(10, 1, 9, 9)), 1);
  EXPECT_EQ(port_for(kIp(192, 168, 0, 1)), 0);
}

TEST_F(SwitchTest, ReplacedRoutesSendToTheirNewPorts) {
  ASSERT_TRUE(sw_->AddRoute(kIp(10, 1, 0, 0), 16, {1}).ok());
  ASSERT_TRUE(sw_->AddRoute(kIp(10, 1, 2, 3), 32, {3}).ok());
  ASSERT_TRUE(sw_->AddRoute(kIp(10, 1, 7, 7), 16, {2}).ok());  // same /16
  ASSERT_TRUE(sw_->AddRoute(kIp(10, 1, 2, 3), 32, {0}).ok());
  auto port_for = [&](uint32_t ip) {
    return sw_->SelectPort(MakeHeader(kIp(10, 0, 0, 1), 1, ip, 2));
  };
  EXPECT_EQ(port_for(kIp(10, 1, 9, 9)), 2);
  EXPECT_EQ(port_for(kIp(10, 1, 2, 3)), 0);
}

TEST_F(SwitchTest, PacketWithoutRouteIsDroppedAndCounted) {
  ASSERT_TRUE(sw_->AddRoute(kIp(10, 1, 0, 0), 16, {1}).ok());
  Packet* p = sim_.pool().Alloc();
  p->src = NetAddr::Ipv4(kIp(10, 0, 0, 1), 1);
  p->dst = NetAddr::Ipv4(kIp(10, 2, 0, 1), 2);
  sw_->Receive(p);
  EXPECT_EQ(sw_->counters().drops_no_route, 1u);
  EXPECT_EQ(sim_.pool().in_use(), 0u);
}

TEST_F(SwitchTest, ReceivedPacketLeavesOnTheSelectedPortLink) {
  ASSERT_TRUE(sw_->AddRoute(0, 0, {0, 1, 2, 3}).ok());
  Packet* p = sim_.pool().Alloc();
  p->src = NetAddr::Ipv4(kIp(10, 0, 0, 1), 49999);
  p->dst = NetAddr::Ipv4(kIp(10, 1, 0, 1), 7000);
  const int port = sw_->SelectPort(*p);
  sw_->Receive(p);
  sim_.RunUntilIdle();
  EXPECT_EQ(sw_->counters().rx_packets, 1u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(links_[i]->counters().delivered_packets, i == port ? 1u : 0u);
  }
}

TEST_F(SwitchTest, InvalidRoutesAreRejected) {
  EXPECT_FALSE(sw_->AddRoute(0, 33, {0}).ok());
  EXPECT_FALSE(sw_->AddRoute(0, -1, {0}).ok());
  EXPECT_FALSE(sw_->AddRoute(0, 0, {}).ok());
  EXPECT_FALSE(sw_->AddRoute(0, 0, {4}).ok());
}

}  // namespace
}  // namespace braid::sim

#include "sim/leaf_spine.h"

#include <cstring>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "sim/simulator.h"

namespace braid::sim {
namespace {

// Sends one packet of `len` bytes from host `from` to host `to` with the
// given UDP source port.
void Send(LeafSpine& net, int from, int to, uint16_t src_port,
          uint32_t len = 100) {
  Host& h = net.host(from);
  Packet* p = h.sim()->pool().Alloc();
  p->src = h.address();
  p->src.port = src_port;
  p->dst = net.host(to).address();
  p->len = len;
  std::memset(p->data, from, len);
  h.Send(p);
}

void DrainAll(LeafSpine& net) {
  for (int i = 0; i < net.num_hosts(); ++i) {
    while (Packet* p = net.host(i).PopRx()) net.host(i).sim()->pool().Free(p);
  }
}

// Which spine carried the last packet (the one whose counter moved).
int SpineUsed(LeafSpine& net, std::vector<uint64_t>& before) {
  int used = -1;
  for (int s = 0; s < net.num_spines(); ++s) {
    if (net.spine_packets(s) != before[s]) used = s;
    before[s] = net.spine_packets(s);
  }
  return used;
}

TEST(LeafSpineTest, DefaultFabricHasEightHostsWithLeafAddresses) {
  Simulator sim;
  auto net = LeafSpine::Create(&sim, LeafSpineOptions{});
  ASSERT_TRUE(net.ok()) << net.status();
  LeafSpine& n = **net;
  EXPECT_EQ(n.num_hosts(), 8);
  EXPECT_EQ(n.num_spines(), 4);
  EXPECT_EQ(n.host(0).address().ToString(), "10.0.0.1:7000");
  EXPECT_EQ(n.host(3).address().ToString(), "10.0.0.4:7000");
  EXPECT_EQ(n.host(4).address().ToString(), "10.1.0.1:7000");
  EXPECT_EQ(n.LeafOf(5), 1);
  for (int i = 0; i < n.num_hosts(); ++i) {
    EXPECT_EQ(n.HostIndex(n.host(i).address()), i);
  }
  EXPECT_EQ(n.HostIndex(NetAddr::Ipv4(0x0a050001, 7000)), -1);
}

TEST(LeafSpineTest, InvalidSizesAreRejected) {
  Simulator sim;
  LeafSpineOptions o;
  o.num_leaves = 0;
  EXPECT_FALSE(LeafSpine::Create(&sim, o).ok());
  o = LeafSpineOptions{};
  o.hosts_per_leaf = 255;
  EXPECT_FALSE(LeafSpine::Create(&sim, o).ok());
  o = LeafSpineOptions{};
  o.per_spine_fabric_link.resize(3);  // need 4
  EXPECT_FALSE(LeafSpine::Create(&sim, o).ok());
}

TEST(LeafSpineTest, CrossLeafPacketTakesFourHopsWithExactTiming) {
  Simulator sim;
  LeafSpineOptions o;
  o.host_link.rate_bps = 100'000'000'000ULL;
  o.host_link.delay = DurationNs::Nanos(500);
  o.fabric_link.rate_bps = 400'000'000'000ULL;
  o.fabric_link.delay = DurationNs::Micros(2);
  auto net = LeafSpine::Create(&sim, o);
  ASSERT_TRUE(net.ok());
  // 958 + 42 = 1000 wire bytes: 80 ns at 100G, 20 ns at 400G.
  Send(**net, 0, 4, 50000, 958);
  sim.RunUntilIdle();
  Host& dst = (*net)->host(4);
  ASSERT_EQ(dst.rx_pending(), 1u);
  EXPECT_EQ(sim.now().ns(), 2 * (80 + 500) + 2 * (20 + 2000));
  uint64_t spine_total = 0;
  for (int s = 0; s < 4; ++s) spine_total += (*net)->spine_packets(s);
  EXPECT_EQ(spine_total, 1u);
  DrainAll(**net);
}

TEST(LeafSpineTest, SameLeafTrafficNeverCrossesASpine) {
  Simulator sim;
  auto net = LeafSpine::Create(&sim, LeafSpineOptions{});
  ASSERT_TRUE(net.ok());
  for (uint16_t e = 0; e < 32; ++e) Send(**net, 0, 1, 49152 + e);
  sim.RunUntilIdle();
  EXPECT_EQ((*net)->host(1).rx_pending(), 32u);
  for (int s = 0; s < 4; ++s) EXPECT_EQ((*net)->spine_packets(s), 0u);
  DrainAll(**net);
}

TEST(LeafSpineTest, SixteenSourcePortsSpreadOverFourSpinesAndStickToThem) {
  Simulator sim(SimulatorOptions{.seed = 11});
  auto net_or = LeafSpine::Create(&sim, LeafSpineOptions{});
  ASSERT_TRUE(net_or.ok());
  LeafSpine& net = **net_or;
  std::vector<uint64_t> before(4, 0);
  std::vector<int> spine_of(16);
  std::set<int> used;
  for (uint16_t e = 0; e < 16; ++e) {
    Send(net, 0, 4, 49152 + e);
    sim.RunUntilIdle();
    spine_of[e] = SpineUsed(net, before);
    ASSERT_GE(spine_of[e], 0);
    used.insert(spine_of[e]);
  }
  EXPECT_GE(used.size(), 3u) << "seed 11";
  // Same 5-tuple => same spine, every time.
  for (int round = 0; round < 5; ++round) {
    for (uint16_t e = 0; e < 16; ++e) {
      Send(net, 0, 4, 49152 + e);
      sim.RunUntilIdle();
      EXPECT_EQ(SpineUsed(net, before), spine_of[e]) << "entropy " << e;
    }
  }
  // A different source port moves some flows to another spine.
  int moved = 0;
  for (uint16_t e = 0; e < 16; ++e) {
    Send(net, 0, 4, 49152 + 100 + e);
    sim.RunUntilIdle();
    if (SpineUsed(net, before) != spine_of[e]) ++moved;
  }
  EXPECT_GT(moved, 0);
  DrainAll(net);
}

TEST(LeafSpineTest, PerSpineLinkOptionsSpreadPathDelays) {
  Simulator sim;
  LeafSpineOptions o;
  for (int s = 0; s < 4; ++s) {
    LinkOptions lo;
    lo.rate_bps = 0;
    lo.delay = DurationNs::Micros(s == 3 ? 10 : 1);  // spine 3: x10
    o.per_spine_fabric_link.push_back(lo);
  }
  o.host_link.rate_bps = 0;
  o.host_link.delay = DurationNs::Zero();
  auto net_or = LeafSpine::Create(&sim, o);
  ASSERT_TRUE(net_or.ok());
  LeafSpine& net = **net_or;
  std::vector<uint64_t> before(4, 0);
  bool saw_slow = false, saw_fast = false;
  for (uint16_t e = 0; e < 32; ++e) {
    const TimeNs start = sim.now();
    Send(net, 0, 4, 49152 + e);
    sim.RunUntilIdle();
    const int s = SpineUsed(net, before);
    const int64_t took = (sim.now() - start).ns();
    if (s == 3) {
      EXPECT_EQ(took, 20000);
      saw_slow = true;
    } else {
      EXPECT_EQ(took, 2000);
      saw_fast = true;
    }
  }
  EXPECT_TRUE(saw_slow);
  EXPECT_TRUE(saw_fast);
  DrainAll(net);
}

TEST(LeafSpineTest, BlackholedSpineLosesOnlyItsFlowsUntilRestored) {
  Simulator sim;
  auto net_or = LeafSpine::Create(&sim, LeafSpineOptions{});
  ASSERT_TRUE(net_or.ok());
  LeafSpine& net = **net_or;
  // Learn which spine each entropy uses.
  std::vector<uint64_t> before(4, 0);
  std::vector<int> spine_of(32);
  for (uint16_t e = 0; e < 32; ++e) {
    Send(net, 0, 4, 49152 + e);
    sim.RunUntilIdle();
    spine_of[e] = SpineUsed(net, before);
  }
  DrainAll(net);
  Impairment hole;
  hole.blackhole = true;
  net.SetSpineImpairment(2, LeafSpine::Direction::kUp, hole);
  int expected = 0;
  for (uint16_t e = 0; e < 32; ++e) {
    Send(net, 0, 4, 49152 + e);
    if (spine_of[e] != 2) ++expected;
  }
  sim.RunUntilIdle();
  EXPECT_EQ(net.host(4).rx_pending(), static_cast<size_t>(expected));
  EXPECT_EQ(net.up_link(0, 2).counters().drops_blackhole,
            static_cast<uint64_t>(32 - expected));
  EXPECT_LT(expected, 32);
  DrainAll(net);
  // The reverse direction was not touched.
  net.SetSpineImpairment(2, LeafSpine::Direction::kUp, Impairment{});
  for (uint16_t e = 0; e < 32; ++e) Send(net, 0, 4, 49152 + e);
  sim.RunUntilIdle();
  EXPECT_EQ(net.host(4).rx_pending(), 32u);
  EXPECT_EQ(net.TotalLinkDrops(), static_cast<uint64_t>(32 - expected));
  DrainAll(net);
}

TEST(LeafSpineTest, LargeFabricDeliversAllToAllTrafficWithBalancedSpines) {
  Simulator sim(SimulatorOptions{.seed = 3});
  LeafSpineOptions o;
  o.num_leaves = 32;
  o.hosts_per_leaf = 16;
  o.num_spines = 8;
  o.host_link.queue_bytes = 8u << 20;
  o.fabric_link.queue_bytes = 8u << 20;
  auto net_or = LeafSpine::Create(&sim, o);
  ASSERT_TRUE(net_or.ok());
  LeafSpine& net = **net_or;
  ASSERT_EQ(net.num_hosts(), 512);
  Rng rng(3);
  const int n = 40000;
  int cross_leaf = 0;
  for (int i = 0; i < n; ++i) {
    const int from = static_cast<int>(rng.Uniform(512));
    int to = static_cast<int>(rng.Uniform(511));
    if (to >= from) ++to;
    if (net.LeafOf(from) != net.LeafOf(to)) ++cross_leaf;
    Send(net, from, to, static_cast<uint16_t>(49152 + rng.Uniform(16384)), 64);
    if (i % 1000 == 999) sim.RunUntilIdle();
  }
  sim.RunUntilIdle();
  uint64_t received = 0;
  for (int h = 0; h < net.num_hosts(); ++h) {
    received += net.host(h).counters().rx_packets;
  }
  EXPECT_EQ(received, static_cast<uint64_t>(n)) << "seed 3";
  EXPECT_EQ(net.TotalLinkDrops(), 0u);
  uint64_t through_spines = 0;
  for (int s = 0; s < 8; ++s) {
    through_spines += net.spine_packets(s);
    EXPECT_NEAR(static_cast<double>(net.spine_packets(s)), cross_leaf / 8.0,
                cross_leaf / 8.0 * 0.08)
        << "spine " << s;
  }
  EXPECT_EQ(through_spines, static_cast<uint64_t>(cross_leaf));
  DrainAll(net);
  EXPECT_EQ(sim.pool().in_use(), 0u);
}

// A busy, lossy run; returns a fingerprint of every counter that matters.
std::vector<uint64_t> LossyRun(uint64_t seed) {
  Simulator sim(SimulatorOptions{.seed = seed});
  LeafSpineOptions o;
  o.fabric_link.queue_bytes = 20000;
  auto net_or = LeafSpine::Create(&sim, o);
  LeafSpine& net = **net_or;
  Impairment imp;
  imp.loss = 0.02;
  imp.duplicate = 0.01;
  imp.corrupt = 0.01;
  imp.ecn_threshold_bytes = 5000;
  for (int s = 0; s < 4; ++s) {
    net.SetSpineImpairment(s, LeafSpine::Direction::kBoth, imp);
  }
  Rng rng(seed);
  for (int i = 0; i < 5000; ++i) {
    const int from = static_cast<int>(rng.Uniform(8));
    const int to = (from + 4) % 8;
    Send(net, from, to, static_cast<uint16_t>(49152 + rng.Uniform(64)),
         static_cast<uint32_t>(64 + rng.Uniform(4000)));
    if (i % 50 == 49) sim.RunFor(DurationNs::Micros(2));
  }
  sim.RunUntilIdle();
  std::vector<uint64_t> fp;
  for (int s = 0; s < 4; ++s) fp.push_back(net.spine_packets(s));
  for (int i = 0; i < 8; ++i) {
    const HostCounters& c = net.host(i).counters();
    fp.push_back(c.rx_packets);
    fp.push_back(c.rx_bytes);
    fp.push_back(c.rx_checksum_drops);
  }
  for (int l = 0; l < 2; ++l) {
    for (int s = 0; s < 4; ++s) {
      const LinkCounters& c = net.up_link(l, s).counters();
      fp.push_back(c.drops());
      fp.push_back(c.ecn_marked);
      fp.push_back(c.duplicated);
      fp.push_back(c.max_queue_bytes);
    }
  }
  fp.push_back(static_cast<uint64_t>(sim.now().ns()));
  DrainAll(net);
  return fp;
}

TEST(LeafSpineTest, SameSeedGivesIdenticalCountersAndDifferentSeedDoesNot) {
  const auto a = LossyRun(21);
  const auto b = LossyRun(21);
  const auto c = LossyRun(22);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace braid::sim

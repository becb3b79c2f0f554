#include "backend/sim/sim_backend.h"

#include <array>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/leaf_spine.h"
#include "sim/simulator.h"

namespace braid::backend {
namespace {

class SimBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto net = sim::LeafSpine::Create(&sim_, sim::LeafSpineOptions{});
    ASSERT_TRUE(net.ok());
    net_ = std::move(*net);
    a_ = std::make_unique<SimBackend>(&net_->host(0));
    b_ = std::make_unique<SimBackend>(&net_->host(4));
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
    net_.reset();
    EXPECT_EQ(sim_.pool().in_use(), 0u) << "packet leak";
  }

  TxPacket Datagram(const std::string& text, uint16_t entropy,
                    bool ect = false) {
    TxPacket t;
    t.dst = b_->LocalAddress();
    t.entropy = entropy;
    t.ect = ect;
    t.data = reinterpret_cast<const uint8_t*>(text.data());
    t.len = static_cast<uint32_t>(text.size());
    return t;
  }

  sim::Simulator sim_;
  std::unique_ptr<sim::LeafSpine> net_;
  std::unique_ptr<SimBackend> a_, b_;
};

TEST_F(SimBackendTest, ReportsConfiguredLimitsAndHostAddress) {
  EXPECT_EQ(a_->EntropyCount(), 16384u);
  EXPECT_EQ(a_->MaxDatagram(), 4096u);
  EXPECT_EQ(a_->LocalAddress(), net_->host(0).address());
  SimBackend small(&net_->host(1),
                   SimBackendOptions{.entropy_count = 64, .mtu_payload = 1500});
  EXPECT_EQ(small.EntropyCount(), 64u);
  EXPECT_EQ(small.MaxDatagram(), 1500u);
}

TEST_F(SimBackendTest, BurstRoundTripIsByteExact) {
  std::vector<std::string> texts;
  for (int i = 0; i < 100; ++i)
    texts.push_back("datagram #" + std::to_string(i));
  std::vector<TxPacket> burst;
  for (int i = 0; i < 100; ++i) burst.push_back(Datagram(texts[i], i % 16));
  EXPECT_EQ(a_->TxBurst(burst), 100u);
  sim_.RunUntilIdle();

  std::multiset<std::string> got;
  std::array<RxPacket, 32> rx;
  size_t n;
  while ((n = b_->RxBurst(absl::MakeSpan(rx))) > 0) {
    for (size_t i = 0; i < n; ++i) {
      got.insert(std::string(reinterpret_cast<char*>(rx[i].data), rx[i].len));
      EXPECT_EQ(rx[i].src.ipv4(), a_->LocalAddress().ipv4());
      EXPECT_FALSE(rx[i].ce);
    }
  }
  EXPECT_EQ(got, std::multiset<std::string>(texts.begin(), texts.end()));
  EXPECT_EQ(a_->counters().tx_packets, 100u);
  EXPECT_EQ(b_->counters().rx_packets, 100u);
  EXPECT_EQ(b_->counters().rx_dropped, 0u);
}

TEST_F(SimBackendTest, EntropySelectsTheUdpSourcePort) {
  const std::string text = "x";
  for (uint16_t e : {0, 1, 777, 16383}) {
    TxPacket t = Datagram(text, e);
    ASSERT_EQ(a_->TxBurst(absl::MakeConstSpan(&t, 1)), 1u);
    sim_.RunUntilIdle();
    RxPacket r;
    ASSERT_EQ(b_->RxBurst(absl::MakeSpan(&r, 1)), 1u);
    EXPECT_EQ(r.src.port, 49152 + e);
  }
}

TEST_F(SimBackendTest, EntropiesSpreadOverSpines) {
  const std::string text = "spray";
  std::vector<TxPacket> burst;
  for (uint16_t e = 0; e < 16; ++e) burst.push_back(Datagram(text, e));
  a_->TxBurst(burst);
  sim_.RunUntilIdle();
  int spines_used = 0;
  for (int s = 0; s < 4; ++s) spines_used += net_->spine_packets(s) > 0;
  EXPECT_GE(spines_used, 3);
  std::array<RxPacket, 16> rx;
  EXPECT_EQ(b_->RxBurst(absl::MakeSpan(rx)), 16u);
}

TEST_F(SimBackendTest, InvalidDatagramsAreTakenDroppedAndCounted) {
  const std::string text = "bad";
  std::vector<TxPacket> burst;
  TxPacket bad_entropy = Datagram(text, 0);
  bad_entropy.entropy = 20000;
  burst.push_back(bad_entropy);
  TxPacket v6 = Datagram(text, 0);
  v6.dst.family = NetAddr::Family::kIpv6;
  burst.push_back(v6);
  std::vector<uint8_t> big(5000, 1);
  TxPacket oversize = Datagram(text, 0);
  oversize.data = big.data();
  oversize.len = static_cast<uint32_t>(big.size());
  burst.push_back(oversize);
  burst.push_back(Datagram(text, 1));  // the only good one
  EXPECT_EQ(a_->TxBurst(burst), 4u);
  EXPECT_EQ(a_->counters().tx_dropped, 3u);
  EXPECT_EQ(a_->counters().tx_packets, 1u);
  sim_.RunUntilIdle();
  std::array<RxPacket, 4> rx;
  EXPECT_EQ(b_->RxBurst(absl::MakeSpan(rx)), 1u);
}

TEST_F(SimBackendTest, CongestedQueueMarksEctDatagramsCe) {
  sim::Impairment imp;
  imp.ecn_threshold_bytes = 1;  // mark whenever anything is queued ahead
  net_->host_downlink(4).SetImpairment(imp);
  const std::string text(1000, 'z');
  std::vector<TxPacket> burst;
  for (int i = 0; i < 8; ++i) burst.push_back(Datagram(text, 0, /*ect=*/true));
  a_->TxBurst(burst);
  sim_.RunUntilIdle();
  std::array<RxPacket, 8> rx;
  ASSERT_EQ(b_->RxBurst(absl::MakeSpan(rx)), 8u);
  // One flow, one path: packets arrive paced by the first link, so the
  // downlink queue is empty each time — nobody is marked ...
  int marked = 0;
  for (const RxPacket& r : rx) marked += r.ce;
  EXPECT_EQ(marked, 0);
  // ... until a second sender shares the downlink.
  SimBackend c(&net_->host(1));  // same leaf as a: same path length
  std::vector<TxPacket> burst2;
  for (int i = 0; i < 8; ++i) burst2.push_back(Datagram(text, 1, true));
  a_->TxBurst(burst2);
  c.TxBurst(burst2);
  sim_.RunUntilIdle();
  std::array<RxPacket, 16> rx2;
  ASSERT_EQ(b_->RxBurst(absl::MakeSpan(rx2)), 16u);
  marked = 0;
  for (const RxPacket& r : rx2) marked += r.ce;
  EXPECT_GT(marked, 0);
}

TEST_F(SimBackendTest, BackpressureStopsTheBurstWhenUplinkIsFull) {
  sim::LinkOptions lo = net_->host_uplink(1).options();
  lo.queue_bytes = 3 * (1000 + lo.frame_overhead_bytes);
  net_->host_uplink(1).SetOptions(lo);
  SimBackend bp(&net_->host(1), SimBackendOptions{.backpressure = true});
  const std::string text(1000, 'q');
  std::vector<TxPacket> burst;
  for (int i = 0; i < 10; ++i) burst.push_back(Datagram(text, 0));
  EXPECT_EQ(bp.TxBurst(burst), 3u);
  EXPECT_EQ(bp.counters().tx_dropped, 0u);
  sim_.RunUntilIdle();
  EXPECT_EQ(bp.TxBurst(burst), 3u);  // room again once drained
  sim_.RunUntilIdle();
  // Without back-pressure the link tail-drops instead, and it is counted.
  SimBackend nobp(&net_->host(1));
  EXPECT_EQ(nobp.TxBurst(burst), 10u);
  EXPECT_EQ(nobp.counters().tx_dropped, 7u);
  sim_.RunUntilIdle();
  std::array<RxPacket, 32> rx;
  EXPECT_EQ(b_->RxBurst(absl::MakeSpan(rx)), 9u);
}

TEST_F(SimBackendTest, RxBuffersStayValidUntilTheNextRxBurst) {
  const std::string one = "first", two = "second";
  TxPacket t = Datagram(one, 3);
  a_->TxBurst(absl::MakeConstSpan(&t, 1));
  sim_.RunUntilIdle();
  RxPacket r;
  ASSERT_EQ(b_->RxBurst(absl::MakeSpan(&r, 1)), 1u);
  // Sending more traffic does not disturb the buffer handed out.
  t = Datagram(two, 4);
  a_->TxBurst(absl::MakeConstSpan(&t, 1));
  sim_.RunUntilIdle();
  EXPECT_EQ(std::string(reinterpret_cast<char*>(r.data), r.len), "first");
  EXPECT_EQ(sim_.pool().in_use(), 2u);
  ASSERT_EQ(b_->RxBurst(absl::MakeSpan(&r, 1)), 1u);
  EXPECT_EQ(sim_.pool().in_use(), 1u);  // the first one went back
}

TEST_F(SimBackendTest, WithoutTailBytesOnlyTheHeadAndTheTailsFirstBytesArrive) {
  SimBackendOptions o;
  o.carry_tail_bytes = false;
  a_ = std::make_unique<SimBackend>(&net_->host(0), o);
  const std::string head = "header";
  std::vector<uint8_t> tail(1000);
  for (size_t i = 0; i < tail.size(); ++i) tail[i] = static_cast<uint8_t>(i);
  TxPacket t = Datagram(head, 3);
  t.tail = tail.data();
  t.tail_len = static_cast<uint32_t>(tail.size());
  ASSERT_EQ(a_->TxBurst(absl::MakeConstSpan(&t, 1)), 1u);
  sim_.RunUntilIdle();
  std::array<RxPacket, 4> rx;
  ASSERT_EQ(b_->RxBurst(absl::MakeSpan(rx)), 1u);
  // The full length, as the links serialised it.
  ASSERT_EQ(rx[0].len, head.size() + tail.size());
  EXPECT_EQ(std::memcmp(rx[0].data, head.data(), head.size()), 0);
  const uint8_t* got = rx[0].data + head.size();
  EXPECT_EQ(std::memcmp(got, tail.data(), SimBackend::kCarriedTailBytes), 0);
  // Beyond them the packet holds what its buffer held, not the tail.
  size_t same = 0;
  for (size_t i = SimBackend::kCarriedTailBytes; i < tail.size(); ++i) {
    same += got[i] == tail[i];
  }
  EXPECT_LT(same, tail.size() / 2);
  EXPECT_EQ(a_->counters().tx_bytes, head.size() + tail.size());
}

}  // namespace
}  // namespace braid::backend

#include "sim/host.h"

#include <cstring>
#include <memory>

#include "gtest/gtest.h"
#include "sim/link.h"
#include "sim/simulator.h"

namespace braid::sim {
namespace {

constexpr uint32_t kIpA = (10u << 24) | 1;
constexpr uint32_t kIpB = (10u << 24) | (1u << 16) | 1;

// Two hosts joined back to back by one link each way.
class HostTest : public ::testing::Test {
 protected:
  void Build(HostOptions ho = {}) {
    LinkOptions lo;
    lo.rate_bps = 10'000'000'000ULL;
    lo.delay = DurationNs::Micros(1);
    a_ = std::make_unique<Host>(&sim_, NetAddr::Ipv4(kIpA, 7000), ho, "a");
    b_ = std::make_unique<Host>(&sim_, NetAddr::Ipv4(kIpB, 7000), ho, "b");
    ab_ = std::make_unique<Link>(&sim_, lo, "a->b", 1);
    ba_ = std::make_unique<Link>(&sim_, lo, "b->a", 2);
    a_->SetUplink(ab_.get());
    b_->SetUplink(ba_.get());
    ab_->Connect(b_->sink());
    ba_->Connect(a_->sink());
  }
  // Sends `text` from a to b:port.
  void SendAtoB(const char* text, uint16_t port = 7000) {
    Packet* p = sim_.pool().Alloc();
    p->src = NetAddr::Ipv4(kIpA, 49152);
    p->dst = NetAddr::Ipv4(kIpB, port);
    p->len = static_cast<uint32_t>(std::strlen(text));
    std::memcpy(p->data, text, p->len);
    a_->Send(p);
  }

  Simulator sim_;
  std::unique_ptr<Host> a_, b_;
  std::unique_ptr<Link> ab_, ba_;
};

TEST_F(HostTest, SentPacketLandsInPeerRxRingWithContent) {
  Build();
  SendAtoB("hello braid");
  sim_.RunUntilIdle();
  ASSERT_EQ(b_->rx_pending(), 1u);
  Packet* p = b_->PopRx();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(p->data), p->len),
            "hello braid");
  EXPECT_EQ(p->src, NetAddr::Ipv4(kIpA, 49152));
  EXPECT_NE(p->id, 0u);
  EXPECT_EQ(p->sent_at, TimeNs::Zero());
  sim_.pool().Free(p);
  EXPECT_EQ(b_->PopRx(), nullptr);
  EXPECT_EQ(b_->counters().rx_packets, 1u);
  EXPECT_EQ(a_->counters().tx_packets, 1u);
}

TEST_F(HostTest, CorruptedPacketIsDroppedByTheChecksum) {
  Build();
  Impairment imp;
  imp.corrupt = 1.0;
  ab_->SetImpairment(imp);
  SendAtoB("payload");
  sim_.RunUntilIdle();
  EXPECT_EQ(b_->rx_pending(), 0u);
  EXPECT_EQ(b_->counters().rx_checksum_drops, 1u);
  EXPECT_EQ(sim_.pool().in_use(), 0u);
}

TEST_F(HostTest, CorruptedPacketIsDeliveredWhenChecksumIsNotVerified) {
  HostOptions ho;
  ho.verify_checksum = false;
  Build(ho);
  Impairment imp;
  imp.corrupt = 1.0;
  ab_->SetImpairment(imp);
  SendAtoB("payload");
  sim_.RunUntilIdle();
  ASSERT_EQ(b_->rx_pending(), 1u);
  Packet* p = b_->PopRx();
  EXPECT_TRUE(p->corrupted);
  EXPECT_NE(std::string(reinterpret_cast<char*>(p->data), p->len), "payload");
  sim_.pool().Free(p);
}

TEST_F(HostTest, LazyChecksumStillDropsCorruptedAndPassesCleanPackets) {
  HostOptions ho;
  ho.lazy_checksum = true;
  Build(ho);
  SendAtoB("clean");
  sim_.RunUntilIdle();
  ASSERT_EQ(b_->rx_pending(), 1u);
  sim_.pool().Free(b_->PopRx());
  Impairment imp;
  imp.corrupt = 1.0;
  ab_->SetImpairment(imp);
  SendAtoB("dirty");
  sim_.RunUntilIdle();
  EXPECT_EQ(b_->rx_pending(), 0u);
  EXPECT_EQ(b_->counters().rx_checksum_drops, 1u);
  imp.deliver_corrupted = true;
  ab_->SetImpairment(imp);
  SendAtoB("dirty");
  sim_.RunUntilIdle();
  ASSERT_EQ(b_->rx_pending(), 1u);
  Packet* p = b_->PopRx();
  EXPECT_TRUE(p->corrupted);
  sim_.pool().Free(p);
}

TEST_F(HostTest, PacketToAnotherPortIsDroppedAndCounted) {
  Build();
  SendAtoB("x", 7001);
  sim_.RunUntilIdle();
  EXPECT_EQ(b_->rx_pending(), 0u);
  EXPECT_EQ(b_->counters().rx_wrong_address_drops, 1u);
}

TEST_F(HostTest, FullRxRingDropsAndCounts) {
  HostOptions ho;
  ho.rx_ring_packets = 4;
  Build(ho);
  for (int i = 0; i < 6; ++i) SendAtoB("x");
  sim_.RunUntilIdle();
  EXPECT_EQ(b_->rx_pending(), 4u);
  EXPECT_EQ(b_->counters().rx_ring_drops, 2u);
  // Ring wraps correctly after draining.
  for (int i = 0; i < 3; ++i) sim_.pool().Free(b_->PopRx());
  for (int i = 0; i < 3; ++i) SendAtoB("y");
  sim_.RunUntilIdle();
  EXPECT_EQ(b_->rx_pending(), 4u);
  EXPECT_EQ(b_->counters().rx_ring_drops, 2u);
}

TEST_F(HostTest, RxHookRunsOnceForPacketsArrivingTogether) {
  Build();
  struct Ctx {
    Host* host;
    int calls = 0;
    size_t seen = 0;
  } ctx{b_.get()};
  b_->SetRxHook(
      [](void* c) {
        auto* ctx = static_cast<Ctx*>(c);
        ++ctx->calls;
        while (Packet* p = ctx->host->PopRx()) {
          ++ctx->seen;
          ctx->host->sim()->pool().Free(p);
        }
      },
      &ctx);
  // Infinite-rate link: three packets sent together arrive together.
  LinkOptions lo = ab_->options();
  lo.rate_bps = 0;
  ab_->SetOptions(lo);
  SendAtoB("1");
  SendAtoB("2");
  SendAtoB("3");
  sim_.RunUntilIdle();
  EXPECT_EQ(ctx.calls, 1);
  EXPECT_EQ(ctx.seen, 3u);
  SendAtoB("4");
  sim_.RunUntilIdle();
  EXPECT_EQ(ctx.calls, 2);
  EXPECT_EQ(b_->counters().rx_hook_calls, 2u);
}

TEST_F(HostTest, DestroyingHostReturnsQueuedPacketsToThePool) {
  Build();
  SendAtoB("a");
  SendAtoB("b");
  sim_.RunUntilIdle();
  EXPECT_EQ(sim_.pool().in_use(), 2u);
  b_.reset();
  EXPECT_EQ(sim_.pool().in_use(), 0u);
}

}  // namespace
}  // namespace braid::sim

// The poll loop's cost does not grow with idle peers: after a hub has talked
// to many peers and everything is acked, polls visit none of them, and a
// send to one peer visits that peer only.
#include <memory>
#include <vector>

#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"

namespace braid::endpoint {
namespace {

class Star {
 public:
  explicit Star(int spokes) {
    hub_addr = NetAddr::Ipv4(0x0a000001, 7000);
    hub = std::make_unique<EndpointCore>(Config(1));
    for (int i = 0; i < spokes; ++i) {
      spoke_addr.push_back(NetAddr::Ipv4(0x0a010000 + i, 7000));
      spokes_.push_back(std::make_unique<EndpointCore>(Config(100 + i)));
    }
  }

  // Moves datagrams until nothing moves; fires timers as time passes.
  void Run(int max_rounds) {
    for (int r = 0; r < max_rounds; ++r) {
      bool moved = Drain(*hub, hub_addr);
      for (size_t i = 0; i < spokes_.size(); ++i) {
        moved |= Drain(*spokes_[i], spoke_addr[i]);
      }
      now += DurationNs::Micros(5);
      hub->OnTimer(now);
      for (auto& s : spokes_) s->OnTimer(now);
      if (!moved) return;
    }
  }

  EndpointCore& spoke(size_t i) { return *spokes_[i]; }

  std::unique_ptr<EndpointCore> hub;
  NetAddr hub_addr;
  std::vector<NetAddr> spoke_addr;
  TimeNs now = TimeNs(1000000);

 private:
  static CoreConfig Config(uint64_t inc) {
    CoreConfig c;
    c.local_port = 7000;
    c.incarnation = inc;
    c.seed = inc;
    return c;
  }
  EndpointCore* Find(const NetAddr& a) {
    if (a == hub_addr) return hub.get();
    for (size_t i = 0; i < spoke_addr.size(); ++i) {
      if (spoke_addr[i] == a) return spokes_[i].get();
    }
    return nullptr;
  }
  bool Drain(EndpointCore& src, const NetAddr& src_addr) {
    bool moved = false;
    for (;;) {
      batch_.clear();
      if (src.PollTx(now, &batch_) == 0) return moved;
      for (const auto& p : batch_.packets()) {
        std::vector<uint8_t> bytes(p.data, p.data + p.len);
        if (EndpointCore* dst = Find(p.dst)) {
          dst->OnDatagram(now, src_addr, bytes, false);
        }
        moved = true;
      }
    }
  }

  std::vector<std::unique_ptr<EndpointCore>> spokes_;
  TxBatch batch_{64, 1472};
};

size_t Received(EndpointCore& c) {
  std::vector<Completion> v;
  c.PollCompletions(&v, SIZE_MAX);
  size_t n = 0;
  for (const Completion& x : v) n += x.type == CompletionType::kRecv;
  return n;
}

TEST(EndpointCoreIdlePeersTest, IdlePeersCostAPollNothing) {
  constexpr int kSpokes = 200;
  Star star(kSpokes);
  const std::vector<uint8_t> msg(3000, 0x5a);
  for (int i = 0; i < kSpokes; ++i) {
    ASSERT_TRUE(star.hub
                    ->Send(star.now, star.spoke_addr[i],
                           OutMessage::Copy(msg.data(), msg.size()))
                    .ok());
  }
  star.Run(10000);
  for (int i = 0; i < kSpokes; ++i) ASSERT_EQ(Received(star.spoke(i)), 1u);
  EXPECT_EQ(star.hub->stats().peers, static_cast<uint64_t>(kSpokes));
  EXPECT_TRUE(star.hub->NextWake().IsInfinite());  // all acked, all idle

  // Idle polls visit no peer.
  const uint64_t before = star.hub->tx_peer_visits();
  TxBatch batch(64, 1472);
  for (int k = 0; k < 1000; ++k) {
    star.now += DurationNs::Micros(1);
    star.hub->OnTimer(star.now);
    batch.clear();
    EXPECT_EQ(star.hub->PollTx(star.now, &batch), 0u);
  }
  EXPECT_EQ(star.hub->tx_peer_visits(), before);
  EXPECT_FALSE(star.hub->WantsToSend(star.now));

  // A send to one peer visits that peer, and the message still arrives.
  ASSERT_TRUE(star.hub
                  ->Send(star.now, star.spoke_addr[77],
                         OutMessage::Copy(msg.data(), msg.size()))
                  .ok());
  batch.clear();
  EXPECT_GT(star.hub->PollTx(star.now, &batch), 0u);
  EXPECT_LE(star.hub->tx_peer_visits() - before, 2u);
  EXPECT_EQ(star.hub->stats().tx_peer_visits, star.hub->tx_peer_visits());
  for (const auto& p : batch.packets()) {
    ASSERT_EQ(p.dst, star.spoke_addr[77]);
    std::vector<uint8_t> bytes(p.data, p.data + p.len);
    star.spoke(77).OnDatagram(star.now, star.hub_addr, bytes, false);
  }
  star.Run(10000);
  EXPECT_EQ(Received(star.spoke(77)), 1u);
  EXPECT_EQ(Received(star.spoke(78)), 0u);
}

}  // namespace
}  // namespace braid::endpoint

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

// The hub sends `msg` to every spoke; each receives it once.
void SendToEverySpoke(Star& star, const std::vector<uint8_t>& msg) {
  for (size_t i = 0; i < star.spoke_addr.size(); ++i) {
    ASSERT_TRUE(star.hub
                    ->Send(star.now, star.spoke_addr[i],
                           OutMessage::Copy(msg.data(), msg.size()))
                    .ok());
  }
  star.Run(10000);
  for (size_t i = 0; i < star.spoke_addr.size(); ++i) {
    ASSERT_EQ(Received(star.spoke(i)), 1u);
  }
}

TEST(EndpointCoreIdlePeersTest, IdlePeersCostAPollNothing) {
  constexpr int kSpokes = 200;
  Star star(kSpokes);
  const std::vector<uint8_t> msg(3000, 0x5a);
  ASSERT_NO_FATAL_FAILURE(SendToEverySpoke(star, msg));
  EXPECT_EQ(star.hub->stats().peers, static_cast<uint64_t>(kSpokes));
  // All acked, all idle: no peer timer is due, only the time they may sleep.
  EXPECT_TRUE(star.hub->NextPeerTimer().IsInfinite());
  EXPECT_GT(star.hub->NextWake(), star.now);
  EXPECT_LE(star.hub->NextWake(), star.now + ProtocolOptions{}.peer_timeout);

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

// Idle peers go to sleep a peer_timeout after their last activity (their
// windows and buffers freed), keep the endpoint's totals, and wake at the
// next send with the message delivered once.
TEST(EndpointCoreIdlePeersTest, IdlePeersSleepAndWakeAtTheNextSend) {
  constexpr int kSpokes = 100;
  Star star(kSpokes);
  const std::vector<uint8_t> msg(3000, 0x5a);
  ASSERT_NO_FATAL_FAILURE(SendToEverySpoke(star, msg));
  const EndpointStats before = star.hub->stats();
  EXPECT_EQ(before.peers_asleep, 0u);

  // A driver runs OnTimer while NextWake says so: more than
  // kSleepsPerTimer peers take more than one call.
  star.now += ProtocolOptions{}.peer_timeout;
  int calls = 0;
  while (star.hub->NextWake() <= star.now) {
    star.hub->OnTimer(star.now);
    ++calls;
  }
  EXPECT_GE(calls, 2);
  EXPECT_TRUE(star.hub->NextWake().IsInfinite());
  const EndpointStats asleep = star.hub->stats();
  EXPECT_EQ(asleep.peers, static_cast<uint64_t>(kSpokes));
  EXPECT_EQ(asleep.peers_asleep, static_cast<uint64_t>(kSpokes));
  EXPECT_EQ(asleep.peers_slept, static_cast<uint64_t>(kSpokes));
  // The totals keep what the sleeping peers' halves counted.
  EXPECT_EQ(asleep.messages_sent, before.messages_sent);
  EXPECT_EQ(asleep.packets_sent, before.packets_sent);
  EXPECT_EQ(asleep.acks_received, before.acks_received);
  EXPECT_EQ(asleep.reliability.retransmits, before.reliability.retransmits);
  // Each sleeping peer keeps its identity and its counters.
  for (const PeerStats& p : star.hub->peer_stats(false)) {
    EXPECT_TRUE(p.proven);
    EXPECT_EQ(p.messages_sent, 1u);
    EXPECT_GT(p.packets_sent, 0u);
    EXPECT_GT(p.acks_received, 0u);
  }

  ASSERT_TRUE(star.hub
                  ->Send(star.now, star.spoke_addr[7],
                         OutMessage::Copy(msg.data(), msg.size()))
                  .ok());
  EXPECT_EQ(star.hub->stats().peers_asleep, static_cast<uint64_t>(kSpokes - 1));
  star.Run(10000);
  EXPECT_EQ(Received(star.spoke(7)), 1u);
  EXPECT_EQ(Received(star.spoke(8)), 0u);
  const EndpointStats after = star.hub->stats();
  EXPECT_EQ(after.messages_sent, before.messages_sent + 1);
  for (const PeerStats& p : star.hub->peer_stats(false)) {
    EXPECT_EQ(p.messages_sent, p.addr == star.spoke_addr[7] ? 2u : 1u);
  }
  EXPECT_EQ(after.messages_failed, 0u);
}

}  // namespace
}  // namespace braid::endpoint

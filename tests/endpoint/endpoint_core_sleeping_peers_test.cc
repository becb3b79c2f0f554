// A sleeping peer (Peer::Sleep: idle for peer_timeout, its halves freed)
// goes on exactly where it stopped: a sender that never slept continues its
// session into it with no NEED_SYNC, ordered streams keep their place, old
// datagrams replayed into it deliver nothing, and a peer that cannot be
// rebuilt exactly (data held above its cum) stays awake.
#include <vector>

#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;
using testing::Msg;
using testing::Pattern;
using testing::Wire;

// A's peers sleep after 2 s idle; B's after 60 s, so B's side of the pair
// stays awake and goes on in its old session.
class SleepingPeersTest : public ::testing::Test {
 protected:
  SleepingPeersTest() {
    ProtocolOptions slow;
    slow.peer_timeout = DurationNs::Seconds(60);
    p_.ConfigureB(slow);
    p_.filter = [this](const Wire& w) {
      CountNeedSync(w);
      if (w.to == p_.a_addr && record_) recorded_.push_back(w);
      return !(drop_ && drop_(w));
    };
  }

  // Runs A's timers as a driver does, `d` later.
  void Idle(DurationNs d) {
    p_.now += d;
    while (p_.a->NextWake() <= p_.now) p_.a->OnTimer(p_.now);
  }
  std::vector<Completion> Received(EndpointCore& c) {
    std::vector<Completion> out;
    for (Completion& x : p_.Drain(c)) {
      if (x.type == CompletionType::kRecv) out.push_back(std::move(x));
    }
    return out;
  }
  OutMessage Ordered(uint16_t stream, uint64_t cookie) {
    OutMessage m = Msg(Pattern(2000, static_cast<uint32_t>(cookie)), cookie);
    m.stream = stream;
    return m;
  }
  void CountNeedSync(const Wire& w) {
    wire::FrameReader r(
        absl::MakeConstSpan(w.bytes).subspan(wire::kPreambleSize));
    wire::Frame f;
    while (r.Next(&f)) {
      need_syncs_ += f.type == wire::FrameType::kCtrl &&
                     f.ctrl.type == wire::CtrlType::kNeedSync;
    }
  }

  CorePair p_;
  bool record_ = false;
  std::vector<Wire> recorded_;
  std::function<bool(const Wire&)> drop_;
  int need_syncs_ = 0;
};

TEST_F(SleepingPeersTest, AnAwakeSenderGoesOnInItsSessionIntoASleepingPeer) {
  ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Ordered(1, 1)).ok());
  ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Ordered(1, 2)).ok());
  ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Ordered(0, 3)).ok());
  p_.Run(10000);
  ASSERT_EQ(Received(*p_.a).size(), 3u);

  Idle(DurationNs::Seconds(2) + DurationNs::Millis(1));
  ASSERT_EQ(p_.a->stats().peers_asleep, 1u);
  ASSERT_EQ(p_.b->stats().peers_asleep, 0u);

  // Stream 1 goes on at its third message; nothing asks B to resync.
  ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Ordered(1, 4)).ok());
  ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Ordered(0, 5)).ok());
  p_.Run(10000);
  std::vector<Completion> got = Received(*p_.a);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(need_syncs_, 0);
  for (const Completion& c : got) {
    EXPECT_EQ(c.data, Pattern(2000, c.stream == 1 ? 4 : 5));
  }
  EXPECT_EQ(p_.a->stats().peers_asleep, 0u);
  EXPECT_EQ(p_.a->stats().ordered_refused, 0u);
  EXPECT_EQ(p_.b->stats().messages_failed, 0u);
}

TEST_F(SleepingPeersTest, OldDatagramsReplayedIntoASleepingPeerDeliverNothing) {
  record_ = true;
  for (uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Ordered(0, i)).ok());
  }
  p_.Run(10000);
  ASSERT_EQ(Received(*p_.a).size(), 3u);
  record_ = false;
  ASSERT_FALSE(recorded_.empty());

  Idle(DurationNs::Seconds(2) + DurationNs::Millis(1));
  ASSERT_EQ(p_.a->stats().peers_asleep, 1u);
  // B's late retransmissions (a copy of everything it sent) arrive.
  for (const Wire& w : recorded_) {
    p_.a->OnDatagram(p_.now, w.from, w.bytes, false);
  }
  p_.Run(10000);
  EXPECT_TRUE(Received(*p_.a).empty());
  EXPECT_EQ(p_.a->stats().messages_received, 3u);
  EXPECT_GT(p_.a->stats().drops.duplicates, 0u);
}

TEST_F(SleepingPeersTest, BothAsleepTheNextSendsStartNewSessions) {
  ProtocolOptions fast;  // B sleeps after 2 s too
  p_.ConfigureB(fast);
  ASSERT_TRUE(p_.a->Send(p_.now, p_.b_addr, Msg(Pattern(5000, 1), 1)).ok());
  ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Msg(Pattern(5000, 2), 2)).ok());
  p_.Run(10000);
  ASSERT_EQ(Received(*p_.a).size(), 1u);
  ASSERT_EQ(Received(*p_.b).size(), 1u);

  p_.now += DurationNs::Seconds(2) + DurationNs::Millis(1);
  for (EndpointCore* c : {p_.a.get(), p_.b.get()}) {
    while (c->NextWake() <= p_.now) c->OnTimer(p_.now);
    ASSERT_EQ(c->stats().peers_asleep, 1u);
  }
  ASSERT_TRUE(p_.a->Send(p_.now, p_.b_addr, Msg(Pattern(5000, 3), 3)).ok());
  ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Msg(Pattern(5000, 4), 4)).ok());
  p_.Run(10000);
  std::vector<Completion> at_a = Received(*p_.a), at_b = Received(*p_.b);
  ASSERT_EQ(at_a.size(), 1u);
  ASSERT_EQ(at_b.size(), 1u);
  EXPECT_EQ(at_a[0].data, Pattern(5000, 4));
  EXPECT_EQ(at_b[0].data, Pattern(5000, 3));
  EXPECT_EQ(need_syncs_, 0);
  EXPECT_EQ(p_.a->stats().messages_failed + p_.b->stats().messages_failed, 0u);
}

TEST_F(SleepingPeersTest, APeerHoldingDataAboveItsCumStaysAwake) {
  // B's first message (one datagram) never reaches A until allowed; the
  // later ones do, so A holds data above its cum and B owes the hole.
  bool first = true;
  wire::Psn hole;
  bool blocking = true;
  drop_ = [&](const Wire& w) {
    if (w.to != p_.a_addr || !blocking) return false;
    wire::FrameReader r(
        absl::MakeConstSpan(w.bytes).subspan(wire::kPreambleSize));
    wire::Frame f;
    while (r.Next(&f)) {
      if (f.type != wire::FrameType::kData) continue;
      if (first) {
        first = false;
        hole = f.data.psn;
      }
      if (f.data.psn == hole) return true;
    }
    return false;
  };
  for (uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, Msg(Pattern(500, i), i)).ok());
  }
  p_.Run(2000);
  ASSERT_EQ(Received(*p_.a).size(), 2u);

  Idle(DurationNs::Seconds(3));
  EXPECT_EQ(p_.a->stats().peers_asleep, 0u);

  blocking = false;
  p_.Run(200000, DurationNs::Micros(50));
  std::vector<Completion> got = Received(*p_.a);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, Pattern(500, 1));
  EXPECT_EQ(p_.a->stats().messages_received, 3u);
  EXPECT_EQ(p_.b->stats().messages_failed, 0u);
}

}  // namespace
}  // namespace braid::endpoint

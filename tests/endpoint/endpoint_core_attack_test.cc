// An off-path attacker against two EndpointCores in simulated time: it can
// send any datagram with any source address but sees none of the traffic
// between the two. Forged restarts (SYNC, STALE), forged replies (acks,
// NEED_SYNC, STALE) with guessed incarnations, forged and replayed challenge
// replies, and replayed datagrams must change nothing; a genuine restart
// must still be recognised, after a challenge.
#include <algorithm>
#include <vector>

#include "base/rng.h"
#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"
#include "tests/endpoint/forge.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;
using testing::Forge;
using testing::Msg;
using testing::Pattern;
using testing::SrcIncarnationOf;
using testing::Wire;
using Bytes = std::vector<uint8_t>;

template <typename Fn>
void RunUntil(CorePair& p, Fn done, int max_chunks = 200) {
  for (int i = 0; i < max_chunks && !done(); ++i) p.Run(1000);
}

// Lets the attacker (as if on-path once) learn what A calls itself towards
// B: *a_to_b is set from the first datagram A sends.
void SniffAToB(CorePair& p, uint64_t* a_to_b) {
  p.filter = [&p, a_to_b](const Wire& w) {
    if (w.from == p.a_addr && *a_to_b == 0) *a_to_b = SrcIncarnationOf(w.bytes);
    return true;
  };
}

// Both directions established: each side has delivered one message of the
// other and knows its incarnation.
void Establish(CorePair& p) {
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(Pattern(300, 1), 1)).ok());
  ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(Pattern(300, 2), 2)).ok());
  p.Run(500);
  ASSERT_EQ(p.Drain(*p.a).size(), 2u);  // B's message, and our send done
  ASSERT_EQ(p.Drain(*p.b).size(), 2u);
}

// A bulk transfer both ways that the attacker strikes in the middle of:
// `strike` runs after a few rounds. Returns every completion of each side.
struct Outcome {
  std::vector<Completion> a, b;
};
template <typename Strike>
Outcome TransferUnderAttack(CorePair& p, const Bytes& to_b, const Bytes& to_a,
                            Strike strike) {
  Outcome o;
  EXPECT_TRUE(p.a->Send(p.now, p.b_addr, Msg(to_b, 100)).ok());
  EXPECT_TRUE(p.b->Send(p.now, p.a_addr, Msg(to_a, 200)).ok());
  p.Run(3);
  strike();
  RunUntil(p, [&] {
    auto va = p.Drain(*p.a), vb = p.Drain(*p.b);
    o.a.insert(o.a.end(), va.begin(), va.end());
    o.b.insert(o.b.end(), vb.begin(), vb.end());
    return o.a.size() >= 2 && o.b.size() >= 2;
  });
  p.Run(2000);  // anything late or extra
  auto va = p.Drain(*p.a), vb = p.Drain(*p.b);
  o.a.insert(o.a.end(), va.begin(), va.end());
  o.b.insert(o.b.end(), vb.begin(), vb.end());
  return o;
}

// Each side sent its message exactly once and received exactly the other's.
void ExpectUntouched(const Outcome& o, const Bytes& to_b, const Bytes& to_a) {
  for (const auto* side : {&o.a, &o.b}) {
    ASSERT_EQ(side->size(), 2u);
    const bool is_a = side == &o.a;
    size_t done = 0, recv = 0;
    for (const Completion& c : *side) {
      if (c.type == CompletionType::kSendDone) {
        ++done;
        EXPECT_EQ(c.cookie, is_a ? 100u : 200u);
      } else if (c.type == CompletionType::kRecv) {
        ++recv;
        EXPECT_EQ(c.data, is_a ? to_a : to_b);
      } else {
        ADD_FAILURE() << (is_a ? "A" : "B") << ": send failed with "
                      << FailureCauseName(c.cause);
      }
    }
    EXPECT_EQ(done, 1u);
    EXPECT_EQ(recv, 1u);
  }
}

TEST(EndpointCoreAttackTest, ForgedSyncClaimingARestartIsChallengedNotObeyed) {
  CorePair p;
  Establish(p);
  const Bytes to_b = Pattern(200000, 3), to_a = Pattern(150000, 4);
  Rng rng(99);
  const Outcome o = TransferUnderAttack(p, to_b, to_a, [&] {
    for (int i = 0; i < 50; ++i) {
      // "B restarted": a new incarnation, a SYNC and a message, from B's
      // address. And the same against B from A's.
      const uint64_t inc = rng.Next() | 1;
      const uint32_t base = static_cast<uint32_t>(rng.Next());
      Forge f;
      f.Ctrl(wire::CtrlType::kSync, inc, 0, static_cast<uint32_t>(rng.Next()),
             base)
          .Data(inc, 0, base, 0, {'E', 'V', 'I', 'L'});
      p.a->OnDatagram(p.now, p.b_addr, f.bytes(), false);
      p.b->OnDatagram(p.now, p.a_addr, f.bytes(), false);
    }
  });
  ExpectUntouched(o, to_b, to_a);
  for (EndpointCore* c : {p.a.get(), p.b.get()}) {
    const EndpointStats s = c->stats();
    EXPECT_EQ(s.peer_restarts, 0u);
    EXPECT_EQ(s.drops.unproven_claim, 50u);
    EXPECT_GE(s.challenges_sent, 1u);
    EXPECT_EQ(s.challenges_answered, 0u)
        << "the genuine peer answered a challenge for a life it never had";
  }
}

TEST(EndpointCoreAttackTest, ForgedStaleClaimIsChallengedNotObeyed) {
  CorePair p;
  Establish(p);
  // Suppose the attacker even knows what A calls itself towards B (an
  // on-path leak): a STALE naming it and a new life of B is still only a
  // claim.
  uint64_t a_to_b = 0;
  SniffAToB(p, &a_to_b);
  const Bytes to_b = Pattern(100000, 5), to_a = Pattern(1000, 6);
  const Outcome o = TransferUnderAttack(p, to_b, to_a, [&] {
    ASSERT_NE(a_to_b, 0u);
    Forge f;
    f.Ctrl(wire::CtrlType::kStale, 0x5eed, a_to_b, 0, 0);
    p.a->OnDatagram(p.now, p.b_addr, f.bytes(), false);
  });
  ExpectUntouched(o, to_b, to_a);
  EXPECT_EQ(p.a->stats().peer_restarts, 0u);
  EXPECT_EQ(p.a->stats().drops.unproven_claim, 1u);
}

TEST(EndpointCoreAttackTest, RepliesNamingAGuessedIncarnationAreDropped) {
  CorePair p;
  // The attacker talks to A from its own address and learns what A calls
  // itself there; towards B, A presents another, unrelated incarnation.
  const NetAddr x = NetAddr::Ipv4(0x0a000063, 7000);
  CoreConfig cc;
  cc.local_port = 7000;
  cc.incarnation = 0x7777;
  cc.seed = 7;
  EndpointCore attacker(cc);
  ASSERT_TRUE(attacker.Send(p.now, p.a_addr, Msg(Pattern(10, 9), 9)).ok());
  uint64_t a_to_x = 0;
  for (int round = 0; round < 20; ++round) {
    TxBatch batch(64, 2048);
    attacker.PollTx(p.now, &batch);
    for (const auto& pk : batch.packets()) {
      p.a->OnDatagram(p.now, x, absl::MakeConstSpan(pk.data, pk.len), false);
    }
    batch.clear();
    p.a->PollTx(p.now, &batch);
    for (const auto& pk : batch.packets()) {
      const Bytes d(pk.data, pk.data + pk.len);
      if (pk.dst == x && a_to_x == 0) a_to_x = SrcIncarnationOf(d);
      attacker.OnDatagram(p.now, p.a_addr, d, false);
    }
  }
  ASSERT_NE(a_to_x, 0u);
  ASSERT_EQ(p.Drain(*p.a).size(), 1u);  // the attacker's own message
  Establish(p);
  const uint64_t stale_before = p.a->stats().drops.stale_incarnation;
  const Bytes to_b = Pattern(300000, 7), to_a = Pattern(300000, 8);
  Rng rng(5);
  int forged = 0;
  const Outcome o = TransferUnderAttack(p, to_b, to_a, [&] {
    for (uint64_t dst : {a_to_x, rng.Next() | 1, uint64_t{0x1111}}) {
      const uint64_t src = rng.Next() | 1;
      // Acks "from B" completing everything, NEED_SYNC and STALE tearing
      // the session down, data injecting a message.
      for (const Bytes& d :
           {Forge()
                .Ack(src, dst, static_cast<uint32_t>(rng.Next()),
                     static_cast<uint32_t>(rng.Next()))
                .bytes(),
            Forge().Ctrl(wire::CtrlType::kNeedSync, src, dst, 0, 0).bytes(),
            Forge().Ctrl(wire::CtrlType::kStale, src, dst, 0, 0).bytes(),
            Forge()
                .Data(src, dst, static_cast<uint32_t>(rng.Next()), 0,
                      {'E', 'V', 'I', 'L'})
                .bytes()}) {
        p.a->OnDatagram(p.now, p.b_addr, d, false);
        ++forged;
      }
    }
  });
  ExpectUntouched(o, to_b, to_a);
  EXPECT_EQ(p.a->stats().peer_restarts, 0u);
  EXPECT_GE(p.a->stats().drops.stale_incarnation - stale_before,
            static_cast<uint64_t>(forged));
}

TEST(EndpointCoreAttackTest, ForgedChallengeReplyIsCountedAndChangesNothing) {
  CorePair p;
  Establish(p);
  uint64_t a_to_b = 0;
  SniffAToB(p, &a_to_b);
  const Bytes to_b = Pattern(50000, 1), to_a = Pattern(50000, 2);
  Rng rng(3);
  const Outcome o = TransferUnderAttack(p, to_b, to_a, [&] {
    ASSERT_NE(a_to_b, 0u);
    // A claim, then 1000 guesses at the nonce of the challenge it drew.
    const uint64_t fake = 0xbadbadbad1;
    p.a->OnDatagram(p.now, p.b_addr,
                    Forge().Ctrl(wire::CtrlType::kSync, fake, 0, 3, 0).bytes(),
                    false);
    for (int i = 0; i < 1000; ++i) {
      p.a->OnDatagram(p.now, p.b_addr,
                      Forge()
                          .Ctrl(wire::CtrlType::kChallengeReply, fake, a_to_b,
                                0, 0, rng.Next())
                          .bytes(),
                      false);
    }
  });
  ExpectUntouched(o, to_b, to_a);
  EXPECT_EQ(p.a->stats().peer_restarts, 0u);
  EXPECT_EQ(p.a->stats().drops.bad_challenge_reply, 1000u);
}

TEST(EndpointCoreAttackTest, ReplayedDatagramsDeliverNothingTwice) {
  CorePair p;
  std::vector<Wire> captured;
  p.filter = [&](const Wire& w) {
    if (w.from == p.b_addr) captured.push_back(w);
    return true;
  };
  std::vector<Bytes> sent;
  for (int i = 0; i < 20; ++i) {
    sent.push_back(Pattern(100 + 3000 * i, i));
    ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(sent.back(), i)).ok());
  }
  std::vector<Completion> ra;
  RunUntil(p, [&] {
    auto v = p.Drain(*p.a);
    ra.insert(ra.end(), v.begin(), v.end());
    return ra.size() >= sent.size();
  });
  ASSERT_EQ(ra.size(), sent.size());
  p.filter = nullptr;
  ASSERT_FALSE(captured.empty());
  // The whole capture again, twice, later and in reverse.
  for (int pass = 0; pass < 2; ++pass) {
    p.Run(100);
    for (auto it = captured.rbegin(); it != captured.rend(); ++it) {
      p.a->OnDatagram(p.now, it->from, it->bytes, false);
    }
  }
  p.Run(2000);
  EXPECT_TRUE(p.Drain(*p.a).empty()) << "a replay was delivered";
  // After B restarts, its old life's datagrams are stale at A.
  p.RestartB(0x9999);
  const Bytes fresh = Pattern(500, 77);
  ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(fresh, 77)).ok());
  std::vector<Completion> after;
  RunUntil(p, [&] {
    auto v = p.Drain(*p.a);
    after.insert(after.end(), v.begin(), v.end());
    return !after.empty();
  });
  for (const Wire& w : captured) p.a->OnDatagram(p.now, w.from, w.bytes, false);
  p.Run(2000);
  auto v = p.Drain(*p.a);
  after.insert(after.end(), v.begin(), v.end());
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].data, fresh);
  EXPECT_EQ(p.a->stats().peer_restarts, 1u);
}

}  // namespace
}  // namespace braid::endpoint

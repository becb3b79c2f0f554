// First contact against an off-path forger that spoofs the peer's address.
// A first contact is taken on trust (no round trip), so a forger heard
// before the genuine peer gets its life believed provisionally. Once the
// genuine peer speaks, the two lives contest the address: nothing from
// either is taken until one answers a challenge there, the forger's life
// is then replaced, and sends made towards it meanwhile go on to the
// genuine peer instead of failing (protocol.md §3).
#include <string>
#include <vector>

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
using testing::Wire;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kForgedInc = 0x5eed5eed5eed5eedull;
constexpr uint32_t kForgedSession = 9;
constexpr uint32_t kForgedBase = 5000;

Bytes Evil(int i) {
  const std::string s = "EVIL" + std::to_string(i);
  return Bytes(s.begin(), s.end());
}

// The forger's session from B's address: a SYNC with its first message
// (`first`), or a later message alone.
Bytes ForgedMessage(int i, bool first) {
  Forge f;
  if (first) {
    f.Ctrl(wire::CtrlType::kSync, kForgedInc, 0, kForgedSession, kForgedBase);
  }
  f.Data(kForgedInc, 0, kForgedBase + i, i, Evil(i));
  return f.bytes();
}

// Everything A and B complete from now until both have what they expect.
struct Seen {
  std::vector<Completion> a, b;
  void Take(CorePair& p) {
    for (Completion& c : p.Drain(*p.a)) a.push_back(std::move(c));
    for (Completion& c : p.Drain(*p.b)) b.push_back(std::move(c));
  }
};

size_t Count(const std::vector<Completion>& v, CompletionType type,
             uint64_t cookie = 0) {
  size_t n = 0;
  for (const Completion& c : v) {
    if (c.type == type && (type == CompletionType::kRecv || c.cookie == cookie))
      ++n;
  }
  return n;
}

size_t Received(const std::vector<Completion>& v, const Bytes& bytes) {
  size_t n = 0;
  for (const Completion& c : v) {
    if (c.type == CompletionType::kRecv && c.data == bytes) ++n;
  }
  return n;
}

void RunUntilDone(CorePair& p, Seen* seen, size_t a_wants, size_t b_wants) {
  for (int i = 0; i < 400; ++i) {
    p.Run(1000);
    seen->Take(p);
    if (seen->a.size() >= a_wants && seen->b.size() >= b_wants) break;
  }
  p.Run(2000);  // anything late or extra
  seen->Take(p);
}

TEST(EndpointCoreFirstContactTest,
     ForgerHeardFirstIsSilencedWhenThePeerSpeaks) {
  CorePair p;
  // The forger reaches A first: its life is taken on trust.
  p.a->OnDatagram(p.now, p.b_addr, ForgedMessage(0, true), false);
  Seen seen;
  seen.Take(p);
  const size_t forged_before_contact = Received(seen.a, Evil(0));
  // A sends to B towards that life; those datagrams are still on their way
  // when B's own first datagrams (dst = 0: B has not heard from A) arrive.
  const Bytes to_b = Pattern(20000, 1), to_a = Pattern(30000, 2);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(to_b, 1)).ok());
  bool hold_a = true;
  p.filter = [&](const Wire& w) { return !(hold_a && w.from == p.a_addr); };
  ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(to_a, 2)).ok());
  p.Run(1);
  // The forger goes on with its session: now contested, nothing of it
  // may be delivered.
  for (int i = 1; i <= 3; ++i) {
    p.a->OnDatagram(p.now, p.b_addr, ForgedMessage(i, false), false);
  }
  hold_a = false;
  RunUntilDone(p, &seen, forged_before_contact + 2, 2);

  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(Received(seen.a, Evil(i)), 0u) << "forged message " << i;
  }
  EXPECT_EQ(Received(seen.a, to_a), 1u);
  EXPECT_EQ(Count(seen.a, CompletionType::kSendDone, 1), 1u)
      << "A's send towards the forged life must go on to B, not fail";
  EXPECT_EQ(Count(seen.a, CompletionType::kSendFailed, 1), 0u);
  EXPECT_EQ(Received(seen.b, to_b), 1u);
  EXPECT_EQ(Count(seen.b, CompletionType::kSendDone, 2), 1u);
  const EndpointStats s = p.a->stats();
  EXPECT_EQ(s.provisional_replaced, 1u);
  EXPECT_EQ(s.peer_restarts, 0u);
  EXPECT_GE(s.drops.contested_incarnation, 3u);
  EXPECT_GE(s.challenges_sent, 2u) << "both lives asked to prove themselves";
  EXPECT_EQ(p.b->stats().challenges_answered, 1u)
      << "B proves its own life and not the forger's";
}

TEST(EndpointCoreFirstContactTest,
     ForgersAtBothEndsAreSilencedByTheFirstFrame) {
  // A forger reaches each side first, posing as the other. B's first
  // datagrams to A then name the incarnation the forger claimed for A (a
  // wrong one: A drops them and answers STALE), yet they show A that a
  // second life speaks from B's address: the forger's life there is held.
  CorePair p;
  p.a->OnDatagram(p.now, p.b_addr, ForgedMessage(0, true), false);
  p.b->OnDatagram(p.now, p.a_addr, ForgedMessage(0, true), false);
  Seen seen;
  seen.Take(p);
  const size_t forged_at_a = Received(seen.a, Evil(0));
  const Bytes to_b = Pattern(3000, 5), to_a = Pattern(4000, 6);
  bool hold_a = true;
  p.filter = [&](const Wire& w) { return !(hold_a && w.from == p.a_addr); };
  ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(to_a, 2)).ok());
  p.Run(1);  // B's datagrams reach A, A's are held
  EXPECT_GE(p.a->stats().drops.stale_incarnation, 1u);
  for (int i = 1; i <= 3; ++i) {
    p.a->OnDatagram(p.now, p.b_addr, ForgedMessage(i, false), false);
  }
  EXPECT_GE(p.a->stats().drops.contested_incarnation, 3u);
  hold_a = false;
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(to_b, 1)).ok());
  RunUntilDone(p, &seen, forged_at_a + 2, 3);

  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(Received(seen.a, Evil(i)), 0u) << "forged message " << i;
  }
  EXPECT_EQ(Received(seen.a, to_a), 1u);
  EXPECT_EQ(Received(seen.b, to_b), 1u);
  EXPECT_EQ(Count(seen.a, CompletionType::kSendDone, 1), 1u);
  EXPECT_EQ(Count(seen.b, CompletionType::kSendDone, 2), 1u);
  EXPECT_EQ(p.a->stats().peer_restarts + p.b->stats().peer_restarts, 0u);
}

TEST(EndpointCoreFirstContactTest, PeerHeardFirstProvesItselfAgainstARival) {
  CorePair p;
  // B's first message reaches A (dst = 0); A's answers are held.
  bool hold_a = true;
  p.filter = [&](const Wire& w) { return !(hold_a && w.from == p.a_addr); };
  const Bytes m1 = Pattern(500, 3), m2 = Pattern(9000, 4);
  ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(m1, 1)).ok());
  p.Run(1);
  Seen seen;
  seen.Take(p);
  ASSERT_EQ(Received(seen.a, m1), 1u);
  // A rival life claims B's address: B's life, taken on trust too, is
  // contested until one of them answers a challenge.
  p.a->OnDatagram(p.now, p.b_addr, ForgedMessage(0, true), false);
  ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(m2, 2)).ok());
  p.Run(1);  // B's datagrams (still dst = 0) arrive while contested
  EXPECT_GE(p.a->stats().drops.contested_incarnation, 1u);
  hold_a = false;  // A's challenges reach B
  RunUntilDone(p, &seen, 2, 2);

  EXPECT_EQ(Received(seen.a, Evil(0)), 0u);
  EXPECT_EQ(Received(seen.a, m1), 1u);
  EXPECT_EQ(Received(seen.a, m2), 1u);
  EXPECT_EQ(Count(seen.b, CompletionType::kSendDone, 1), 1u);
  EXPECT_EQ(Count(seen.b, CompletionType::kSendDone, 2), 1u);
  const EndpointStats s = p.a->stats();
  EXPECT_EQ(s.provisional_replaced, 0u);
  EXPECT_EQ(s.peer_restarts, 0u);
  EXPECT_GE(s.drops.unproven_claim, 1u);
  EXPECT_EQ(p.b->stats().challenges_answered, 1u);
}

}  // namespace
}  // namespace braid::endpoint

// Packet protection (auth, encrypt) through two EndpointCores: traffic
// flows and is sealed; every bit flipped in a sealed datagram, a datagram
// sealed with another domain's key, an unprotected datagram and replays are
// dropped, counted, and change nothing; a restart still works.
#include <algorithm>
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
using Bytes = std::vector<uint8_t>;

// Sends `to_a` B->A and `to_b` A->B; runs until both sides have their
// completions, then a while longer. Returns A's and B's completions.
std::pair<std::vector<Completion>, std::vector<Completion>> Exchange(
    CorePair& p, const Bytes& to_b, const Bytes& to_a, uint64_t cookie) {
  EXPECT_TRUE(p.a->Send(p.now, p.b_addr, Msg(to_b, cookie)).ok());
  EXPECT_TRUE(p.b->Send(p.now, p.a_addr, Msg(to_a, cookie + 1)).ok());
  std::vector<Completion> a, b;
  for (int i = 0; i < 200 && (a.size() < 2 || b.size() < 2); ++i) {
    p.Run(1000);
    auto va = p.Drain(*p.a), vb = p.Drain(*p.b);
    a.insert(a.end(), va.begin(), va.end());
    b.insert(b.end(), vb.begin(), vb.end());
  }
  p.Run(1000);
  auto va = p.Drain(*p.a), vb = p.Drain(*p.b);
  a.insert(a.end(), va.begin(), va.end());
  b.insert(b.end(), vb.begin(), vb.end());
  return {a, b};
}

// Exactly: one send done and one message received, with these bytes.
void ExpectOneEach(const std::vector<Completion>& v, const Bytes& received) {
  ASSERT_EQ(v.size(), 2u);
  size_t done = 0, recv = 0;
  for (const Completion& c : v) {
    if (c.type == CompletionType::kSendDone) ++done;
    if (c.type == CompletionType::kRecv) {
      ++recv;
      EXPECT_EQ(c.data, received);
    }
  }
  EXPECT_EQ(done, 1u);
  EXPECT_EQ(recv, 1u);
}

bool Contains(const Bytes& hay, const Bytes& needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) !=
         hay.end();
}

// Datagrams dropped before their frames were looked at: not a braid
// datagram, not sealed right, or no key to check it with.
uint64_t Rejected(const EndpointStats& s) {
  return s.drops.bad_preamble + s.drops.truncated + s.drops.bad_version +
         s.drops.auth_failed + s.drops.auth_no_key;
}

class SecurityTest : public ::testing::TestWithParam<SecurityMode> {};

INSTANTIATE_TEST_SUITE_P(Modes, SecurityTest,
                         ::testing::Values(SecurityMode::kAuth,
                                           SecurityMode::kEncrypt),
                         [](const auto& info) {
                           return std::string(SecurityModeName(info.param));
                         });

TEST_P(SecurityTest, MessagesFlowSealedAndEncryptHidesThePayload) {
  CorePair p({}, 1472, GetParam());
  const Bytes marker = {'S', 'E', 'C', 'R', 'E', 'T', '-', 'B', 'Y', 'T', 'E'};
  Bytes to_b = Pattern(100000, 1);
  std::copy(marker.begin(), marker.end(), to_b.begin() + 5000);
  bool seen_in_clear = false;
  size_t max_len = 0;
  p.filter = [&](const Wire& w) {
    seen_in_clear |= Contains(w.bytes, marker);
    max_len = std::max(max_len, w.bytes.size());
    return true;
  };
  const Bytes to_a = Pattern(3000, 2);
  auto [a, b] = Exchange(p, to_b, to_a, 10);
  ExpectOneEach(a, to_a);
  ExpectOneEach(b, to_b);
  EXPECT_EQ(seen_in_clear, GetParam() == SecurityMode::kAuth);
  EXPECT_LE(max_len, 1472u) << "a sealed datagram outgrew max_datagram";
  for (EndpointCore* c : {p.a.get(), p.b.get()}) {
    EXPECT_EQ(c->stats().drops.auth_failed, 0u);
    EXPECT_EQ(c->stats().drops.auth_mismatch, 0u);
    EXPECT_EQ(c->stats().seal_failures, 0u);
  }
}

TEST_P(SecurityTest, EveryBitFlippedIsDroppedCountedAndChangesNothing) {
  CorePair p({}, 1472, GetParam());
  std::vector<Wire> captured;
  p.filter = [&](const Wire& w) {
    if (w.from == p.b_addr) captured.push_back(w);
    return true;
  };
  auto [a0, b0] = Exchange(p, Pattern(500, 1), Pattern(20000, 2), 10);
  ExpectOneEach(a0, Pattern(20000, 2));
  p.filter = nullptr;
  ASSERT_GE(captured.size(), 2u);
  // The first datagram (first contact: the initial key) and the last (an
  // ack or data under the pair key), every bit of each.
  const EndpointStats before = p.a->stats();
  uint64_t injected = 0;
  for (const Wire* w : {&captured.front(), &captured.back()}) {
    for (size_t bit = 0; bit < w->bytes.size() * 8; ++bit) {
      Bytes d = w->bytes;
      d[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      p.a->OnDatagram(p.now, w->from, d, false);
      ++injected;
    }
  }
  const EndpointStats after = p.a->stats();
  EXPECT_EQ(Rejected(after) - Rejected(before), injected);
  EXPECT_EQ(after.drops.auth_mismatch, before.drops.auth_mismatch);
  EXPECT_EQ(after.peer_restarts, 0u);
  EXPECT_EQ(after.messages_received, before.messages_received);
  p.Run(1000);
  EXPECT_TRUE(p.Drain(*p.a).empty());
  // The pair still works.
  auto [a1, b1] = Exchange(p, Pattern(700, 3), Pattern(900, 4), 20);
  ExpectOneEach(a1, Pattern(900, 4));
  ExpectOneEach(b1, Pattern(700, 3));
}

TEST_P(SecurityTest, ReplayedSealedDatagramsDeliverNothingTwice) {
  CorePair p({}, 1472, GetParam());
  std::vector<Wire> captured;
  p.filter = [&](const Wire& w) {
    if (w.from == p.b_addr) captured.push_back(w);
    return true;
  };
  auto [a0, b0] = Exchange(p, Pattern(500, 1), Pattern(30000, 2), 10);
  ExpectOneEach(a0, Pattern(30000, 2));
  p.filter = nullptr;
  for (int pass = 0; pass < 2; ++pass) {
    for (const Wire& w : captured)
      p.a->OnDatagram(p.now, w.from, w.bytes, false);
    p.Run(500);
  }
  EXPECT_TRUE(p.Drain(*p.a).empty()) << "a replay was delivered";
}

TEST_P(SecurityTest, AnotherDomainsKeyOrNoProtectionGetsNothingIn) {
  CorePair p({}, 1472, GetParam());
  // A core of another security domain, and an unprotected one, at B's
  // address: first contact with A.
  for (bool other_key : {true, false}) {
    CoreConfig c;
    c.local_port = 7000;
    c.incarnation = other_key ? 0x5555 : 0x6666;
    c.seed = 9;
    c.guard = other_key ? CorePair::Guard(GetParam(),
                                          "another domain's key, 32 bytes!")
                        : nullptr;
    p.b = std::make_unique<EndpointCore>(c);
    const uint64_t rejected = Rejected(p.a->stats());
    ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(Pattern(2000, 5), 1)).ok());
    p.Run(300);
    EXPECT_TRUE(p.Drain(*p.a).empty()) << "other_key=" << other_key;
    EXPECT_GT(Rejected(p.a->stats()), rejected);
    EXPECT_EQ(p.a->stats().peers, 0u)
        << "an unauthenticated datagram made a peer";
  }
}

TEST_P(SecurityTest, RestartedPeerIsRecognisedAfterAChallenge) {
  CorePair p({}, 1472, GetParam());
  auto [a0, b0] = Exchange(p, Pattern(500, 1), Pattern(500, 2), 10);
  ExpectOneEach(a0, Pattern(500, 2));
  p.filter = [&](const Wire& w) { return w.to != p.b_addr; };
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(Pattern(4000, 3), 30)).ok());
  p.Run(20);
  p.RestartB(0x7777);
  p.filter = nullptr;
  const Bytes mb = Pattern(800, 9);
  ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(mb, 40)).ok());
  std::vector<Completion> ra;
  for (int i = 0; i < 200 && ra.size() < 2; ++i) {
    p.Run(1000);
    auto v = p.Drain(*p.a);
    ra.insert(ra.end(), v.begin(), v.end());
  }
  ASSERT_EQ(ra.size(), 2u);
  size_t failed = 0, received = 0;
  for (const Completion& c : ra) {
    if (c.type == CompletionType::kSendFailed) {
      ++failed;
      EXPECT_EQ(c.cause, FailureCause::kPeerRestarted);
    }
    if (c.type == CompletionType::kRecv) {
      ++received;
      EXPECT_EQ(c.data, mb);
    }
  }
  EXPECT_EQ(failed, 1u);
  EXPECT_EQ(received, 1u);
  EXPECT_EQ(p.a->stats().peer_restarts, 1u);
  EXPECT_EQ(p.a->stats().drops.auth_failed, 0u);
}

}  // namespace
}  // namespace braid::endpoint

#include "tools/braid_forge/forger.h"

#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "wire/frames.h"

namespace braid::forge {
namespace {

ForgeTarget Target() {
  ForgeTarget t;
  t.victim_ip = 0x0a4d000a;
  t.victim_port = 9000;
  t.spoof_ip = 0x0a4d010b;
  t.spoof_port = 9100;
  t.prefix_ip = 0x0a600000;
  t.prefix_len = 12;
  t.msg_len = 1 << 20;
  t.frag_len = 512;
  t.frag_offset = 4096;
  return t;
}

// The frames of one forged datagram; fails the test if any is malformed.
std::vector<wire::Frame> Parse(const std::vector<uint8_t>& d,
                               uint16_t* reply_port) {
  wire::ParseError e = wire::ParseError::kNone;
  *reply_port = wire::ParsePreamble(d, &e);
  EXPECT_NE(*reply_port, 0);
  std::vector<wire::Frame> out;
  wire::FrameReader r(absl::MakeConstSpan(d).subspan(wire::kPreambleSize));
  wire::Frame f;
  while (r.Next(&f)) out.push_back(f);
  EXPECT_EQ(r.error(), wire::ParseError::kNone);
  return out;
}

std::vector<uint8_t> NextOf(Forger& f, Ipv4UdpAddrs* a) {
  std::vector<uint8_t> d(f.MaxPayload());
  d.resize(f.Next(absl::MakeSpan(d), a));
  EXPECT_FALSE(d.empty());
  return d;
}

TEST(ForgerTest, SyncClaimsANewLifeOfTheSpoofedPeerWithDataBehindIt) {
  Forger f(Attack::kSync, Target(), 1);
  std::set<uint64_t> lives;
  for (int i = 0; i < 10; ++i) {
    Ipv4UdpAddrs a;
    uint16_t port = 0;
    const std::vector<wire::Frame> fr = Parse(NextOf(f, &a), &port);
    EXPECT_EQ(a.src_ip, Target().spoof_ip);
    EXPECT_EQ(a.dst_ip, Target().victim_ip);
    EXPECT_EQ(a.dst_port, 9000);
    EXPECT_EQ(port, 9100);
    ASSERT_EQ(fr.size(), 2u);
    EXPECT_EQ(fr[0].ctrl.type, wire::CtrlType::kSync);
    EXPECT_EQ(fr[0].ctrl.dst_incarnation, 0u);
    EXPECT_EQ(fr[1].type, wire::FrameType::kData);
    EXPECT_EQ(fr[1].data.src_incarnation, fr[0].ctrl.src_incarnation);
    EXPECT_EQ(fr[1].data.psn.value(), fr[0].ctrl.value);
    EXPECT_EQ(fr[1].data.msg_len, 1u << 20);
    EXPECT_EQ(fr[1].data.frag_offset, 4096u);
    EXPECT_EQ(fr[1].data.payload_len, 512);
    lives.insert(fr[0].ctrl.src_incarnation);
  }
  EXPECT_EQ(lives.size(), 10u) << "every claim names a new incarnation";
}

TEST(ForgerTest, RepliesNameTheLeakedIncarnationWhenGivenOne) {
  ForgeTarget t = Target();
  t.victim_incarnation = 0x1234567890abcdef;
  const std::pair<Attack, wire::CtrlType> ctrl[] = {
      {Attack::kStale, wire::CtrlType::kStale},
      {Attack::kNeedSync, wire::CtrlType::kNeedSync},
      {Attack::kChallengeReply, wire::CtrlType::kChallengeReply}};
  for (const auto& [attack, type] : ctrl) {
    Forger f(attack, t, 2);
    Ipv4UdpAddrs a;
    uint16_t port = 0;
    const std::vector<wire::Frame> fr = Parse(NextOf(f, &a), &port);
    ASSERT_EQ(fr.size(), 1u) << AttackName(attack);
    EXPECT_EQ(fr[0].ctrl.type, type);
    EXPECT_EQ(fr[0].ctrl.dst_incarnation, t.victim_incarnation);
  }
  Forger f(Attack::kAck, t, 3);
  Ipv4UdpAddrs a;
  uint16_t port = 0;
  const std::vector<wire::Frame> fr = Parse(NextOf(f, &a), &port);
  ASSERT_EQ(fr.size(), 1u);
  EXPECT_EQ(fr[0].type, wire::FrameType::kAck);
  EXPECT_EQ(fr[0].ack.dst_incarnation, t.victim_incarnation);
}

TEST(ForgerTest, GuessedNoncesAndIncarnationsDifferEveryTime) {
  Forger f(Attack::kChallengeReply, Target(), 4);
  std::set<uint64_t> nonces, guesses;
  for (int i = 0; i < 100; ++i) {
    Ipv4UdpAddrs a;
    uint16_t port = 0;
    const std::vector<wire::Frame> fr = Parse(NextOf(f, &a), &port);
    ASSERT_EQ(fr.size(), 1u);
    nonces.insert(fr[0].ctrl.nonce);
    guesses.insert(fr[0].ctrl.dst_incarnation);
  }
  EXPECT_EQ(nonces.size(), 100u);
  EXPECT_EQ(guesses.size(), 100u);
}

TEST(ForgerTest, DataAlternatesNoIncarnationAndAGuess) {
  Forger f(Attack::kData, Target(), 5);
  int zero = 0;
  for (int i = 0; i < 10; ++i) {
    Ipv4UdpAddrs a;
    uint16_t port = 0;
    const std::vector<wire::Frame> fr = Parse(NextOf(f, &a), &port);
    ASSERT_EQ(fr.size(), 1u);
    EXPECT_EQ(fr[0].type, wire::FrameType::kData);
    if (fr[0].data.dst_incarnation == 0) ++zero;
  }
  EXPECT_EQ(zero, 5);
}

TEST(ForgerTest, FloodSourcesAreDistinctAddressesOfThePrefix) {
  ForgeTarget t = Target();
  t.prefix_ip = 0x0a4d0000;  // 10.77.0.0/22 holds the victim 10.77.0.10
  t.prefix_len = 22;
  Forger f(Attack::kFlood, t, 6);
  ASSERT_EQ(f.FloodSources(), 1024u);
  std::set<uint32_t> ips;
  for (int i = 0; i < 1023; ++i) {
    Ipv4UdpAddrs a;
    uint16_t port = 0;
    const std::vector<wire::Frame> fr = Parse(NextOf(f, &a), &port);
    EXPECT_EQ(a.src_ip >> 10, 0x0a4d0000u >> 10);
    EXPECT_NE(a.src_ip, t.victim_ip);
    ips.insert(a.src_ip);
    ASSERT_EQ(fr.size(), 2u);
    EXPECT_EQ(fr[0].ctrl.type, wire::CtrlType::kSync);
    EXPECT_EQ(fr[1].data.dst_incarnation, 0u);
  }
  EXPECT_EQ(ips.size(), 1023u) << "no source repeats within the prefix";
}

TEST(ForgerTest, TooSmallABufferYieldsNothing) {
  Forger f(Attack::kSync, Target(), 7);
  std::vector<uint8_t> d(f.MaxPayload() - 1);
  Ipv4UdpAddrs a;
  EXPECT_EQ(f.Next(absl::MakeSpan(d), &a), 0u);
}

}  // namespace
}  // namespace braid::forge

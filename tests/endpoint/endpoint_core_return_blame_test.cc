// A receiver blames the path of its last ack when the sender re-sends data
// the receiver holds (EndpointCore, simulated time): the ack must have been
// lost. PeerStats::return_path_losses counts it, and the path is recycled
// or penalised (PathSet::OnReturnLoss). A re-send is evidence only if the
// packet had arrived before that ack was sent; otherwise the ack was late,
// not lost (the sender's timer fired while this side was slow, or held its
// ack for the application's answer), and blaming would move a healthy
// return path.
#include <optional>
#include <vector>

#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"
#include "tests/endpoint/data_frames.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;
using testing::DataDatagram;
using testing::DataFrame;
using testing::FindDataFrame;
using testing::Wire;

constexpr size_t kLen = 700;  // one datagram

OutMessage Msg(uint8_t seed) {
  std::vector<uint8_t> v(kLen);
  for (size_t i = 0; i < kLen; ++i) v[i] = static_cast<uint8_t>(seed + i);
  return OutMessage::Copy(v.data(), kLen);
}

// `d` again, flagged as a re-send (as the sender's timers send it).
std::vector<uint8_t> Resend(const DataFrame& d) {
  wire::DataHeader h = d.h;
  h.flags |= wire::kDataFlagRetransmit;
  h.path_seq = wire::PathSeq(h.path_seq.value() + 100);
  return DataDatagram(d, h);
}

uint64_t ReturnLossesAtB(const CorePair& p) {
  const std::vector<PeerStats> peers = p.b->peer_stats(false);
  EXPECT_EQ(peers.size(), 1u);
  return peers.empty() ? 0 : peers[0].return_path_losses;
}

uint64_t RetransmitsAtA(const CorePair& p) {
  return p.a->stats().reliability.retransmits;
}

// Delivers one message A -> B and B's ack back; B's last ack is then
// blamable.
void Exchange(CorePair& p, uint8_t seed) {
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(seed)).ok());
  p.Run(50);
  p.Drain(*p.a);
  p.Drain(*p.b);
}

TEST(EndpointCoreReturnBlameTest, AResendAfterALostAckBlamesTheAckPath) {
  CorePair p;
  Exchange(p, 1);
  // B's next ack is lost: A's timer re-sends the message B already holds.
  bool dropped = false;
  p.filter = [&](const Wire& w) {
    if (w.from != p.b_addr || dropped) return true;
    dropped = true;
    return false;
  };
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(2)).ok());
  p.Run(4000);
  ASSERT_TRUE(dropped);
  ASSERT_GE(RetransmitsAtA(p), 1u);
  EXPECT_EQ(ReturnLossesAtB(p), 1u);
}

TEST(EndpointCoreReturnBlameTest, AResendOfDataNotYetAckedBlamesNothing) {
  CorePair p;
  Exchange(p, 1);
  // Message 2 reaches B together with a re-send of it, before B acks it
  // (B was slow: A's timer fired). B's last ack (message 1's) is not at
  // fault.
  std::vector<std::vector<uint8_t>> held;
  p.filter = [&](const Wire& w) {
    if (w.from != p.a_addr) return true;
    held.push_back(w.bytes);
    return false;
  };
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(2)).ok());
  p.Run(1);
  ASSERT_EQ(held.size(), 1u);
  std::optional<DataFrame> d = FindDataFrame(held[0]);
  ASSERT_TRUE(d.has_value());
  p.b->OnDatagram(p.now, p.a_addr, held[0], false);
  p.b->OnDatagram(p.now, p.a_addr, Resend(*d), false);
  EXPECT_EQ(p.b->stats().drops.duplicates, 1u);
  EXPECT_EQ(ReturnLossesAtB(p), 0u);
}

}  // namespace
}  // namespace braid::endpoint

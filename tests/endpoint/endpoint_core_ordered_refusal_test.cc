// Ordered messages the receiver refuses (EndpointCore, simulated time): a
// data frame whose stream_seq was already delivered, or is already held,
// arrives whole but is dropped by the in-order release. A sender that
// follows the protocol never sends one; a forged or buggy one can. The
// refusal must deliver nothing, leave the stream's real messages delivered
// exactly once, and be counted (PeerStats/EndpointStats::ordered_refused).
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

constexpr uint16_t kStream = 3;
constexpr size_t kLen = 900;  // one datagram

std::vector<uint8_t> Bytes(uint8_t seed) {
  std::vector<uint8_t> v(kLen);
  for (size_t i = 0; i < kLen; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

OutMessage Msg(const std::vector<uint8_t>& b, uint64_t cookie) {
  OutMessage m = OutMessage::Copy(b.data(), static_cast<uint32_t>(b.size()));
  m.cookie = cookie;
  m.stream = kStream;
  return m;
}

// The data frame of `w` on kStream, if it carries one.
std::optional<DataFrame> StreamFrame(const Wire& w) {
  return FindDataFrame(w.bytes, kStream);
}

// A datagram with one data frame: `d` under fresh packet and message
// numbers, so that it passes every check before the in-order release.
std::vector<uint8_t> Forge(const DataFrame& d, wire::Psn psn,
                           uint32_t msg_seq) {
  wire::DataHeader h = d.h;
  h.psn = psn;
  h.path_seq = wire::PathSeq(h.path_seq.value() + 1000);
  h.msg_seq = wire::MsgSeq(msg_seq);
  return DataDatagram(d, h);
}

struct Harness {
  Harness() {
    p.filter = [this](const Wire& w) {
      if (w.from != p.a_addr) return true;
      std::optional<DataFrame> d = StreamFrame(w);
      if (!d.has_value()) return true;
      seen.push_back(*d);
      return !(drop_seq0 && d->h.stream_seq == 0);
    };
  }
  void Run(int rounds) {
    for (int i = 0; i < rounds; ++i) {
      p.Run(1);
      for (Completion& c : p.Drain(*p.b)) {
        if (c.type == CompletionType::kRecv) received.push_back(std::move(c));
      }
      p.Drain(*p.a);
    }
  }
  void Inject(const std::vector<uint8_t>& bytes) {
    p.b->OnDatagram(p.now, p.a_addr, bytes, false);
  }
  uint64_t RefusedAtB() const {
    const std::vector<PeerStats> peers = p.b->peer_stats(false);
    EXPECT_EQ(peers.size(), 1u);
    const uint64_t per_peer = peers.empty() ? 0 : peers[0].ordered_refused;
    EXPECT_EQ(p.b->stats().ordered_refused, per_peer);
    return per_peer;
  }

  CorePair p;
  bool drop_seq0 = false;
  std::vector<DataFrame> seen;  // A's data frames on kStream, as sent
  std::vector<Completion> received;
};

TEST(EndpointCoreOrderedRefusalTest, AStreamSeqAlreadyDeliveredIsCounted) {
  Harness t;
  const std::vector<uint8_t> m0 = Bytes(1);
  ASSERT_TRUE(t.p.a->Send(t.p.now, t.p.b_addr, Msg(m0, 1)).ok());
  t.Run(20);
  ASSERT_EQ(t.received.size(), 1u);
  ASSERT_FALSE(t.seen.empty());
  EXPECT_EQ(t.RefusedAtB(), 0u);

  // The same stream_seq (0) again, as a new message with a new PSN.
  const DataFrame& d = t.seen.front();
  t.Inject(Forge(d, d.h.psn + 1, d.h.msg_seq.value() + 1));
  t.Run(5);
  EXPECT_EQ(t.received.size(), 1u) << "a stale stream_seq was delivered";
  EXPECT_EQ(t.RefusedAtB(), 1u);
}

TEST(EndpointCoreOrderedRefusalTest, AStreamSeqAlreadyHeldIsCounted) {
  Harness t;
  t.drop_seq0 = true;
  const std::vector<uint8_t> m0 = Bytes(1), m1 = Bytes(2);
  ASSERT_TRUE(t.p.a->Send(t.p.now, t.p.b_addr, Msg(m0, 1)).ok());
  t.Run(1);  // seq 0 leaves and is dropped
  ASSERT_TRUE(t.p.a->Send(t.p.now, t.p.b_addr, Msg(m1, 2)).ok());
  t.Run(3);  // seq 1 arrives and is held behind seq 0
  EXPECT_TRUE(t.received.empty());

  const DataFrame* seq1 = nullptr;
  for (const DataFrame& d : t.seen) {
    if (d.h.stream_seq == 1) seq1 = &d;
  }
  ASSERT_NE(seq1, nullptr);
  // A second message claiming stream_seq 1, under a PSN above any A used.
  wire::Psn top = seq1->h.psn;
  for (const DataFrame& d : t.seen) {
    if (d.h.psn > top) top = d.h.psn;
  }
  t.Inject(Forge(*seq1, top + 1, seq1->h.msg_seq.value() + 1));
  EXPECT_EQ(t.RefusedAtB(), 1u);

  // seq 0's repair releases seq 0 and the real seq 1, once each.
  t.drop_seq0 = false;
  t.Run(400);
  ASSERT_EQ(t.received.size(), 2u);
  EXPECT_EQ(t.received[0].data, m0);
  EXPECT_EQ(t.received[1].data, m1);
  EXPECT_EQ(t.RefusedAtB(), 1u);
}

}  // namespace
}  // namespace braid::endpoint

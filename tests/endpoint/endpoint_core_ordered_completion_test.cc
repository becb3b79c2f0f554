// When an ordered message's send completes (EndpointCore, simulated time):
// kSendDone for a message on an ordered stream means the receiver has
// released it to its application, not merely that its packets arrived. A
// message held behind a missing predecessor is acked (so it is not
// re-sent) but completes only once its predecessor is in; if the receiver
// restarts meanwhile, it fails instead of being reported done.
#include <vector>

#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;
using testing::Wire;

constexpr size_t kFirstLen = 1000;  // fits one datagram
constexpr size_t kSecondLen = 5000;

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13);
  return v;
}

OutMessage Msg(const std::vector<uint8_t>& b, uint64_t cookie,
               uint16_t stream) {
  OutMessage m = OutMessage::Copy(b.data(), static_cast<uint32_t>(b.size()));
  m.cookie = cookie;
  m.stream = stream;
  return m;
}

// True if the datagram carries a data frame of a message `len` bytes long.
bool CarriesMessageOfLength(const Wire& w, uint32_t len) {
  wire::ParseError e;
  if (wire::ParsePreamble(w.bytes, &e) == 0) return false;
  wire::FrameReader r(
      absl::MakeConstSpan(w.bytes).subspan(wire::kPreambleSize));
  wire::Frame f;
  while (r.Next(&f)) {
    if (f.type == wire::FrameType::kData && f.data.msg_len == len) return true;
  }
  return false;
}

std::vector<Completion> OfType(const std::vector<Completion>& v,
                               CompletionType t) {
  std::vector<Completion> out;
  for (const Completion& c : v) {
    if (c.type == t) out.push_back(c);
  }
  return out;
}

// A sends `first` (dropped on the wire while `hold_first`), then `second`,
// both on `stream`. The first message's datagram is built before the second
// is queued, so no datagram carries both.
struct HeldBehindALoss {
  explicit HeldBehindALoss(uint16_t stream) {
    p.filter = [this](const Wire& w) {
      return !(hold_first && w.from == p.a_addr &&
               CarriesMessageOfLength(w, kFirstLen));
    };
    EXPECT_TRUE(p.a->Send(p.now, p.b_addr, Msg(first, 1, stream)).ok());
    p.Run(1);  // the first message leaves (and is dropped)
    EXPECT_TRUE(p.a->Send(p.now, p.b_addr, Msg(second, 2, stream)).ok());
    // Long enough for the second message to arrive and be acked (a few
    // round trips), short of any peer timeout.
    for (int i = 0; i < 40; ++i) {
      p.Run(1);
      Take();
    }
  }
  void Take() {
    std::vector<Completion> v = p.Drain(*p.a);
    at_a.insert(at_a.end(), v.begin(), v.end());
    v = p.Drain(*p.b);
    at_b.insert(at_b.end(), v.begin(), v.end());
  }

  CorePair p;
  bool hold_first = true;
  const std::vector<uint8_t> first = Bytes(kFirstLen, 1);
  const std::vector<uint8_t> second = Bytes(kSecondLen, 2);
  std::vector<Completion> at_a, at_b;
};

TEST(EndpointCoreOrderedCompletionTest,
     HeldMessageCompletesOnlyAfterItsPredecessorIsDelivered) {
  HeldBehindALoss h(/*stream=*/1);
  // B has all of the second message (its packets are acked, nothing of it
  // is in flight) and holds it; A must not call it done.
  EXPECT_EQ(h.p.b->stats().bytes_reassembled, kSecondLen);
  EXPECT_TRUE(OfType(h.at_b, CompletionType::kRecv).empty());
  EXPECT_TRUE(h.at_a.empty());

  h.hold_first = false;
  for (int i = 0;
       i < 200 && OfType(h.at_a, CompletionType::kSendDone).size() < 2; ++i) {
    h.p.Run(50);
    h.Take();
  }
  const auto done = OfType(h.at_a, CompletionType::kSendDone);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].cookie, 1u);
  EXPECT_EQ(done[1].cookie, 2u);
  const auto recv = OfType(h.at_b, CompletionType::kRecv);
  ASSERT_EQ(recv.size(), 2u);
  EXPECT_EQ(recv[0].data, h.first);
  EXPECT_EQ(recv[1].data, h.second);
}

TEST(EndpointCoreOrderedCompletionTest,
     HeldMessageFailsWhenTheReceiverRestartsBeforeReleasingIt) {
  HeldBehindALoss h(/*stream=*/1);
  ASSERT_TRUE(h.at_a.empty());
  // B's process dies with the second message held and comes back empty.
  h.p.RestartB(0x3333);
  h.hold_first = false;
  for (int i = 0; i < 400 && h.at_a.size() < 2; ++i) {
    h.p.Run(50);
    h.Take();
  }
  ASSERT_EQ(h.at_a.size(), 2u);
  for (const Completion& c : h.at_a) {
    EXPECT_EQ(c.type, CompletionType::kSendFailed) << "cookie " << c.cookie;
    EXPECT_EQ(c.cause, FailureCause::kPeerRestarted) << "cookie " << c.cookie;
  }
}

TEST(EndpointCoreOrderedCompletionTest,
     UnorderedMessageCompletesWhenAckedBehindALoss) {
  // Unordered, B delivers the second message at once, so A completes it
  // without waiting for the first.
  HeldBehindALoss h(/*stream=*/0);
  const auto recv = OfType(h.at_b, CompletionType::kRecv);
  ASSERT_EQ(recv.size(), 1u);
  EXPECT_EQ(recv[0].data, h.second);
  const auto done = OfType(h.at_a, CompletionType::kSendDone);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].cookie, 2u);
}

}  // namespace
}  // namespace braid::endpoint

// Direct data placement through the endpoint core: a message sent with a
// PlacementDescriptor is written by the receiver straight into the memory
// its placement handler names, fragment by fragment in any arrival order,
// and completes in stream order carrying only its head.
#include <algorithm>
#include <cstring>
#include <vector>

#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;

constexpr uint32_t kHead = 16;

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<uint8_t>(((i + seed) * 2654435761u) >> 13);
  }
  return v;
}

// A message: a 16-byte head naming its index, then the payload to place.
std::vector<uint8_t> Message(uint32_t index, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> m(kHead + body.size(), 0);
  std::memcpy(m.data(), &index, sizeof(index));
  std::copy(body.begin(), body.end(), m.begin() + kHead);
  return m;
}

// Memory regions on the receiver, addressed as (key = region, offset).
struct Regions {
  // `count` regions of `bytes` zeroes, served by the placement handler of
  // p.b.
  Regions(CorePair& p, size_t count, size_t bytes)
      : mem(count, std::vector<uint8_t>(bytes, 0)) {
    p.b->SetPlacementHandler(
        [this](const PlacementRequest& r, absl::Span<uint8_t>* d) {
          return Place(r, d);
        });
  }
  bool Untouched(size_t i) const {
    return std::all_of(mem[i].begin(), mem[i].end(),
                       [](uint8_t b) { return b == 0; });
  }
  std::vector<std::vector<uint8_t>> mem;
  std::vector<PlacementRequest> asked;
  bool Place(const PlacementRequest& r, absl::Span<uint8_t>* dest) {
    asked.push_back(r);
    if (r.descriptor.key >= mem.size()) return false;
    std::vector<uint8_t>& m = mem[r.descriptor.key];
    const uint64_t n = r.msg_len - r.descriptor.head_bytes;
    if (r.descriptor.offset > m.size() || n > m.size() - r.descriptor.offset) {
      return false;
    }
    *dest = absl::MakeSpan(m).subspan(r.descriptor.offset, n);
    return true;
  }
};

absl::Status SendPlaced(CorePair& p, const std::vector<uint8_t>& msg,
                        uint16_t stream, uint64_t key, uint64_t offset,
                        uint32_t head = kHead) {
  OutMessage m =
      OutMessage::Copy(msg.data(), static_cast<uint32_t>(msg.size()));
  m.stream = stream;
  m.placed = true;
  m.placement = {.key = key, .offset = offset, .head_len = head};
  return p.a->Send(p.now, p.b_addr, std::move(m));
}

void RunUntil(CorePair& p, std::vector<Completion>* rb,
              std::vector<Completion>* ra, size_t want_b, size_t want_a) {
  for (int i = 0; i < 400 && (rb->size() < want_b || ra->size() < want_a);
       ++i) {
    p.Run(200);
    p.b->PollCompletions(rb, SIZE_MAX);
    p.a->PollCompletions(ra, SIZE_MAX);
  }
}

TEST(EndpointPlacementTest, PlacedMessagesLandInPlaceInStreamOrderUnderLoss) {
  CorePair p;
  Regions regions(p, 8, 300000);
  uint64_t n = 0;
  size_t oversize = 0;
  p.filter = [&](const testing::Wire& w) {
    if (w.bytes.size() > 1472) ++oversize;
    return ++n % 20 != 0;  // 5 % loss: retransmits arrive out of order
  };
  std::vector<std::vector<uint8_t>> bodies;
  uint64_t placed = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    bodies.push_back(Pattern(100000 + 3333 * i, i));
    placed += bodies.back().size();
    ASSERT_TRUE(SendPlaced(p, Message(i, bodies.back()), 3, i, 1000 * i).ok());
  }
  std::vector<Completion> rb, ra;
  RunUntil(p, &rb, &ra, 8, 8);
  ASSERT_EQ(rb.size(), 8u);
  ASSERT_EQ(ra.size(), 8u);
  for (uint32_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    const Completion& c = rb[i];
    EXPECT_EQ(c.type, CompletionType::kRecv);
    EXPECT_EQ(c.stream, 3);
    EXPECT_EQ(c.placement, PlacementStatus::kPlaced);
    EXPECT_EQ(c.msg_len, kHead + bodies[i].size());
    EXPECT_EQ(c.descriptor.key, i);
    EXPECT_EQ(c.descriptor.offset, 1000u * i);
    EXPECT_EQ(c.descriptor.head_bytes, kHead);
    ASSERT_EQ(c.data.size(), kHead);  // only the head was buffered
    uint32_t index;
    std::memcpy(&index, c.data.data(), sizeof(index));
    EXPECT_EQ(index, i);  // stream order
    const std::vector<uint8_t>& m = regions.mem[i];
    EXPECT_TRUE(
        std::equal(bodies[i].begin(), bodies[i].end(), m.begin() + 1000 * i));
    EXPECT_TRUE(std::all_of(m.begin(), m.begin() + 1000 * i,
                            [](uint8_t b) { return b == 0; }));
    EXPECT_EQ(ra[i].type, CompletionType::kSendDone);
  }
  const EndpointStats s = p.b->stats();
  EXPECT_EQ(s.messages_placed, 8u);
  EXPECT_EQ(s.bytes_placed, placed);
  EXPECT_EQ(s.bytes_reassembled, 8u * kHead);  // no reassembly copy
  EXPECT_EQ(s.drops.malformed(), 0u);
  EXPECT_GT(p.a->stats().reliability.retransmits, 0u);
  EXPECT_EQ(oversize, 0u);  // fragments + extension + SYNC fit the datagram
  // The handler was asked once per fragment that arrived (not for
  // duplicates), with the message's own stream and length.
  EXPECT_GE(regions.asked.size(), 8u * (100000 / 1400));
  for (const PlacementRequest& r : regions.asked) {
    EXPECT_EQ(r.peer, p.a_addr);
    EXPECT_EQ(r.stream, 3);
  }
}

TEST(EndpointPlacementTest, PlacedFragmentsCarry24BytesLessPayload) {
  CorePair p;
  Regions regions(p, 1, 100000);
  size_t max_len = 0;
  p.filter = [&](const testing::Wire& w) {
    max_len = std::max(max_len, w.bytes.size());
    return true;
  };
  const uint32_t mss = p.a->mss();
  const auto body =
      Pattern(10 * (mss - wire::kPlacementExtSize) + 1 - kHead, 1);
  ASSERT_TRUE(SendPlaced(p, Message(0, body), 1, 0, 0).ok());
  std::vector<Completion> rb, ra;
  RunUntil(p, &rb, &ra, 1, 1);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].placement, PlacementStatus::kPlaced);
  // Ten fragments of mss - 24 payload bytes and a one-byte eleventh.
  EXPECT_EQ(p.b->stats().packets_received, 11u);
  EXPECT_LE(max_len, 1472u);
}

TEST(EndpointPlacementTest, RefusedMessageWritesNothingAndKeepsOrder) {
  CorePair p;
  Regions regions(p, 2, 50000);
  uint64_t n = 0;
  p.filter = [&](const testing::Wire&) { return ++n % 17 != 0; };
  const auto body = Pattern(40000, 2);
  ASSERT_TRUE(SendPlaced(p, Message(0, body), 5, 0, 0).ok());
  ASSERT_TRUE(SendPlaced(p, Message(1, body), 5, 7, 0).ok());  // no region 7
  ASSERT_TRUE(SendPlaced(p, Message(2, body), 5, 1, 20000).ok());  // too long
  const auto plain = Pattern(3000, 9);
  OutMessage m = OutMessage::Copy(plain.data(), 3000);
  m.stream = 5;
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, std::move(m)).ok());
  std::vector<Completion> rb, ra;
  RunUntil(p, &rb, &ra, 4, 4);
  ASSERT_EQ(rb.size(), 4u);
  EXPECT_EQ(rb[0].placement, PlacementStatus::kPlaced);
  EXPECT_EQ(rb[1].placement, PlacementStatus::kRefused);
  EXPECT_EQ(rb[1].descriptor.key, 7u);
  EXPECT_EQ(rb[1].data.size(), kHead);
  EXPECT_EQ(rb[2].placement, PlacementStatus::kRefused);
  EXPECT_EQ(rb[3].placement, PlacementStatus::kNone);
  EXPECT_EQ(rb[3].data, plain);
  EXPECT_TRUE(std::equal(body.begin(), body.end(), regions.mem[0].begin()));
  EXPECT_TRUE(regions.Untouched(1));
  EXPECT_EQ(p.b->stats().messages_refused, 2u);
  // The transport delivered every message: the sends are done.
  for (const Completion& c : ra) EXPECT_EQ(c.type, CompletionType::kSendDone);
}

TEST(EndpointPlacementTest, WithoutAHandlerEveryPlacedMessageIsRefused) {
  CorePair p;
  const auto body = Pattern(5000, 3);
  ASSERT_TRUE(SendPlaced(p, Message(0, body), 0, 0, 0).ok());
  std::vector<Completion> rb, ra;
  RunUntil(p, &rb, &ra, 1, 1);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].placement, PlacementStatus::kRefused);
  EXPECT_EQ(rb[0].data.size(), kHead);
}

TEST(EndpointPlacementTest, PlacedBytesAreNotChargedToTheReceiveBudget) {
  ProtocolOptions proto;
  proto.receive_budget_bytes = 64 << 10;
  CorePair p(proto);
  Regions regions(p, 1, 1 << 20);
  const auto body = Pattern((1 << 20) - 100, 4);
  ASSERT_TRUE(SendPlaced(p, Message(0, body), 2, 0, 0).ok());
  std::vector<Completion> rb, ra;
  RunUntil(p, &rb, &ra, 1, 1);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].placement, PlacementStatus::kPlaced);
  EXPECT_TRUE(std::equal(body.begin(), body.end(), regions.mem[0].begin()));
  EXPECT_EQ(p.b->drops().no_memory, 0u);
}

TEST(EndpointPlacementTest, SendRejectsABadDescriptor) {
  CorePair p;
  const auto msg = Pattern(100, 5);
  EXPECT_EQ(SendPlaced(p, msg, 0, 0, 0, 101).code(),
            absl::StatusCode::kInvalidArgument);  // head > message
  const auto big = Pattern(kMaxPlacementHeadBytes + 100, 5);
  EXPECT_EQ(SendPlaced(p, big, 0, 0, 0, kMaxPlacementHeadBytes + 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SendPlaced(p, msg, 0, 0, ~uint64_t{0} - 10, 0).code(),
            absl::StatusCode::kInvalidArgument);  // offset range wraps
  EXPECT_TRUE(SendPlaced(p, msg, 0, 0, ~uint64_t{0} - 100, 0).ok());
}

TEST(EndpointPlacementTest, MalformedExtensionIsDroppedAndCounted) {
  CorePair p;
  Regions regions(p, 1, 100);
  wire::DataHeader h;
  h.flags = wire::kDataFlagPlaced;
  h.src_incarnation = 0x1111;
  h.msg_len = 50;
  h.placement = {.key = 0, .offset = 0, .head_len = 0};
  const auto payload = Pattern(50, 6);
  std::vector<uint8_t> d(4 + wire::DataHeaderBytes(h.flags) + 50);
  wire::WritePreamble(7000, absl::MakeSpan(d));
  ASSERT_GT(wire::WriteData(h, payload, absl::MakeSpan(d).subspan(4)), 0u);
  std::vector<uint8_t> bad = d;
  bad[4 + 48 + 23] = 1;  // reserved byte
  p.b->OnDatagram(p.now, p.a_addr, bad, false);
  bad = d;
  bad[4 + 48 + 19] = 51;  // head longer than the message
  p.b->OnDatagram(p.now, p.a_addr, bad, false);
  bad.assign(d.begin(), d.begin() + 4 + 48 + 10);  // extension cut short
  p.b->OnDatagram(p.now, p.a_addr, bad, false);
  EXPECT_EQ(p.b->drops().bad_placement, 3u);
  EXPECT_TRUE(regions.asked.empty());
  EXPECT_TRUE(regions.Untouched(0));
}

}  // namespace
}  // namespace braid::endpoint

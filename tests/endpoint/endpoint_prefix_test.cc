// SendOptions::prefix: a copied header in front of a zero-copy (or copied)
// body, over real loopback sockets, including under injected loss,
// duplication and reordering (re-sent fragments next to the prefix/body
// boundary must carry the same bytes).
#include <chrono>
#include <cstring>
#include <map>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "tests/endpoint/pair_driver.h"

namespace braid {
namespace {

std::vector<uint8_t> Bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<uint8_t>(seed * 131 + i * 7 + (i >> 8));
  }
  return v;
}

using testing::OpenOrDie;

template <typename Fn>
void PollUntil(Endpoint& a, Endpoint& b, std::vector<Completion>* ca,
               std::vector<Completion>* cb, Fn done) {
  testing::PollBothUntil(a, b, ca, cb, done, std::chrono::seconds(120));
}

TEST(EndpointPrefixTest, PrefixAndZeroCopyBodyArriveAsOneMessageUnderLoss) {
  EndpointOptions o;
  TestImpairments imp{
      .drop = 0.05, .duplicate = 0.05, .reorder = 0.05, .seed = 11};
  auto a = OpenOrDie(o, imp);
  imp.seed = 12;
  auto b = OpenOrDie(o, imp);
  ASSERT_TRUE(a && b);
  // Bodies of many sizes (0, around one datagram, many datagrams) behind
  // prefixes of many sizes; each body stays untouched until its kSendDone.
  constexpr int kMessages = 240;
  std::vector<std::vector<uint8_t>> bodies, prefixes;
  for (int i = 0; i < kMessages; ++i) {
    const size_t body = (i % 6 == 0) ? 0 : (i * 7919) % 150000;
    const size_t prefix = 1 + (i * 37) % 600;
    bodies.push_back(Bytes(body, i));
    prefixes.push_back(Bytes(prefix, 1000 + i));
    std::memcpy(prefixes.back().data(), &i, std::min<size_t>(prefix, 1));
  }
  std::vector<Completion> ca, cb;
  size_t done = 0, received = 0;
  std::map<std::vector<uint8_t>, int> want;  // whole message -> count
  for (int i = 0; i < kMessages; ++i) {
    std::vector<uint8_t> whole = prefixes[i];
    whole.insert(whole.end(), bodies[i].begin(), bodies[i].end());
    ++want[whole];
    absl::Status s;
    do {  // the send queue may fill: poll and retry
      s = a->SendZeroCopy(
          b->local_address(), bodies[i],
          {.cookie = static_cast<uint64_t>(i), .prefix = prefixes[i]});
      if (absl::IsResourceExhausted(s)) {
        a->Poll(&ca);
        b->Poll(&cb);
      }
    } while (absl::IsResourceExhausted(s));
    ASSERT_TRUE(s.ok()) << s;
  }
  auto count = [&] {
    for (const Completion& c : ca) {
      EXPECT_EQ(c.type, CompletionType::kSendDone);
      ++done;
    }
    ca.clear();
    for (Completion& c : cb) {
      ASSERT_EQ(c.type, CompletionType::kRecv);
      auto it = want.find(c.data);
      ASSERT_NE(it, want.end())
          << "a message that was never sent, " << c.data.size() << " bytes";
      ASSERT_GT(it->second, 0) << "delivered twice";
      --it->second;
      ++received;
    }
    cb.clear();
  };
  PollUntil(*a, *b, &ca, &cb, [&] {
    count();
    return done == kMessages && received == kMessages;
  });
  EXPECT_EQ(done, static_cast<size_t>(kMessages));
  EXPECT_EQ(received, static_cast<size_t>(kMessages));
  EXPECT_GT(a->stats().reliability.retransmits, 0u);  // loss happened
}

TEST(EndpointPrefixTest, CopyingSendWithAPrefixDeliversTheConcatenation) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  const std::vector<uint8_t> prefix = Bytes(48, 1), body = Bytes(70000, 2);
  ASSERT_TRUE(a->Send(b->local_address(), body, {.prefix = prefix}).ok());
  std::vector<Completion> ca, cb;
  PollUntil(*a, *b, &ca, &cb, [&] { return !ca.empty() && !cb.empty(); });
  ASSERT_EQ(cb.size(), 1u);
  std::vector<uint8_t> whole = prefix;
  whole.insert(whole.end(), body.begin(), body.end());
  EXPECT_EQ(cb[0].data, whole);
}

TEST(EndpointPrefixTest, OversizedPrefixOrTotalIsRejected) {
  EndpointOptions o;
  o.protocol.max_message_bytes = 100000;
  auto a = OpenOrDie(o);
  ASSERT_TRUE(a);
  const NetAddr to = a->local_address();
  const std::vector<uint8_t> big_prefix(kMaxPrefixBytes + 1, 1);
  const std::vector<uint8_t> body(100000 - 10, 2), prefix(11, 3);
  absl::Status s = a->SendZeroCopy(to, body, {.prefix = big_prefix});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("kMaxPrefixBytes"), std::string::npos) << s;
  s = a->SendZeroCopy(to, body, {.prefix = prefix});  // 100001 bytes in all
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("prefix included"), std::string::npos) << s;
  s = a->Send(to, body, {.prefix = prefix});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(EndpointPrefixTest, PrefixIsThePlacementHeadAndTheBodyIsPlaced) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> region(300000, 0);
  b->SetPlacementHandler(
      [&](const PlacementRequest& req, absl::Span<uint8_t>* dest) {
        if (req.descriptor.key != 9) return false;
        *dest = absl::MakeSpan(region).subspan(req.descriptor.offset);
        return true;
      });
  const std::vector<uint8_t> prefix = Bytes(40, 5), body = Bytes(200000, 6);
  ASSERT_TRUE(
      a->SendZeroCopy(
           b->local_address(), body,
           {.placement =
                PlacementDescriptor{.key = 9, .offset = 1000, .head_bytes = 40},
            .prefix = prefix})
          .ok());
  std::vector<Completion> ca, cb;
  PollUntil(*a, *b, &ca, &cb, [&] { return !ca.empty() && !cb.empty(); });
  ASSERT_EQ(cb.size(), 1u);
  EXPECT_EQ(cb[0].placement, PlacementStatus::kPlaced);
  EXPECT_EQ(cb[0].data, prefix);
  EXPECT_EQ(cb[0].msg_len, 200040u);
  EXPECT_TRUE(std::equal(body.begin(), body.end(), region.begin() + 1000));
  EXPECT_EQ(region[999], 0);
}

}  // namespace
}  // namespace braid

// Endpoint::SendOwned and TakeBuffer over real loopback sockets: the
// endpoint sends from the caller's buffer without a copy and hands the
// buffer back in the send's completion; a refused send leaves it with the
// caller.
#include <chrono>
#include <cstdint>
#include <vector>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "tests/endpoint/pair_driver.h"

namespace braid {
namespace {

using testing::OpenOrDie;

std::vector<uint8_t> Bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<uint8_t>(seed * 131 + i * 7 + (i >> 8));
  }
  return v;
}

// A port nobody listens on: sends to it stay pending until peer_timeout.
NetAddr Nowhere() { return NetAddr::Parse("127.0.0.1:9").value(); }

// What a refused send must leave: the same allocation with the same bytes.
void ExpectUntouched(const std::vector<uint8_t>& buf, const uint8_t* data,
                     const std::vector<uint8_t>& bytes) {
  EXPECT_EQ(buf.data(), data);
  EXPECT_EQ(buf, bytes);
}

TEST(EndpointSendOwnedTest, BufferComesBackOnSendDoneWithItsBytesUnchanged) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  // Many datagrams, so fragments are sent (and possibly re-sent) from it.
  const std::vector<uint8_t> want = Bytes(200000, 7);
  std::vector<uint8_t> buf = want;
  const uint8_t* data = buf.data();
  ASSERT_TRUE(a->SendOwned(b->local_address(), std::move(buf),
                           {.stream = 3, .cookie = 42})
                  .ok());
  std::vector<Completion> ca, cb;
  testing::PollBothUntil(*a, *b, &ca, &cb,
                         [&] { return !ca.empty() && !cb.empty(); });
  ASSERT_EQ(ca.size(), 1u);
  EXPECT_EQ(ca[0].type, CompletionType::kSendDone);
  EXPECT_EQ(ca[0].cookie, 42u);
  EXPECT_EQ(ca[0].stream, 3);
  // The very buffer given (no copy was made), bytes as sent.
  EXPECT_EQ(ca[0].data.data(), data);
  EXPECT_EQ(ca[0].data, want);
  ASSERT_EQ(cb.size(), 1u);
  EXPECT_EQ(cb[0].type, CompletionType::kRecv);
  EXPECT_EQ(cb[0].data, want);
}

TEST(EndpointSendOwnedTest,
     BufferComesBackOnSendFailedWhenClosedWithSendsPending) {
  auto a = OpenOrDie();
  ASSERT_TRUE(a);
  std::vector<std::vector<uint8_t>> want;
  for (uint32_t i = 0; i < 3; ++i) {
    want.push_back(Bytes(1000 + 40000 * i, i));
    ASSERT_TRUE(a->SendOwned(Nowhere(), std::vector<uint8_t>(want.back()),
                             {.cookie = i})
                    .ok());
  }
  a->Close();
  std::vector<Completion> done;
  a->Poll(&done);
  ASSERT_EQ(done.size(), want.size());
  for (const Completion& c : done) {
    EXPECT_EQ(c.type, CompletionType::kSendFailed);
    EXPECT_EQ(c.cause, FailureCause::kClosed);
    ASSERT_LT(c.cookie, want.size());
    EXPECT_EQ(c.data, want[c.cookie]);
  }
}

TEST(EndpointSendOwnedTest, RefusedSendLeavesTheBufferWithTheCaller) {
  EndpointOptions o;
  o.protocol.max_pending_sends = 1;
  o.protocol.max_message_bytes = 64 * 1024;
  auto a = OpenOrDie(o);
  ASSERT_TRUE(a);
  const std::vector<uint8_t> bytes = Bytes(5000, 1);
  std::vector<uint8_t> buf = bytes;
  const uint8_t* data = buf.data();

  // Send queue full.
  ASSERT_TRUE(a->SendOwned(Nowhere(), Bytes(10, 2)).ok());
  absl::Status s = a->SendOwned(Nowhere(), std::move(buf));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  ExpectUntouched(buf, data, bytes);

  // A bad address.
  s = a->SendOwned(NetAddr::Parse("0.0.0.0:7000").value(), std::move(buf));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  ExpectUntouched(buf, data, bytes);

  // Over max_message_bytes.
  std::vector<uint8_t> big = Bytes(64 * 1024 + 1, 3);
  const std::vector<uint8_t> big_bytes = big;
  const uint8_t* big_data = big.data();
  s = a->SendOwned(Nowhere(), std::move(big));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  ExpectUntouched(big, big_data, big_bytes);

  // A placement head longer than the message.
  s = a->SendOwned(Nowhere(), std::move(buf),
                   {.placement = PlacementDescriptor{.head_bytes = 6000}});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  ExpectUntouched(buf, data, bytes);

  // Closed.
  a->Close();
  s = a->SendOwned(Nowhere(), std::move(buf));
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  ExpectUntouched(buf, data, bytes);
}

TEST(EndpointSendOwnedTest, PrefixIsRejectedClearly) {
  auto a = OpenOrDie();
  ASSERT_TRUE(a);
  const std::vector<uint8_t> bytes = Bytes(100, 4);
  std::vector<uint8_t> buf = bytes;
  const uint8_t* data = buf.data();
  const uint8_t header[4] = {1, 2, 3, 4};
  const absl::Status s =
      a->SendOwned(Nowhere(), std::move(buf), {.prefix = header});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("prefix"), absl::string_view::npos) << s;
  ExpectUntouched(buf, data, bytes);
}

TEST(EndpointSendOwnedTest, RecycledBufferIsTakenAgainForTheNextMessage) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> buf = a->TakeBuffer(30000);
  EXPECT_TRUE(buf.empty());
  EXPECT_GE(buf.capacity(), 30000u);
  const uint8_t* data = buf.data();
  const std::vector<uint8_t> bytes = Bytes(30000, 5);
  buf.assign(bytes.begin(), bytes.end());  // fits: no new allocation
  ASSERT_EQ(buf.data(), data);
  ASSERT_TRUE(a->SendOwned(b->local_address(), std::move(buf)).ok());
  std::vector<Completion> ca, cb;
  testing::PollBothUntil(*a, *b, &ca, &cb,
                         [&] { return !ca.empty() && !cb.empty(); });
  ASSERT_EQ(ca.size(), 1u);
  ASSERT_EQ(ca[0].type, CompletionType::kSendDone);
  a->Recycle(&ca);
  // A message of about that size reuses the buffer: steady state
  // allocates nothing.
  const std::vector<uint8_t> again = a->TakeBuffer(20000);
  EXPECT_EQ(again.data(), data);
  EXPECT_TRUE(again.empty());
}

}  // namespace
}  // namespace braid

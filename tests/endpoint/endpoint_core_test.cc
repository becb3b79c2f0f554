#include "endpoint/endpoint_core.h"

#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

TEST(EndpointCoreTest, SmallMessageIsDeliveredByteExactAndCompleted) {
  CorePair p;
  auto msg = Pattern(100, 3);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, OutMessage::Copy(msg.data(), 100)).ok());
  p.Run(100);
  auto rb = p.Drain(*p.b);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].type, CompletionType::kRecv);
  EXPECT_EQ(rb[0].data, msg);
  auto ra = p.Drain(*p.a);
  ASSERT_EQ(ra.size(), 1u);
  EXPECT_EQ(ra[0].type, CompletionType::kSendDone);
}

}  // namespace
}  // namespace braid::endpoint

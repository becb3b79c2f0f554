#include "sim/scenario/payload.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace braid::sim {
namespace {

// The pattern as first defined, one byte at a time: FillPattern must keep
// writing these bytes (runs stay comparable across versions).
uint8_t ReferenceByte(uint64_t seed, uint32_t sender, uint32_t id, uint32_t i) {
  uint64_t x = seed ^ (uint64_t{sender} << 40) ^ (uint64_t{id} << 8) ^ (i >> 3);
  x *= 0x9e3779b97f4a7c15ULL;
  return static_cast<uint8_t>((x >> 56) + i);
}

TEST(PayloadTest, HeaderRoundTripsAndPatternMatchesTheReferenceBytes) {
  for (uint32_t len : {16u, 17u, 23u, 24u, 4096u, 65537u}) {
    std::vector<uint8_t> b(len, 0);
    WriteMessageHeader(absl::MakeSpan(b), {7, 42, len});
    FillPattern(absl::MakeSpan(b), 99, 7, 42);
    MessageName n;
    ASSERT_TRUE(ReadMessageHeader(b, &n)) << len;
    EXPECT_EQ(n.sender, 7u);
    EXPECT_EQ(n.id, 42u);
    EXPECT_EQ(n.len, len);
    for (uint32_t i = kMessageHeaderBytes; i < len; ++i) {
      ASSERT_EQ(b[i], ReferenceByte(99, 7, 42, i)) << len << " byte " << i;
    }
    EXPECT_TRUE(PatternMatches(b, 99, 7, 42)) << len;
  }
}

TEST(PayloadTest, AnyFlippedByteOrOtherMessageFailsTheCheck) {
  std::vector<uint8_t> b(1000);
  WriteMessageHeader(absl::MakeSpan(b), {1, 2, 1000});
  FillPattern(absl::MakeSpan(b), 5, 1, 2);
  EXPECT_FALSE(PatternMatches(b, 5, 1, 3));
  EXPECT_FALSE(PatternMatches(b, 6, 1, 2));
  for (size_t i : {size_t{16}, size_t{500}, size_t{999}}) {
    b[i] ^= 0x10;
    EXPECT_FALSE(PatternMatches(b, 5, 1, 2)) << i;
    b[i] ^= 0x10;
  }
  EXPECT_TRUE(PatternMatches(b, 5, 1, 2));
}

TEST(PayloadTest, ShortMessageOrWrongMagicHasNoHeader) {
  std::vector<uint8_t> b(16);
  WriteMessageHeader(absl::MakeSpan(b), {1, 2, 16});
  MessageName n;
  EXPECT_FALSE(ReadMessageHeader(absl::MakeConstSpan(b).first(15), &n));
  b[15] ^= 1;
  EXPECT_FALSE(ReadMessageHeader(b, &n));
}

}  // namespace
}  // namespace braid::sim

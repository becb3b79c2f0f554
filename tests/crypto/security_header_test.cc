// Tests for the security header layout and the nonce rules.
#include "crypto/security_header.h"

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace braid::crypto {
namespace {

using Bytes = std::vector<uint8_t>;
using Nonce = std::array<uint8_t, 12>;

TEST(SecurityHeaderTest, WritesThreeBigEndianWordsAfterThePreamble) {
  Bytes d(kMinProtectedDatagram, 0xee);
  SecurityHeader h{0x0102030405060708, 0x1112131415161718, 0x2122232425262728};
  ASSERT_EQ(WriteSecurityHeader(h, absl::MakeSpan(d)), 28u);
  const Bytes want = {0xee, 0xee, 0xee, 0xee,  // preamble untouched
                      1,    2,    3,    4,    5,    6,    7,    8,    0x11,
                      0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x21, 0x22,
                      0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0xee};
  EXPECT_EQ(Bytes(d.begin(), d.begin() + 29), want);
  SecurityHeader back;
  ASSERT_TRUE(ParseSecurityHeader(d, &back));
  EXPECT_EQ(back.src_incarnation, h.src_incarnation);
  EXPECT_EQ(back.dst_incarnation, h.dst_incarnation);
  EXPECT_EQ(back.packet_number, h.packet_number);
}

TEST(SecurityHeaderTest, WriterRefusesABufferWithoutRoomAndWritesNothing) {
  Bytes d(27, 0xee);
  EXPECT_EQ(WriteSecurityHeader({1, 2, 3}, absl::MakeSpan(d)), 0u);
  EXPECT_EQ(d, Bytes(27, 0xee));
}

TEST(SecurityHeaderTest, ParserRejectsShortDatagramsZeroSourceAndBigInitialPn) {
  Bytes d(kMinProtectedDatagram, 0);
  SecurityHeader h;
  WriteSecurityHeader({1, 0, 5}, absl::MakeSpan(d));
  EXPECT_TRUE(ParseSecurityHeader(d, &h));
  EXPECT_TRUE(h.initial_key());
  EXPECT_FALSE(ParseSecurityHeader(absl::MakeConstSpan(d).first(43), &h));
  WriteSecurityHeader({0, 9, 5}, absl::MakeSpan(d));
  EXPECT_FALSE(ParseSecurityHeader(d, &h));
  WriteSecurityHeader({1, 0, kInitialPacketNumberLimit - 1}, absl::MakeSpan(d));
  EXPECT_TRUE(ParseSecurityHeader(d, &h));
  WriteSecurityHeader({1, 0, kInitialPacketNumberLimit}, absl::MakeSpan(d));
  EXPECT_FALSE(ParseSecurityHeader(d, &h));
  // A pair key takes any 64-bit packet number.
  WriteSecurityHeader({1, 9, ~uint64_t{0}}, absl::MakeSpan(d));
  EXPECT_TRUE(ParseSecurityHeader(d, &h));
  EXPECT_FALSE(h.initial_key());
}

TEST(SecurityHeaderTest, PairNonceIsZeroWordThenPacketNumber) {
  const Nonce n = NonceFor({0xaaaa, 0xbbbb, 0x0102030405060708});
  EXPECT_EQ(n, (Nonce{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(SecurityHeaderTest, InitialNonceIsSourceIncarnationThenLow32PnBits) {
  const Nonce n = NonceFor({0x0102030405060708, 0, 0x0a0b0c0d});
  EXPECT_EQ(n, (Nonce{1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d}));
}

TEST(SecurityHeaderTest, PairNonceDependsOnlyOnPacketNumber) {
  // The pair key already names both incarnations; the packet number alone
  // must keep a sender's nonces apart, and it does.
  EXPECT_EQ(NonceFor({1, 2, 77}), NonceFor({3, 4, 77}));
  std::set<Nonce> seen;
  for (uint64_t pn : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 32,
                      (uint64_t{1} << 32) + 1, ~uint64_t{0}}) {
    EXPECT_TRUE(seen.insert(NonceFor({1, 2, pn})).second) << pn;
  }
}

TEST(SecurityHeaderTest, InitialNoncesOfDistinctSendersOrNumbersNeverMeet) {
  std::set<Nonce> seen;
  for (uint64_t src : {uint64_t{1}, uint64_t{2}, uint64_t{1} << 63}) {
    for (uint64_t pn : {uint64_t{0}, uint64_t{1}, uint64_t{0xffffffff}}) {
      EXPECT_TRUE(seen.insert(NonceFor({src, 0, pn})).second)
          << src << " " << pn;
    }
  }
}

}  // namespace
}  // namespace braid::crypto

#include "sim/packet.h"

#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"

namespace braid::sim {
namespace {

// Straightforward RFC 1071 reference: big-endian 16-bit words.
uint16_t ReferenceChecksum(const uint8_t* d, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) sum += (d[i] << 8) | d[i + 1];
  if (n % 2) sum += d[n - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

TEST(PacketChecksumTest, MatchesRfc1071ExampleBytes) {
  // RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
  const uint8_t bytes[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(InternetChecksum(bytes, sizeof(bytes)),
            static_cast<uint16_t>(~0xddf2));
}

TEST(PacketChecksumTest, MatchesReferenceForEveryLengthUpTo200) {
  Rng rng(3);
  std::vector<uint8_t> buf(200);
  for (auto& b : buf) b = static_cast<uint8_t>(rng.Next());
  for (size_t n = 0; n <= buf.size(); ++n) {
    EXPECT_EQ(InternetChecksum(buf.data(), n), ReferenceChecksum(buf.data(), n))
        << "len " << n;
  }
}

TEST(PacketChecksumTest, MatchesReferenceOnLargeAllOnesPayload) {
  std::vector<uint8_t> buf(9000, 0xff);
  EXPECT_EQ(InternetChecksum(buf.data(), buf.size()),
            ReferenceChecksum(buf.data(), buf.size()));
}

TEST(PacketChecksumTest, AnySingleBitFlipIsDetected) {
  std::vector<uint8_t> buf(64);
  Rng rng(5);
  for (auto& b : buf) b = static_cast<uint8_t>(rng.Next());
  Packet p;
  p.data = buf.data();
  p.len = static_cast<uint32_t>(buf.size());
  p.capacity = p.len;
  StampChecksum(p);
  EXPECT_TRUE(ChecksumOk(p));
  for (uint32_t bit = 0; bit < p.len * 8; ++bit) {
    buf[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_FALSE(ChecksumOk(p)) << "bit " << bit;
    buf[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

}  // namespace
}  // namespace braid::sim

#include "tools/braid_forge/ip_udp.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace braid::forge {
namespace {

Ipv4UdpAddrs Addrs() {
  Ipv4UdpAddrs a;
  a.src_ip = 0x0a4d010b;  // 10.77.1.11
  a.src_port = 40001;
  a.dst_ip = 0x0a4d000a;  // 10.77.0.10
  a.dst_port = 9000;
  return a;
}

TEST(IpUdpTest, ChecksumOfAKnownIpv4HeaderMatchesTheTextbookValue) {
  // The worked example of RFC 1071-style references: checksum 0xb861.
  const uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40,
                         0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
                         0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(FoldChecksum(OnesComplementSum(h)), 0xb861);
}

TEST(IpUdpTest, HeadersCarryTheAddressesAndBothChecksumsVerify) {
  std::vector<uint8_t> d(kIpUdpHeaderSize + 5);
  std::memcpy(d.data() + kIpUdpHeaderSize, "hello", 5);
  ASSERT_EQ(WriteIpv4Udp(Addrs(), 7, 5, absl::MakeSpan(d)), d.size());
  EXPECT_EQ(d[0], 0x45);
  EXPECT_EQ(d[2] << 8 | d[3], 33);  // total length
  EXPECT_EQ(d[9], 17);
  EXPECT_EQ(d[12], 10);
  EXPECT_EQ(d[15], 11);  // source 10.77.1.11
  EXPECT_EQ(d[19], 10);  // destination 10.77.0.10
  EXPECT_EQ(d[20] << 8 | d[21], 40001);
  EXPECT_EQ(d[22] << 8 | d[23], 9000);
  EXPECT_EQ(d[24] << 8 | d[25], 13);  // UDP length
  // A header whose checksum is right sums to all ones.
  EXPECT_EQ(FoldChecksum(OnesComplementSum({d.data(), kIpv4HeaderSize})), 0);
  uint32_t sum = OnesComplementSum({d.data() + 12, 8});
  sum += 17 + 13;
  sum = OnesComplementSum({d.data() + kIpv4HeaderSize, 13}, sum);
  EXPECT_EQ(FoldChecksum(sum), 0);
}

TEST(IpUdpTest, TooSmallABufferWritesNothing) {
  std::vector<uint8_t> d(kIpUdpHeaderSize + 4, 0xaa);
  EXPECT_EQ(WriteIpv4Udp(Addrs(), 1, 5, absl::MakeSpan(d)), 0u);
  EXPECT_EQ(d[0], 0xaa);
  EXPECT_EQ(WriteIpv4Udp(Addrs(), 1, kMaxUdpPayload + 1, absl::MakeSpan(d)),
            0u);
}

}  // namespace
}  // namespace braid::forge

#include "backend/udp/local_addrs.h"

#include <netinet/in.h>

#include <cstring>

#include "gtest/gtest.h"

namespace braid::backend {
namespace {

NetAddr V4(uint32_t ip, uint16_t port = 0) { return NetAddr::Ipv4(ip, port); }

TEST(LocalAddrsTest, TagsAreStablePerAddressAndIgnoreThePort) {
  LocalAddrs t;
  const uint8_t a = t.Tag(V4(0x7f000002, 5000));
  const uint8_t b = t.Tag(V4(0x7f000003, 5000));
  EXPECT_NE(a, 0);
  EXPECT_NE(b, 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.Tag(V4(0x7f000002, 6000)), a);
  EXPECT_EQ(t.Tag(V4(0x7f000003)), b);
  ASSERT_NE(t.Find(a), nullptr);
  EXPECT_EQ(*t.Find(a), V4(0x7f000002));
  EXPECT_EQ(t.Find(0), nullptr);
  EXPECT_EQ(t.Find(200), nullptr);
  EXPECT_EQ(t.size(), 2u);
}

TEST(LocalAddrsTest, AFullTableAnswersFromTheRoutesChoiceAndCountsIt) {
  LocalAddrs t;
  for (uint32_t i = 0; i < LocalAddrs::kMaxTags; ++i) {
    EXPECT_EQ(t.Tag(V4(0x0a000000 + i)), i + 1);
  }
  EXPECT_EQ(t.Tag(V4(0x0b000000)), 0);
  EXPECT_EQ(t.overflows(), 1u);
  EXPECT_EQ(t.Tag(V4(0x0a000000)), 1);  // known ones keep their tags
}

// What WritePktinfo writes for a source, read back as a received
// datagram's destination would be.
NetAddr RoundTrip(int family, const NetAddr& src) {
  alignas(cmsghdr) uint8_t buf[128];
  const size_t n = WritePktinfo(family, src, buf, sizeof(buf));
  EXPECT_GT(n, 0u);
  const auto* c = reinterpret_cast<const cmsghdr*>(buf);
  NetAddr out;
  if (family == AF_INET) {
    // On send the source is ipi_spec_dst; on receive the destination is
    // ipi_addr. Move it across to read it back.
    in_pktinfo pi;
    std::memcpy(&pi, CMSG_DATA(c), sizeof(pi));
    EXPECT_EQ(pi.ipi_addr.s_addr, 0u);
    EXPECT_EQ(pi.ipi_ifindex, 0);
    pi.ipi_addr = pi.ipi_spec_dst;
    std::memcpy(CMSG_DATA(const_cast<cmsghdr*>(c)), &pi, sizeof(pi));
  }
  EXPECT_TRUE(ParsePktinfo(c, &out));
  return out;
}

TEST(LocalAddrsTest, PktinfoCarriesIpv4Ipv6AndMappedSources) {
  EXPECT_EQ(RoundTrip(AF_INET, V4(0x7f000002)), V4(0x7f000002));
  // A dual-stack socket: an IPv4 source goes as ::ffff:a.b.c.d and reads
  // back as IPv4.
  EXPECT_EQ(RoundTrip(AF_INET6, V4(0x0a010203)), V4(0x0a010203));
  auto v6 = NetAddr::Parse("[fd00::7]:0", true);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(RoundTrip(AF_INET6, *v6), *v6);
}

TEST(LocalAddrsTest, PktinfoRefusesWhatTheSocketCannotSend) {
  alignas(cmsghdr) uint8_t buf[128];
  auto v6 = NetAddr::Parse("[fd00::7]:0", true);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(WritePktinfo(AF_INET, *v6, buf, sizeof(buf)), 0u);
  EXPECT_EQ(WritePktinfo(AF_INET, NetAddr{}, buf, sizeof(buf)), 0u);
  EXPECT_EQ(WritePktinfo(AF_INET6, *v6, buf, 8), 0u);  // no room
  // Other control messages are not pktinfo.
  auto* c = reinterpret_cast<cmsghdr*>(buf);
  c->cmsg_level = IPPROTO_IP;
  c->cmsg_type = IP_TOS;
  c->cmsg_len = CMSG_LEN(1);
  NetAddr out = V4(1);
  EXPECT_FALSE(ParsePktinfo(c, &out));
  EXPECT_EQ(out, V4(1));
  // A truncated IP_PKTINFO is refused, not read past its end.
  c->cmsg_type = IP_PKTINFO;
  c->cmsg_len = CMSG_LEN(4);
  EXPECT_FALSE(ParsePktinfo(c, &out));
}

}  // namespace
}  // namespace braid::backend

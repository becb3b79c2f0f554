#include "verbs_compat/gid.h"

#include <cstring>

#include "gtest/gtest.h"

namespace braid::verbs_compat {
namespace {

TEST(GidTest, EncodesIpv4AndPortAndDecodesBack) {
  const NetAddr a = NetAddr::Ipv4(0x7f000001, 20001);
  const ibv_gid g = EncodeGid(a);
  const uint8_t want[16] = {0,    0,    0,    0,    0,   0, 0, 0,
                            0x4e, 0x21, 0xff, 0xff, 127, 0, 0, 1};
  EXPECT_EQ(std::memcmp(g.raw, want, 16), 0);
  std::optional<NetAddr> d = DecodeGid(g);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, a);
}

TEST(GidTest, ForeignGidsDoNotDecode) {
  ibv_gid g;
  std::memset(&g, 0, sizeof(g));
  EXPECT_FALSE(DecodeGid(g).has_value());  // all zero
  g.raw[0] = 0xfe;
  g.raw[1] = 0x80;  // link-local IB GID
  EXPECT_FALSE(DecodeGid(g).has_value());
  g = EncodeGid(NetAddr::Ipv4(0x0a000001, 0));
  EXPECT_FALSE(DecodeGid(g).has_value());  // port 0
}

TEST(GidTest, AddressVectorWithoutGrhUsesTheLidAsPort) {
  const NetAddr local = NetAddr::Ipv4(0x7f000001, 20000);
  ibv_ah_attr ah{};
  ah.dlid = 20005;
  std::optional<NetAddr> r = ResolveAh(ah, local);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, NetAddr::Ipv4(0x7f000001, 20005));
  ah.dlid = 0xc001;  // multicast LID
  EXPECT_FALSE(ResolveAh(ah, local).has_value());
  ah.is_global = 1;
  ah.grh.dgid = EncodeGid(NetAddr::Ipv4(0x0a000002, 7000));
  r = ResolveAh(ah, local);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, NetAddr::Ipv4(0x0a000002, 7000));
}

TEST(GidTest, UdEndpointOnAnIpv4MappedGidEncodesItsQpnAndDecodesBack) {
  // A RoCE v2 GID ::ffff:10.0.0.7 and QP 0x12abcd.
  uint8_t carrier[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7};
  const NetAddr a = NetAddr::IbUd(carrier, 0x12abcd);
  ASSERT_TRUE(CarriesUd(a));
  const ibv_gid g = EncodeGid(a);
  const uint8_t want[16] = {0, 0, 0,    0,    0,  0x12, 0xab, 0xcd,
                            0, 0, 0xff, 0xff, 10, 0,    0,    7};
  EXPECT_EQ(std::memcmp(g.raw, want, 16), 0);
  std::optional<NetAddr> d = DecodeGid(g);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, a);
  // Another braid device's GID (port in bytes 8..9) carries too.
  uint8_t braid1[16] = {0,    0,    0,    0,    0,   0, 0, 0,
                        0x4e, 0x20, 0xff, 0xff, 127, 0, 0, 1};
  const NetAddr b = NetAddr::IbUd(braid1, 0x100);
  ASSERT_TRUE(CarriesUd(b));
  EXPECT_EQ(*DecodeGid(EncodeGid(b)), b);
  // An IPv6 GID cannot be encoded.
  uint8_t v6[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_FALSE(CarriesUd(NetAddr::IbUd(v6, 5)));
  EXPECT_FALSE(CarriesUd(NetAddr::Ipv4(0x7f000001, 1)));
}

TEST(GidTest, OverUdAnAddressVectorWithoutGrhNamesNothing) {
  uint8_t carrier[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7};
  const NetAddr local = NetAddr::IbUd(carrier, 0x100);
  ibv_ah_attr ah{};
  ah.dlid = 0x100;
  EXPECT_FALSE(ResolveAh(ah, local).has_value());
}

}  // namespace
}  // namespace braid::verbs_compat

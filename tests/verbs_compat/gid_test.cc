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

}  // namespace
}  // namespace braid::verbs_compat

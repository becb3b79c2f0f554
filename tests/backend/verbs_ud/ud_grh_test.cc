#include "backend/verbs_ud/ud_grh.h"

#include <cstring>

#include "gtest/gtest.h"

namespace braid::backend {
namespace {

TEST(UdGrhTest, AnIpv6ShapedGrhGivesTheSourceGidAndEcn) {
  uint8_t sgid[16], dgid[16], grh[kGrhBytes];
  for (int i = 0; i < 16; ++i) {
    sgid[i] = static_cast<uint8_t>(0xa0 + i);
    dgid[i] = static_cast<uint8_t>(i);
  }
  WriteGrh(sgid, dgid, /*tclass=*/0x03, 100, grh);
  std::optional<GrhInfo> g = ParseGrh(grh);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(std::memcmp(g->sgid.data(), sgid, 16), 0);
  EXPECT_TRUE(g->ce);
  WriteGrh(sgid, dgid, /*tclass=*/0x02, 100, grh);  // ECT(0), not marked
  EXPECT_FALSE(ParseGrh(grh)->ce);
}

TEST(UdGrhTest, RoceV2Ipv4HeaderInTheLastTwentyBytesIsReadAsAMappedGid) {
  uint8_t grh[kGrhBytes];
  std::memset(grh, 0xee, 20);  // undefined bytes: whatever the NIC left
  uint8_t* ip = grh + 20;
  std::memset(ip, 0, 20);
  ip[0] = 0x45;
  ip[1] = 0x03;  // CE
  ip[12] = 10, ip[13] = 1, ip[14] = 2, ip[15] = 3;
  grh[0] = 0x45;  // even a first byte that looks like IPv4 is not IPv6
  std::optional<GrhInfo> g = ParseGrh(grh);
  ASSERT_TRUE(g.has_value());
  const uint8_t want[16] = {0, 0, 0,    0,    0,  0, 0, 0,
                            0, 0, 0xff, 0xff, 10, 1, 2, 3};
  EXPECT_EQ(std::memcmp(g->sgid.data(), want, 16), 0);
  EXPECT_TRUE(g->ce);
}

TEST(UdGrhTest, NeitherHeaderIsRefused) {
  uint8_t grh[kGrhBytes] = {0};
  EXPECT_FALSE(ParseGrh(grh).has_value());
  grh[0] = 0x40;   // IPv4 version nibble where a GRH would be, nothing at 20
  grh[20] = 0x46;  // IPv4 with options: RoCE v2 never sends these
  EXPECT_FALSE(ParseGrh(grh).has_value());
}

TEST(UdGrhTest, MtuEnumIsConvertedToBytes) {
  EXPECT_EQ(MtuBytes(IBV_MTU_256), 256u);
  EXPECT_EQ(MtuBytes(IBV_MTU_1024), 1024u);
  EXPECT_EQ(MtuBytes(IBV_MTU_4096), 4096u);
  EXPECT_EQ(MtuBytes(static_cast<ibv_mtu>(9)), 0u);
}

}  // namespace
}  // namespace braid::backend

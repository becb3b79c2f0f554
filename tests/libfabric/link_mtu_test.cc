#include "libfabric/link_mtu.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace braid::libfabric {
namespace {

// The loopback interface's MTU as sysfs reports it (0 if unreadable).
uint32_t SysfsLoMtu() {
  std::ifstream f("/sys/class/net/lo/mtu");
  uint32_t mtu = 0;
  f >> mtu;
  return mtu;
}

TEST(LinkMtuTest, LoopbackAddressHasTheLoopbackInterfacesMtu) {
  const uint32_t lo = SysfsLoMtu();
  ASSERT_GT(lo, 0u) << "no /sys/class/net/lo/mtu";
  std::string name;
  EXPECT_EQ(LinkMtu(NetAddr::Ipv4(0x7f000001, 5000), &name), lo);
  EXPECT_EQ(name, "lo");
  EXPECT_EQ(DefaultMtu(NetAddr::Ipv4(0x7f000001, 0)),
            std::min(lo, kMaxDefaultMtu));
}

TEST(LinkMtuTest, AnAddressNoInterfaceHasGetsTheEthernetDefault) {
  const NetAddr nowhere = NetAddr::Ipv4(0xc0000201, 1);  // 192.0.2.1
  EXPECT_EQ(LinkMtu(nowhere), 0u);
  EXPECT_EQ(DefaultMtu(nowhere), 1500u);
}

TEST(LinkMtuTest, WildcardAndInvalidAddressesHaveNoLink) {
  EXPECT_EQ(LinkMtu(NetAddr::Ipv4(0, 0)), 0u);
  EXPECT_EQ(DefaultMtu(NetAddr::Ipv4(0, 0)), 1500u);
  EXPECT_EQ(LinkMtu(NetAddr()), 0u);
  EXPECT_EQ(DefaultMtu(NetAddr()), 1500u);
}

}  // namespace
}  // namespace braid::libfabric

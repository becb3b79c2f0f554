#include "backend/backend_factory.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace braid::backend {
namespace {

NetAddr Loopback() { return NetAddr::Ipv4(0x7f000001, 0); }

TEST(BackendFactoryTest, UdpIsBuiltFromTheOptions) {
  EndpointOptions o;
  o.mtu = 1500;
  o.protocol.paths = 8;
  auto be = MakeBackend(o, Loopback());
  ASSERT_TRUE(be.ok()) << be.status();
  EXPECT_EQ((*be)->MaxDatagram(), 1500u - 20 - 8);
  EXPECT_EQ((*be)->EntropyCount(), 16u);  // twice the paths
  EXPECT_EQ((*be)->LocalAddress().family, NetAddr::Family::kIpv4);
  EXPECT_NE((*be)->LocalAddress().port, 0);
}

TEST(BackendFactoryTest, UdpTakesItsOwnSettingsAndTheModesPathCount) {
  EndpointOptions o;
  o.udp.entropy_sockets = 5;
  auto be = MakeBackend(o, Loopback());
  ASSERT_TRUE(be.ok()) << be.status();
  EXPECT_EQ((*be)->EntropyCount(), 5u);
  o = {};
  o.protocol.mode = Mode::kGoBackN;  // one path: two sockets
  be = MakeBackend(o, Loopback());
  ASSERT_TRUE(be.ok()) << be.status();
  EXPECT_EQ((*be)->EntropyCount(), 2u);
}

TEST(BackendFactoryTest, ABackendNotBuiltNamesItselfAndItsBuildOption) {
  // dpdk and verbs_ud are left out where their libraries were not found.
  std::vector<BackendKind> not_built;
  for (BackendKind k : {BackendKind::kDpdk, BackendKind::kVerbsUd}) {
    if (!BackendBuilt(k)) not_built.push_back(k);
  }
  for (BackendKind k : not_built) {
    ASSERT_FALSE(BackendBuilt(k));
    EndpointOptions o;
    o.backend = k;
    auto be = MakeBackend(o, Loopback());
    EXPECT_TRUE(absl::IsUnimplemented(be.status())) << be.status();
    const std::string msg(be.status().message());
    EXPECT_NE(msg.find(BackendName(k)), std::string::npos) << msg;
    EXPECT_NE(msg.find(BackendBuildOption(k)), std::string::npos) << msg;
  }
  EXPECT_EQ(std::string(BackendBuildOption(BackendKind::kDpdk)),
            "BRAID_BACKEND_DPDK");
  EXPECT_EQ(std::string(BackendBuildOption(BackendKind::kVerbsUd)),
            "BRAID_BACKEND_VERBS_UD");
  EXPECT_TRUE(BackendBuilt(BackendKind::kUdp));
}

TEST(BackendFactoryTest, VerbsUdWithoutADeviceIsNotFoundNamingTheOption) {
  if (!BackendBuilt(BackendKind::kVerbsUd)) GTEST_SKIP() << "not built";
  // This binary does not load libbraid-verbs.so, and the host has no RDMA
  // NIC: libibverbs lists no device.
  EndpointOptions o;
  o.backend = BackendKind::kVerbsUd;
  o.ud.device = "mlx5_0";
  auto be = MakeBackend(o, Loopback());
  EXPECT_TRUE(absl::IsNotFound(be.status())) << be.status();
  EXPECT_NE(std::string(be.status().message()).find("ud.device"),
            std::string::npos)
      << be.status();
}

TEST(BackendFactoryTest, AValueThatNamesNoBackendIsInvalidArgument) {
  EndpointOptions o;
  o.backend = static_cast<BackendKind>(9);
  EXPECT_TRUE(absl::IsInvalidArgument(MakeBackend(o, Loopback()).status()));
}

TEST(BackendFactoryTest, NamesParseBackToTheirBackend) {
  for (BackendKind k :
       {BackendKind::kUdp, BackendKind::kDpdk, BackendKind::kVerbsUd}) {
    auto parsed = ParseBackend(BackendName(k));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, k);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(ParseBackend("rdma").status()));
}

}  // namespace
}  // namespace braid::backend

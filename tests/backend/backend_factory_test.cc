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
  // verbs_ud is never built yet; dpdk only where DPDK was not found.
  std::vector<BackendKind> not_built = {BackendKind::kVerbsUd};
  if (!BackendBuilt(BackendKind::kDpdk)) {
    not_built.push_back(BackendKind::kDpdk);
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

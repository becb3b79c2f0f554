#include "backend/udp/udp_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/backend/udp/udp_test_util.h"

namespace braid::backend {
namespace {

using ::testing::HasSubstr;
using testing::Loopback4;
using testing::LoopbackOptions;

TEST(ValidateUdpOptionsTest, DefaultsWithAnAddressAreValid) {
  EXPECT_TRUE(ValidateUdpOptions(LoopbackOptions()).ok());
}

TEST(ValidateUdpOptionsTest, MissingBindAddressIsRejected) {
  UdpOptions o;
  absl::Status s = ValidateUdpOptions(o);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("bind"));
}

TEST(ValidateUdpOptionsTest, EntropyCountOutside1To256IsRejected) {
  UdpOptions o = LoopbackOptions();
  o.num_entropies = 0;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("num_entropies"));
  o.num_entropies = 257;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("num_entropies"));
  o.num_entropies = 256;
  EXPECT_TRUE(ValidateUdpOptions(o).ok());
}

TEST(ValidateUdpOptionsTest, MtuOutsideUdpLimitsIsRejected) {
  UdpOptions o = LoopbackOptions();
  o.mtu_payload = 10;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("mtu_payload"));
  o.mtu_payload = 65508;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("mtu_payload"));
}

TEST(ValidateUdpOptionsTest, BurstAndBufferSizesMustBePositive) {
  UdpOptions o = LoopbackOptions();
  o.burst = 0;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("burst"));
  o = LoopbackOptions();
  o.burst = 2000;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("burst"));
  o = LoopbackOptions();
  o.sndbuf = 0;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("sndbuf"));
}

TEST(ValidateUdpOptionsTest, SourcePortRangePastPort65535IsRejected) {
  UdpOptions o = LoopbackOptions();
  o.src_port_base = 65530;
  o.num_entropies = 16;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("65535"));
}

TEST(ValidateUdpOptionsTest, ReceivePortInsideSourceRangeIsRejected) {
  UdpOptions o = LoopbackOptions();
  o.src_port_base = 40000;
  o.bind.port = 40003;
  EXPECT_THAT(ValidateUdpOptions(o).message(), HasSubstr("40003"));
}

TEST(SyscallErrorTest, AddressInUseNamesThePort) {
  absl::Status s =
      SyscallError("bind", "127.0.0.1:9000 receive socket", EADDRINUSE, 9000);
  EXPECT_THAT(s.message(), HasSubstr("bind(127.0.0.1:9000 receive socket)"));
  EXPECT_THAT(s.message(), HasSubstr("port 9000 in use"));
  EXPECT_TRUE(absl::IsAlreadyExists(s)) << s;
}

TEST(SyscallErrorTest, CodesAreTheOnesOpenDocuments) {
  EXPECT_TRUE(
      absl::IsInvalidArgument(SyscallError("bind", "x", EADDRNOTAVAIL)));
  EXPECT_TRUE(absl::IsPermissionDenied(SyscallError("bind", "x", EACCES, 80)));
  EXPECT_TRUE(absl::IsResourceExhausted(SyscallError("socket", "x", EMFILE)));
  const absl::Status other = SyscallError("setsockopt", "x", EINVAL);
  EXPECT_TRUE(absl::IsUnavailable(other)) << other;
  EXPECT_THAT(other.message(), HasSubstr(strerror(EINVAL)));
}

TEST(SyscallErrorTest, MissingFamilyMentionsIpv6) {
  absl::Status s = SyscallError("socket", "AF_INET6", EAFNOSUPPORT);
  EXPECT_THAT(s.message(), HasSubstr("IPv6"));
}

TEST(OpenUdpSocketsTest, OpensOneReceiveAndOneSocketPerEntropy) {
  UdpOptions o = LoopbackOptions();
  o.num_entropies = 8;
  absl::StatusOr<UdpSockets> s = OpenUdpSockets(o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GE(s->rx_fd, 0);
  EXPECT_EQ(s->tx_fds.size(), 8u);
  EXPECT_EQ(s->tx_ports.size(), 8u);
  EXPECT_EQ(s->local.family, NetAddr::Family::kIpv4);
  EXPECT_NE(s->local.port, 0);
  EXPECT_EQ(s->local.ipv4(), 0x7f000001u);
  for (int fd : s->tx_fds) {
    EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
  }
  EXPECT_TRUE(fcntl(s->rx_fd, F_GETFL) & O_NONBLOCK);
}

TEST(OpenUdpSocketsTest, EphemeralSourcePortsAreDistinct) {
  absl::StatusOr<UdpSockets> s = OpenUdpSockets(LoopbackOptions());
  ASSERT_TRUE(s.ok()) << s.status();
  std::set<uint16_t> ports(s->tx_ports.begin(), s->tx_ports.end());
  ports.insert(s->local.port);
  EXPECT_EQ(ports.size(), 17u);
}

TEST(OpenUdpSocketsTest, SourcePortBaseGivesConsecutivePorts) {
  // Try a few bases in case one is busy on this machine.
  for (uint16_t base : {47000, 48100, 49200, 50300, 51400}) {
    UdpOptions o = LoopbackOptions();
    o.num_entropies = 4;
    o.src_port_base = base;
    absl::StatusOr<UdpSockets> s = OpenUdpSockets(o);
    if (!s.ok()) continue;
    for (uint16_t i = 0; i < 4; ++i) EXPECT_EQ(s->tx_ports[i], base + i);
    return;
  }
  GTEST_SKIP() << "no free port range found";
}

TEST(OpenUdpSocketsTest, PortInUseIsReportedByNumber) {
  absl::StatusOr<UdpSockets> first = OpenUdpSockets(LoopbackOptions());
  ASSERT_TRUE(first.ok()) << first.status();
  UdpOptions o = LoopbackOptions();
  o.bind.port = first->local.port;
  absl::StatusOr<UdpSockets> second = OpenUdpSockets(o);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr("bind("));
  EXPECT_THAT(second.status().message(),
              HasSubstr(absl::StrCat("port ", first->local.port, " in use")));
}

TEST(OpenUdpSocketsTest, NonLocalAddressIsReported) {
  UdpOptions o = LoopbackOptions();
  o.bind = NetAddr::Ipv4(0xc0000201, 0);  // 192.0.2.1, TEST-NET-1
  absl::StatusOr<UdpSockets> s = OpenUdpSockets(o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("not assigned"));
}

TEST(OpenUdpSocketsTest, ClosingReleasesThePort) {
  uint16_t port = 0;
  {
    absl::StatusOr<UdpSockets> s = OpenUdpSockets(LoopbackOptions());
    ASSERT_TRUE(s.ok()) << s.status();
    port = s->local.port;
  }
  UdpOptions o = LoopbackOptions();
  o.bind.port = port;
  absl::StatusOr<UdpSockets> again = OpenUdpSockets(o);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(OpenUdpSocketsTest, RequestedBuffersAreGrantedWhenPrivileged) {
  UdpOptions o = LoopbackOptions();
  absl::StatusOr<UdpSockets> s = OpenUdpSockets(o);
  ASSERT_TRUE(s.ok()) << s.status();
  if (geteuid() != 0) GTEST_SKIP() << "SO_*BUFFORCE needs CAP_NET_ADMIN";
  EXPECT_GE(s->rcvbuf_bytes, o.rcvbuf);
  EXPECT_GE(s->sndbuf_bytes, o.sndbuf);
}

}  // namespace
}  // namespace braid::backend

// Checks the framing against Linux itself on the loopback interface: the
// headers the kernel puts on a datagram from braid's UDP backend sockets are
// the ones WriteFrameHeader writes, and the kernel delivers a frame braid
// wrote to a UDP socket and drops one with a bad checksum (IPv6; see
// below). Needs CAP_NET_RAW for an AF_PACKET socket on lo; skipped without.
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "backend/dpdk/frame.h"
#include "backend/udp/udp_setup.h"
#include "backend/udp/udp_sockaddr.h"
#include "gtest/gtest.h"
#include "tests/backend/dpdk/frame_test_util.h"

namespace braid::backend::dpdk {
namespace {

using testing::Bytes;

// An AF_PACKET socket bound to lo (closed on destruction).
class LoopbackTap {
 public:
  LoopbackTap() {
    ifindex_ = static_cast<int>(if_nametoindex("lo"));
    fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
    if (fd_ < 0 || ifindex_ == 0) return;
    // Other tests may be sending on lo at the same time: a deep buffer so
    // that their frames do not push ours out (root: past rmem_max).
    const int rcvbuf = 8 << 20;
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) !=
        0) {
      (void)setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    }
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = ifindex_;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof(sll)) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~LoopbackTap() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  // The next frame on lo carrying UDP from src_port to dst_port within
  // `wait` (empty if none came).
  Bytes NextUdp(uint16_t src_port, uint16_t dst_port,
                std::chrono::milliseconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline) {
      uint8_t buf[2048];
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n < 0) {
        pollfd p{fd_, POLLIN, 0};
        (void)poll(&p, 1, 100);
        continue;
      }
      const Bytes f(buf, buf + n);
      if (f.size() < 42) continue;
      const uint16_t type = LoadBe16(f.data() + 12);
      const size_t udp = type == kEtherTypeIpv4 ? 34 : 54;
      const uint8_t proto = type == kEtherTypeIpv4 ? f[23] : f[20];
      if ((type != kEtherTypeIpv4 && type != kEtherTypeIpv6) ||
          proto != kIpProtoUdp || f.size() < udp + 8) {
        continue;
      }
      if (LoadBe16(f.data() + udp) == src_port &&
          LoadBe16(f.data() + udp + 2) == dst_port) {
        return f;
      }
    }
    return {};
  }

  bool Send(const Bytes& frame) {
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = ifindex_;
    sll.sll_halen = 6;
    return sendto(fd_, frame.data(), frame.size(), 0,
                  reinterpret_cast<sockaddr*>(&sll),
                  sizeof(sll)) == static_cast<ssize_t>(frame.size());
  }

 private:
  int fd_ = -1;
  int ifindex_ = 0;
};

NetAddr Loopback(bool v6) {
  return testing::Addr(v6 ? "[::1]:0" : "127.0.0.1:0");
}

// Braid's kernel backend sockets on loopback: one sender, one receiver.
absl::StatusOr<UdpSockets> OpenLoopback(bool v6) {
  UdpOptions o;
  o.bind = Loopback(v6);
  o.num_entropies = 1;
  o.gso = false;
  o.gro = false;
  return OpenUdpSockets(o);
}

// Receives one datagram on fd (5 s hang guard); empty if none.
Bytes ReceiveOne(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 5000) != 1) return {};
  uint8_t buf[2048];
  const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
  return n < 0 ? Bytes{} : Bytes(buf, buf + n);
}

class FrameKernelTest : public ::testing::TestWithParam<bool> {};

TEST_P(FrameKernelTest, KernelSendsTheHeadersWeWrite) {
  const bool v6 = GetParam();
  LoopbackTap tap;
  if (!tap.ok()) GTEST_SKIP() << "no AF_PACKET socket on lo (CAP_NET_RAW)";
  absl::StatusOr<UdpSockets> s = OpenLoopback(v6);
  if (!s.ok()) GTEST_SKIP() << "loopback unavailable: " << s.status();
  const Bytes payload = {'h', 'e', 'l', 'l', 'o', ' ', 'd', 'p', 'd', 'k', '!'};
  sockaddr_storage ss;
  const socklen_t len = ToSockaddr(s->local, s->family, &ss);
  // Up to 3 datagrams: a tap can still drop a frame when lo is busy with
  // other tests' traffic (every copy is the same datagram).
  Bytes kernel;
  for (int attempt = 0; attempt < 3 && kernel.empty(); ++attempt) {
    ASSERT_EQ(sendto(s->tx_fds[0], payload.data(), payload.size(), 0,
                     reinterpret_cast<sockaddr*>(&ss), len),
              static_cast<ssize_t>(payload.size()));
    kernel = tap.NextUdp(s->tx_ports[0], s->local.port,
                         std::chrono::milliseconds(2000));
  }
  ASSERT_FALSE(kernel.empty()) << "the datagram never showed on lo";

  FrameHeaderSpec spec;  // lo's MAC is all zeros
  spec.src = s->local;
  spec.src.port = s->tx_ports[0];
  spec.dst = s->local;
  spec.ect = true;
  if (v6) {
    // The kernel labels the flow from its 5-tuple: take its label.
    spec.flow_label = (uint32_t{kernel[15]} & 0xf) << 16 |
                      uint32_t{kernel[16]} << 8 | kernel[17];
  }
  Bytes ours = testing::BuildFrame(spec, payload);
  ASSERT_EQ(ours.size(), kernel.size());
  const size_t csum = FrameHeaderLen(spec.src.family) - 2;
  if (!v6) {
    // A connected socket numbers its datagrams; take the kernel's IP ID
    // (an unconnected one sends 0 with DF, as we do).
    ours[18] = kernel[18];
    ours[19] = kernel[19];
    ours[24] = ours[25] = 0;
    StoreBe16(ours.data() + 24, testing::NaiveChecksum(Bytes(
                                    ours.begin() + 14, ours.begin() + 34)));
  }
  // lo offloads the UDP checksum: the field holds either the full checksum
  // or the pseudo-header sum a NIC would complete.
  Bytes pseudo(ours.begin(), ours.begin() + csum + 2);
  SetUdpPseudoHeaderChecksum(absl::MakeSpan(pseudo));
  const uint16_t k = LoadBe16(kernel.data() + csum);
  EXPECT_TRUE(k == LoadBe16(ours.data() + csum) ||
              k == LoadBe16(pseudo.data() + csum))
      << "kernel UDP checksum " << k;
  Bytes a = kernel, b = ours;
  a[csum] = a[csum + 1] = b[csum] = b[csum + 1] = 0;
  EXPECT_EQ(a, b);
}

// IPv6 only: an IPv4 frame injected on lo to 127.0.0.1 has no route
// attached, and without route_localnet the kernel drops it as a martian.
TEST(KernelDeliveryTest, KernelDeliversOurFrameAndDropsABadChecksum) {
  const bool v6 = true;
  LoopbackTap tap;
  if (!tap.ok()) GTEST_SKIP() << "no AF_PACKET socket on lo (CAP_NET_RAW)";
  absl::StatusOr<UdpSockets> s = OpenLoopback(v6);
  if (!s.ok()) GTEST_SKIP() << "loopback unavailable: " << s.status();
  FrameHeaderSpec spec;
  spec.src = s->local;
  spec.src.port = 40000;
  spec.dst = s->local;
  spec.ect = true;
  Bytes bad = testing::BuildFrame(spec, Bytes{'b', 'a', 'd'});
  bad.back() ^= 1;  // payload no longer matches the UDP checksum
  const Bytes good = testing::BuildFrame(spec, Bytes{'g', 'o', 'o', 'd'});
  ASSERT_TRUE(tap.Send(bad));
  ASSERT_TRUE(tap.Send(good));
  // lo keeps order: if the bad one were accepted it would come first.
  EXPECT_EQ(ReceiveOne(s->rx_fd), (Bytes{'g', 'o', 'o', 'd'}));
}

INSTANTIATE_TEST_SUITE_P(Families, FrameKernelTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "Ipv6" : "Ipv4");
                         });

}  // namespace
}  // namespace braid::backend::dpdk

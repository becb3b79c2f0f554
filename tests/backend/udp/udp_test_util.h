// Helpers shared by the UDP backend tests: loopback options, a receive loop
// with a generous deadline (a hang guard, never a timing assertion), and
// plain sockets that play the peer.
#ifndef BRAID_TESTS_BACKEND_UDP_UDP_TEST_UTIL_H_
#define BRAID_TESTS_BACKEND_UDP_UDP_TEST_UTIL_H_

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend/udp/udp_backend.h"
#include "backend/udp/udp_sockaddr.h"
#include "braid/address.h"
#include "gtest/gtest.h"

namespace braid::backend::testing {

inline NetAddr Loopback4(uint16_t port = 0) {
  return NetAddr::Ipv4(0x7f000001, port);
}

inline NetAddr Loopback6(uint16_t port = 0) {
  NetAddr a;
  a.family = NetAddr::Family::kIpv6;
  a.port = port;
  a.ip[15] = 1;
  return a;
}

inline UdpOptions LoopbackOptions(bool gso = true, bool gro = true) {
  UdpOptions o;
  o.bind = Loopback4();
  o.gso = gso;
  o.gro = gro;
  return o;
}

// One received datagram, copied out of the backend's buffer.
struct Received {
  NetAddr src;
  bool ce = false;
  std::vector<uint8_t> bytes;
  TimeNs arrival = TimeNs::Infinite();
};

// Receives until `want` datagrams arrived or 5 s passed (a hang guard).
inline std::vector<Received> ReceiveN(UdpBackend& b, size_t want,
                                      size_t burst = 64) {
  std::vector<Received> got;
  std::vector<RxPacket> pkts(burst);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.size() < want && std::chrono::steady_clock::now() < deadline) {
    size_t n = b.RxBurst(absl::MakeSpan(pkts));
    for (size_t i = 0; i < n; ++i) {
      got.push_back(Received{
          pkts[i].src, pkts[i].ce,
          std::vector<uint8_t>(pkts[i].data, pkts[i].data + pkts[i].len),
          pkts[i].arrival});
    }
    if (n == 0 && !b.RxPending()) {
      pollfd p{b.WaitFd(), POLLIN, 0};
      (void)poll(&p, 1, 100);
    }
  }
  return got;
}

// Opens a backend; a failure fails the calling test and returns nullptr.
inline std::unique_ptr<UdpBackend> OpenOrDie(const UdpOptions& o) {
  absl::StatusOr<std::unique_ptr<UdpBackend>> b = UdpBackend::Open(o);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? std::move(*b) : nullptr;
}

// A plain UDP socket (the "other side" in tests). Closed on destruction.
class PlainSocket {
 public:
  explicit PlainSocket(int family) : family_(family) {
    fd_ = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  }
  ~PlainSocket() {
    if (fd_ >= 0) close(fd_);
  }
  PlainSocket(const PlainSocket&) = delete;
  PlainSocket& operator=(const PlainSocket&) = delete;

  int fd() const { return fd_; }

  // Binds to `a`; returns the bound address or an invalid NetAddr.
  NetAddr Bind(const NetAddr& a) {
    sockaddr_storage ss;
    socklen_t len = ToSockaddr(a, family_, &ss);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) return {};
    socklen_t got = sizeof(ss);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &got);
    NetAddr out;
    FromSockaddr(ss, got, &out);
    return out;
  }

  bool SendTo(const NetAddr& dst, const std::string& payload) {
    sockaddr_storage ss;
    socklen_t len = ToSockaddr(dst, family_, &ss);
    return sendto(fd_, payload.data(), payload.size(), 0,
                  reinterpret_cast<sockaddr*>(&ss),
                  len) == static_cast<ssize_t>(payload.size());
  }

  // Receives one datagram (waiting up to 5 s) and its TOS/TCLASS byte.
  // Returns the payload size, or -1.
  int RecvWithTos(int* tos, std::string* payload) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 5000) != 1) return -1;
    char buf[65536];
    alignas(cmsghdr) char ctrl[256];
    iovec iov{buf, sizeof(buf)};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    h.msg_control = ctrl;
    h.msg_controllen = sizeof(ctrl);
    ssize_t n = recvmsg(fd_, &h, 0);
    if (n < 0) return -1;
    *tos = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
        *tos = *reinterpret_cast<uint8_t*>(CMSG_DATA(c));
      } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
        std::memcpy(tos, CMSG_DATA(c), sizeof(int));
      }
    }
    payload->assign(buf, static_cast<size_t>(n));
    return static_cast<int>(n);
  }

 private:
  int family_;
  int fd_ = -1;
};

}  // namespace braid::backend::testing

#endif  // BRAID_TESTS_BACKEND_UDP_UDP_TEST_UTIL_H_

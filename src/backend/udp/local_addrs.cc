#include "backend/udp/local_addrs.h"

#include <netinet/in.h>

#include <cstddef>
#include <cstring>

#include "backend/udp/udp_sockaddr.h"

namespace braid::backend {

uint8_t LocalAddrs::Tag(const NetAddr& addr) {
  NetAddr a = addr;
  a.port = 0;
  if (last_ != 0 && addrs_[last_ - 1] == a) return last_;
  for (size_t i = 0; i < addrs_.size(); ++i) {
    if (addrs_[i] == a) {
      last_ = static_cast<uint8_t>(i + 1);
      return last_;
    }
  }
  if (addrs_.size() >= kMaxTags) {
    ++overflows_;
    return 0;
  }
  addrs_.push_back(a);
  last_ = static_cast<uint8_t>(addrs_.size());
  return last_;
}

bool ParsePktinfo(const cmsghdr* c, NetAddr* out) {
  if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
      c->cmsg_len >= CMSG_LEN(sizeof(in_pktinfo))) {
    in_pktinfo pi;
    std::memcpy(&pi, CMSG_DATA(c), sizeof(pi));
    *out = NetAddr{};
    out->family = NetAddr::Family::kIpv4;
    std::memcpy(out->ip.data(), &pi.ipi_addr, 4);  // the header's destination
    return true;
  }
  if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO &&
      c->cmsg_len >= CMSG_LEN(sizeof(in6_pktinfo))) {
    in6_pktinfo pi;
    std::memcpy(&pi, CMSG_DATA(c), sizeof(pi));
    NetAddr a;
    a.family = NetAddr::Family::kIpv6;
    std::memcpy(a.ip.data(), &pi.ipi6_addr, 16);
    *out = a.Canonical();
    return true;
  }
  return false;
}

namespace {

// Writes a control message header at `out` for `len` bytes of data, zeroes
// the data, and returns where the data goes.
uint8_t* PutCmsg(uint8_t* out, int level, int type, size_t len) {
  auto* c = reinterpret_cast<cmsghdr*>(out);
  c->cmsg_level = level;
  c->cmsg_type = type;
  c->cmsg_len = CMSG_LEN(len);
  std::memset(CMSG_DATA(c), 0, len);
  return CMSG_DATA(c);
}

}  // namespace

size_t WritePktinfo(int sock_family, const NetAddr& src, uint8_t* out,
                    size_t room) {
  if (sock_family == AF_INET && src.family == NetAddr::Family::kIpv4) {
    if (room < CMSG_SPACE(sizeof(in_pktinfo))) return 0;
    uint8_t* d = PutCmsg(out, IPPROTO_IP, IP_PKTINFO, sizeof(in_pktinfo));
    // ipi_spec_dst is the source to use; ipi_addr and ipi_ifindex stay 0.
    std::memcpy(d + offsetof(in_pktinfo, ipi_spec_dst), src.ip.data(), 4);
    return CMSG_SPACE(sizeof(in_pktinfo));
  }
  // On an IPv6 socket an IPv4 source is written as ::ffff:a.b.c.d, as
  // ToSockaddr writes an IPv4 destination.
  sockaddr_storage ss;
  if (sock_family != AF_INET6 || ToSockaddr(src, AF_INET6, &ss) == 0 ||
      room < CMSG_SPACE(sizeof(in6_pktinfo))) {
    return 0;
  }
  uint8_t* d = PutCmsg(out, IPPROTO_IPV6, IPV6_PKTINFO, sizeof(in6_pktinfo));
  std::memcpy(d + offsetof(in6_pktinfo, ipi6_addr),
              &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr,
              sizeof(in6_addr));
  return CMSG_SPACE(sizeof(in6_pktinfo));
}

}  // namespace braid::backend

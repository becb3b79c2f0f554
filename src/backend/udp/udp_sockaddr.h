// Conversions between NetAddr and the kernel's sockaddr types, shared by the
// UDP backend's setup and datapath. Inline: they run once per datagram.
#ifndef BRAID_BACKEND_UDP_UDP_SOCKADDR_H_
#define BRAID_BACKEND_UDP_UDP_SOCKADDR_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "braid/address.h"

namespace braid::backend {

// Writes `a` into `ss` in the form a socket of family `sock_family`
// (AF_INET or AF_INET6) accepts: an IPv4 address sent from an IPv6 socket
// becomes ::ffff:a.b.c.d. Returns the sockaddr length, or 0 if `a` cannot be
// expressed for that socket (no family, IPv6 address on an IPv4 socket).
inline socklen_t ToSockaddr(const NetAddr& a, int sock_family,
                            sockaddr_storage* ss) {
  if (a.family == NetAddr::Family::kIpv4 && sock_family == AF_INET) {
    auto* sin = reinterpret_cast<sockaddr_in*>(ss);
    std::memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_port = htons(a.port);
    std::memcpy(&sin->sin_addr, a.ip.data(), 4);
    return sizeof(sockaddr_in);
  }
  if (sock_family == AF_INET6 && a.family != NetAddr::Family::kNone) {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(ss);
    std::memset(sin6, 0, sizeof(*sin6));
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(a.port);
    if (a.family == NetAddr::Family::kIpv6) {
      std::memcpy(&sin6->sin6_addr, a.ip.data(), 16);
    } else {
      sin6->sin6_addr.s6_addr[10] = 0xff;
      sin6->sin6_addr.s6_addr[11] = 0xff;
      std::memcpy(&sin6->sin6_addr.s6_addr[12], a.ip.data(), 4);
    }
    return sizeof(sockaddr_in6);
  }
  return 0;
}

// Reads a kernel address into a NetAddr; IPv4-mapped IPv6 addresses become
// IPv4. Returns false (and leaves `out` untouched) for other families or a
// too-short length.
inline bool FromSockaddr(const sockaddr_storage& ss, socklen_t len,
                         NetAddr* out) {
  if (ss.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);
    out->family = NetAddr::Family::kIpv4;
    out->port = ntohs(sin->sin_port);
    out->ip = {};
    std::memcpy(out->ip.data(), &sin->sin_addr, 4);
    return true;
  }
  if (ss.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    out->port = ntohs(sin6->sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
      out->family = NetAddr::Family::kIpv4;
      out->ip = {};
      std::memcpy(out->ip.data(), &sin6->sin6_addr.s6_addr[12], 4);
    } else {
      out->family = NetAddr::Family::kIpv6;
      std::memcpy(out->ip.data(), &sin6->sin6_addr, 16);
    }
    return true;
  }
  return false;
}

}  // namespace braid::backend

#endif  // BRAID_BACKEND_UDP_UDP_SOCKADDR_H_

#include "libfabric/sockaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace braid::libfabric {

size_t ToSockaddr(const NetAddr& a, sockaddr_storage* out) {
  std::memset(out, 0, sizeof(*out));
  if (a.family == NetAddr::Family::kIpv4) {
    auto* in = reinterpret_cast<sockaddr_in*>(out);
    in->sin_family = AF_INET;
    in->sin_port = htons(a.port);
    std::memcpy(&in->sin_addr, a.ip.data(), 4);
    return sizeof(sockaddr_in);
  }
  if (a.family == NetAddr::Family::kIpv6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(a.port);
    std::memcpy(&in6->sin6_addr, a.ip.data(), 16);
    return sizeof(sockaddr_in6);
  }
  return 0;
}

bool FromSockaddr(const void* addr, size_t len, NetAddr* out) {
  if (addr == nullptr || len < sizeof(sa_family_t)) return false;
  sa_family_t family;
  std::memcpy(&family, addr, sizeof(family));
  NetAddr a;
  if (family == AF_INET && len >= sizeof(sockaddr_in)) {
    sockaddr_in in;
    std::memcpy(&in, addr, sizeof(in));
    a.family = NetAddr::Family::kIpv4;
    a.port = ntohs(in.sin_port);
    std::memcpy(a.ip.data(), &in.sin_addr, 4);
  } else if (family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6;
    std::memcpy(&in6, addr, sizeof(in6));
    a.family = NetAddr::Family::kIpv6;
    a.port = ntohs(in6.sin6_port);
    std::memcpy(a.ip.data(), &in6.sin6_addr, 16);
  } else {
    return false;
  }
  *out = a.Canonical();
  return true;
}

size_t SockaddrLen(const void* addr) {
  sa_family_t family;
  std::memcpy(&family, addr, sizeof(family));
  if (family == AF_INET) return sizeof(sockaddr_in);
  if (family == AF_INET6) return sizeof(sockaddr_in6);
  return 0;
}

}  // namespace braid::libfabric

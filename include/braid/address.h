// Network addresses of endpoints. A braid peer is named by IP address and UDP
// port; the transport needs no handshake to talk to it.
#ifndef BRAID_ADDRESS_H_
#define BRAID_ADDRESS_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace braid {

// An IPv4 or IPv6 address plus UDP port, or an InfiniBand/RoCE unreliable-
// datagram queue pair (the verbs UD backend's peers: its GID and QP number).
// Plain value type, cheap to copy and hash. IPv4 addresses are stored in the
// first four bytes of `ip`.
struct NetAddr {
  enum class Family : uint8_t { kNone = 0, kIpv4 = 4, kIpv6 = 6, kIbUd = 27 };

  Family family = Family::kNone;
  // kIbUd only: bits 16..23 of the QP number (`port` holds bits 0..15).
  uint8_t qpn_hi = 0;
  uint16_t port = 0;             // host byte order
  std::array<uint8_t, 16> ip{};  // kIbUd: the GID, in network byte order

  static NetAddr Ipv4(uint32_t host_order_ip, uint16_t port);
  // A UD queue pair: `gid` (16 bytes) and `qpn` (24 bits; higher bits are
  // dropped).
  static NetAddr IbUd(const uint8_t* gid, uint32_t qpn);
  // Parses "1.2.3.4:5678", "[::1]:5678", or a UD queue pair "[gid]/qpn"
  // (the GID written as an IPv6 address, the QP number in decimal or 0x
  // hex, 1..0xffffff). Returns InvalidArgument naming the problem for
  // anything else (missing port, port out of range, bad address).
  // Port 0 ("any port", for binding) is accepted only with allow_port_zero.
  static absl::StatusOr<NetAddr> Parse(absl::string_view text,
                                       bool allow_port_zero = false);

  bool valid() const { return family != Family::kNone; }
  // True for 0.0.0.0 and :: (bound there, the kernel picks the source IP per
  // route; an IPv6 socket bound to :: may also carry IPv4).
  bool IsWildcard() const;
  // True for multicast (224.0.0.0/4, ff00::/8) and IPv4 limited broadcast
  // (255.255.255.255): a reliable peer cannot live there.
  bool IsMulticastOrBroadcast() const;
  // An IPv4-mapped IPv6 address ([::ffff:a.b.c.d]:p) as the IPv4 address it
  // names (a.b.c.d:p), the form datagrams from that peer arrive with;
  // anything else unchanged.
  NetAddr Canonical() const;
  uint32_t ipv4() const;  // host byte order; only meaningful for kIpv4
  // The QP number; only meaningful for kIbUd.
  uint32_t qpn() const { return (uint32_t{qpn_hi} << 16) | port; }
  std::string ToString() const;

  // Compared once per datagram on the send path: two 8-byte words, not a
  // call to memcmp (std::array's == was one, ~1 % of a bulk sender).
  bool operator==(const NetAddr& o) const {
    if (family != o.family || port != o.port || qpn_hi != o.qpn_hi) {
      return false;
    }
    uint64_t a[2], b[2];
    std::memcpy(a, ip.data(), sizeof(a));
    std::memcpy(b, o.ip.data(), sizeof(b));
    return a[0] == b[0] && a[1] == b[1];
  }
  bool operator!=(const NetAddr& o) const { return !(*this == o); }
};

struct NetAddrHash {
  size_t operator()(const NetAddr& a) const;
};

template <typename H>
H AbslHashValue(H h, const NetAddr& a) {
  return H::combine(std::move(h), a.family, a.qpn_hi, a.port, a.ip);
}

}  // namespace braid

#endif  // BRAID_ADDRESS_H_

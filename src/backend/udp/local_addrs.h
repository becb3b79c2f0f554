// The local addresses an endpoint bound to the any-address (0.0.0.0, ::)
// has been reached at. Such an endpoint reads each datagram's destination
// address (IP_PKTINFO / IPV6_PKTINFO) and hands it up as a one-byte tag
// (RxPacket::local); a datagram sent with that tag (TxPacket::local) leaves
// from that address. Without this, answers leave from whatever source the
// route picks: a peer that reached us at a host's second address sees them
// come from another address, takes them for a stranger's, and its sends
// fail after the peer timeout although they arrived.
#ifndef BRAID_BACKEND_UDP_LOCAL_ADDRS_H_
#define BRAID_BACKEND_UDP_LOCAL_ADDRS_H_

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "braid/address.h"

namespace braid::backend {

class LocalAddrs {
 public:
  static constexpr size_t kMaxTags = 255;

  // The tag (1..kMaxTags) of `addr` (port ignored), added if new; 0 once
  // kMaxTags addresses are known (a datagram answered with tag 0 leaves
  // from the route's choice; counted in overflows()).
  uint8_t Tag(const NetAddr& addr);
  // The address tagged `tag` (port 0), or null for 0 or an unknown tag.
  const NetAddr* Find(uint8_t tag) const {
    if (tag == 0 || tag > addrs_.size()) return nullptr;
    return &addrs_[tag - 1];
  }
  size_t size() const { return addrs_.size(); }
  uint64_t overflows() const { return overflows_; }

 private:
  std::vector<NetAddr> addrs_;  // tag - 1 -> address, port 0
  uint8_t last_ = 0;            // the tag found last: most datagrams repeat it
  uint64_t overflows_ = 0;
};

// The destination address of a received datagram, from its IP_PKTINFO or
// IPV6_PKTINFO control message (an IPv4-mapped IPv6 address as IPv4).
// Returns false if `c` is neither or too short; `out` is then untouched.
bool ParsePktinfo(const cmsghdr* c, NetAddr* out);

// Writes at `out` (`room` bytes, cmsghdr-aligned) the control message that
// makes a datagram leave from `src`: IP_PKTINFO on an AF_INET socket,
// IPV6_PKTINFO on an AF_INET6 one (an IPv4 source as ::ffff:a.b.c.d, for a
// dual-stack socket). Returns the bytes used (CMSG_SPACE), or 0 if `room`
// is too small or `src` cannot be expressed on that socket.
size_t WritePktinfo(int sock_family, const NetAddr& src, uint8_t* out,
                    size_t room);

}  // namespace braid::backend

#endif  // BRAID_BACKEND_UDP_LOCAL_ADDRS_H_

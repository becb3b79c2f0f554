// The MTU of the interface that holds an IP address, for the provider's
// default FI_BRAID_MTU: the MTU of the link the endpoints bind on, as a
// NIC-backed provider takes its port's MTU.
#ifndef BRAID_LIBFABRIC_LINK_MTU_H_
#define BRAID_LIBFABRIC_LINK_MTU_H_

#include <cstdint>
#include <string>

#include "braid/address.h"

namespace braid::libfabric {

// The MTU of the interface that has `ip` (its port is ignored) as one of
// its addresses, and that interface's name in *ifname when given. 0 when
// no interface has it (or `ip` is a wildcard, 0.0.0.0 or ::).
uint32_t LinkMtu(const NetAddr& ip, std::string* ifname = nullptr);

// The provider's MTU when FI_BRAID_MTU is not set: LinkMtu(ip) within
// [kMinDefaultMtu, kMaxDefaultMtu], and 1500 when LinkMtu knows none.
inline constexpr uint32_t kMinDefaultMtu = 576;
inline constexpr uint32_t kMaxDefaultMtu = 9000;
uint32_t DefaultMtu(const NetAddr& ip);

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_LINK_MTU_H_

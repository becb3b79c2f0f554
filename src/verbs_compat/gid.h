// How braid0 names endpoints in verbs terms.
//
// GID (16 bytes, RoCE v2 style):
//   bytes 0..7   zero
//   bytes 8..9   UDP port of the endpoint, big-endian
//   bytes 10..11 0xff 0xff
//   bytes 12..15 IPv4 address, big-endian
// i.e. the IPv4-mapped IPv6 address ::ffff:a.b.c.d with the port written
// into the otherwise-zero 16 bits before the 0xffff marker. Printed as an
// IPv6 address it reads 0:0:0:0:PPPP:ffff:a.b:c.d. Two processes on one
// host differ by port, so their GIDs differ.
//
// LID: the endpoint's UDP port (ports are kept below 0xC000, the multicast
// LID range). An address vector without a GRH (is_global = 0) reaches
// (this context's bind address, dlid), which is how ibv_rc_pingpong
// without -g connects on one host.
#ifndef BRAID_VERBS_COMPAT_GID_H_
#define BRAID_VERBS_COMPAT_GID_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>

#include "braid/address.h"

namespace braid::verbs_compat {

// Over the verbs UD backend (BRAID_VERBS_BACKEND=verbs_ud) an endpoint is a
// UD queue pair of the carrier NIC: its GID must be IPv4-mapped (RoCE v2
// over IPv4, ::ffff:a.b.c.d, or another braid device's GID), and braid0's
// GID is then
//   bytes 0..4   zero
//   bytes 5..7   the carrier QP number (never 0), big-endian
//   bytes 8..15  the carrier GID's bytes 8..15
// No LID names such an endpoint: address vectors need a GRH.

// Encodes an endpoint address as a GID. `addr` must be IPv4, or a UD queue
// pair for which CarriesUd holds.
ibv_gid EncodeGid(const NetAddr& addr);

// True if `addr` (a UD queue pair) fits braid0's GID encoding.
bool CarriesUd(const NetAddr& addr);

// Decodes a GID made by EncodeGid. nullopt for anything else (wrong marker,
// non-zero prefix, port 0).
std::optional<NetAddr> DecodeGid(const ibv_gid& gid);

// The endpoint an address vector names, resolved against this context's
// bind address `local` when the AV has no GRH. nullopt if it names nothing
// braid can reach.
std::optional<NetAddr> ResolveAh(const ibv_ah_attr& ah, const NetAddr& local);

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_GID_H_

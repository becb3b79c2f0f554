// ARP (IPv4) and Neighbor Discovery (IPv6: ICMPv6 neighbour solicitation
// and advertisement) frames: builders for what braid sends, parsers that
// validate what it receives. Pure byte code, no DPDK; the table and the
// decisions are in neighbor.h.
#ifndef BRAID_BACKEND_DPDK_NEIGHBOR_PACKETS_H_
#define BRAID_BACKEND_DPDK_NEIGHBOR_PACKETS_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "backend/dpdk/frame.h"
#include "braid/address.h"

namespace braid::backend::dpdk {

inline constexpr uint16_t kArpOpRequest = 1;
inline constexpr uint16_t kArpOpReply = 2;
inline constexpr uint8_t kNdSolicitation = 135;
inline constexpr uint8_t kNdAdvertisement = 136;
inline constexpr uint8_t kNdHopLimit = 255;  // RFC 4861: on-link only

// Ethernet + ARP (28 bytes), padded with zeros to the Ethernet minimum.
inline constexpr size_t kArpFrameLen = kMinEthFrameLen;
// Ethernet + IPv6 + ICMPv6 NS/NA (24 bytes) + one link-layer option (8).
inline constexpr size_t kNdFrameLen = kEthHeaderLen + kIpv6HeaderLen + 32;
// Room for any frame this file writes.
inline constexpr size_t kMaxNeighborFrameLen = kNdFrameLen;

// An Ethernet/IPv4 ARP request or reply.
struct ArpMessage {
  uint16_t op = 0;  // kArpOpRequest or kArpOpReply
  MacAddr sender_mac{};
  NetAddr sender_ip;  // IPv4, port 0
  MacAddr target_mac{};
  NetAddr target_ip;  // IPv4, port 0
};

// An ICMPv6 neighbour solicitation or advertisement.
struct NdMessage {
  uint8_t type = 0;  // kNdSolicitation or kNdAdvertisement
  MacAddr eth_src{};
  NetAddr src_ip;  // IPv6 header source (:: for duplicate address detection)
  NetAddr dst_ip;  // IPv6 header destination
  NetAddr target;  // the address asked about / advertised
  // Source link-layer option (NS) or target link-layer option (NA).
  bool has_link_addr = false;
  MacAddr link_addr{};
  bool router = false;     // NA flags
  bool solicited = false;  //
  bool override_flag = false;
};

// True for group (multicast and broadcast) MACs: never a neighbour's.
inline bool IsGroupMac(const MacAddr& mac) { return (mac[0] & 1) != 0; }

// Parses an Ethernet frame carrying ARP for Ethernet/IPv4 (htype 1, ptype
// 0x0800, sizes 6/4, op request or reply). False, *out unspecified, for
// anything else. Never reads outside `frame`.
bool ParseArp(absl::Span<const uint8_t> frame, ArpMessage* out);

// Writes an ARP frame from m.sender_mac to `eth_dst` (kArpFrameLen bytes).
// Returns the length, or 0 if `out` is too small or an address is not IPv4.
size_t WriteArp(const MacAddr& eth_dst, const ArpMessage& m,
                absl::Span<uint8_t> out);
// A broadcast "who has target_ip? tell src_ip" request.
size_t WriteArpRequest(const MacAddr& src_mac, const NetAddr& src_ip,
                       const NetAddr& target_ip, absl::Span<uint8_t> out);
// A unicast "src_ip is at src_mac" reply to dst_mac/dst_ip.
size_t WriteArpReply(const MacAddr& src_mac, const NetAddr& src_ip,
                     const MacAddr& dst_mac, const NetAddr& dst_ip,
                     absl::Span<uint8_t> out);

// ff02::1:ffXX:XXXX for the low 24 bits of an IPv6 address (RFC 4291).
NetAddr SolicitedNodeAddress(const NetAddr& ip);
// 33:33 + the low 32 bits of an IPv6 multicast address (RFC 2464).
MacAddr Ipv6MulticastMac(const NetAddr& group);

// Parses and validates (RFC 4861 section 7.1) an Ethernet/IPv6 frame
// carrying a neighbour solicitation or advertisement: hop limit 255, valid
// ICMPv6 checksum, code 0, target and source not multicast, options well
// formed, no source link-layer option from ::, a solicitation from :: sent
// to a solicited-node group, no "solicited" flag on a multicast
// advertisement.
// Frame padding past the IPv6 payload is ignored; extension headers are
// not supported (false). Never reads outside `frame`.
bool ParseNd(absl::Span<const uint8_t> frame, NdMessage* out);

// A solicitation for target_ip from src_mac/src_ip, to target_ip's
// solicited-node group, with our source link-layer option. Returns
// kNdFrameLen, or 0 if `out` is too small or an address is not IPv6.
size_t WriteNeighborSolicitation(const MacAddr& src_mac, const NetAddr& src_ip,
                                 const NetAddr& target_ip,
                                 absl::Span<uint8_t> out);
// An advertisement of src_ip at src_mac (target link-layer option, override
// flag set) to dst_mac/dst_ip, with the solicited flag as given. Returns
// kNdFrameLen, or 0 as above.
size_t WriteNeighborAdvertisement(const MacAddr& src_mac, const NetAddr& src_ip,
                                  const MacAddr& dst_mac, const NetAddr& dst_ip,
                                  bool solicited, absl::Span<uint8_t> out);

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_NEIGHBOR_PACKETS_H_

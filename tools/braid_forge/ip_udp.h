// IPv4 + UDP headers for datagrams sent through a raw socket (IP_HDRINCL),
// with a source address of the caller's choosing: what braid-forge needs to
// pose as another host. Pure functions, no I/O.
#ifndef BRAID_TOOLS_BRAID_FORGE_IP_UDP_H_
#define BRAID_TOOLS_BRAID_FORGE_IP_UDP_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace braid::forge {

inline constexpr size_t kIpv4HeaderSize = 20;
inline constexpr size_t kUdpHeaderSize = 8;
inline constexpr size_t kIpUdpHeaderSize = kIpv4HeaderSize + kUdpHeaderSize;
// Largest UDP payload of one unfragmented IPv4 datagram.
inline constexpr size_t kMaxUdpPayload = 65535 - kIpUdpHeaderSize;

// Both ends of one forged datagram; addresses and ports in host byte order.
struct Ipv4UdpAddrs {
  uint32_t src_ip = 0;
  uint16_t src_port = 0;
  uint32_t dst_ip = 0;
  uint16_t dst_port = 0;
};

// The ones'-complement sum of `bytes` (16-bit big-endian words, an odd last
// byte padded with zero) added to `sum`, not yet folded or inverted.
uint32_t OnesComplementSum(absl::Span<const uint8_t> bytes, uint32_t sum = 0);
// Folds a sum from OnesComplementSum to 16 bits and inverts it: the value of
// an IPv4 or UDP checksum field (host byte order).
uint16_t FoldChecksum(uint32_t sum);

// Writes the IPv4 header (no options, DF, TTL 64, identification `ip_id`)
// and the UDP header in front of the `payload_len` bytes the caller already
// placed at datagram.data() + kIpUdpHeaderSize, with both checksums (a UDP
// checksum that computes to 0 is sent as 0xffff). Returns the datagram's
// size, or 0 (nothing written) if `datagram` is shorter than that or
// payload_len > kMaxUdpPayload.
size_t WriteIpv4Udp(const Ipv4UdpAddrs& a, uint16_t ip_id, size_t payload_len,
                    absl::Span<uint8_t> datagram);

}  // namespace braid::forge

#endif  // BRAID_TOOLS_BRAID_FORGE_IP_UDP_H_

// A simulated IPv4/UDP packet carrying one braid datagram. Packets live in a
// PacketPool (packet_pool.h) and are passed between simulator nodes by
// pointer; whoever holds the pointer owns the packet and must either hand it
// on or return it to the pool.
#ifndef BRAID_SIM_PACKET_H_
#define BRAID_SIM_PACKET_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "braid/address.h"
#include "braid/time.h"

namespace braid::sim {

struct alignas(64) Packet {
  // The first cache line holds everything a link, a switch or the receiving
  // NIC reads or writes at each hop (a large fabric's packets are mostly
  // out of cache between hops).
  //
  // Exact time (picoseconds) the packet's last bit reached its current
  // holder. Simulator events tick in nanoseconds; links use this to chain
  // serialisation without rounding jitter. Set by Host::Send and Link.
  int64_t ready_ps = 0;
  uint32_t len = 0;        // payload bytes in `data`
  bool ect = false;        // ECN-capable transport (ECT(0))
  bool ce = false;         // congestion experienced (set by a marking link)
  bool corrupted = false;  // a link flipped a bit (for tracing; not trusted)
  // True once `checksum` holds the checksum of the payload as sent. With
  // HostOptions::lazy_checksum the sender leaves it false and a link stamps
  // it just before it first modifies the payload.
  bool checksum_stamped = false;
  NetAddr src;            // IPv4 address + UDP source port
  NetAddr dst;            // IPv4 address + UDP destination port
  uint16_t checksum = 0;  // ones'-complement checksum of the payload
  uint32_t capacity = 0;  // bytes available at `data`

  uint64_t id = 0;  // unique per original transmission; duplicates keep it
  uint8_t* data = nullptr;  // payload (the braid datagram); pool-owned
  TimeNs sent_at;           // when the sending host injected it
  Packet* next = nullptr;   // intrusive link used by the pool's free list

  absl::Span<uint8_t> payload() { return absl::Span<uint8_t>(data, len); }
  absl::Span<const uint8_t> payload() const {
    return absl::Span<const uint8_t>(data, len);
  }
};

// NetAddr::ipv4 (host byte order), inline: the fabric reads it at every hop.
inline uint32_t Ipv4Of(const NetAddr& a) {
  return (uint32_t{a.ip[0]} << 24) | (uint32_t{a.ip[1]} << 16) |
         (uint32_t{a.ip[2]} << 8) | uint32_t{a.ip[3]};
}

static_assert(offsetof(Packet, checksum) + sizeof(uint16_t) <= 64,
              "the per-hop fields must fit the packet's first cache line");

// The 16-bit ones'-complement sum (RFC 1071) of `len` bytes, complemented, as
// a big-endian-order value (identical to what a UDP checksum field holds
// before pseudo-header folding). Odd lengths are padded with a zero byte.
uint16_t InternetChecksum(const uint8_t* data, size_t len);

// Sets p.checksum over the current payload.
inline void StampChecksum(Packet& p) {
  p.checksum = InternetChecksum(p.data, p.len);
  p.checksum_stamped = true;
}

// True if the payload still matches the checksum stamped at send.
inline bool ChecksumOk(const Packet& p) {
  return InternetChecksum(p.data, p.len) == p.checksum;
}

}  // namespace braid::sim

#endif  // BRAID_SIM_PACKET_H_

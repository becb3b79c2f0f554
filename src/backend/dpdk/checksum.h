// The Internet checksum (RFC 1071) over a sequence of byte pieces of any
// length, 8 bytes at a time. Used for the IPv4 header, UDP and ICMPv6
// checksums of frames braid writes and verifies itself. No DPDK here.
#ifndef BRAID_BACKEND_DPDK_CHECKSUM_H_
#define BRAID_BACKEND_DPDK_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace braid::backend::dpdk {

// A running one's-complement sum. Pieces are summed as if concatenated: a
// piece may start at an odd offset of the whole (an odd-length piece before
// it). Cheap to construct; holds no pointers.
class InternetChecksum {
 public:
  // Adds `bytes` after everything added so far.
  void Add(absl::Span<const uint8_t> bytes);
  // Adds a 16-bit big-endian field (as two bytes at the current offset).
  void AddBe16(uint16_t v);
  // Adds a 32-bit big-endian field (as four bytes at the current offset).
  void AddBe32(uint32_t v);

  // The folded sum, not complemented, as the value of a big-endian 16-bit
  // field (write it with a big-endian store). 0 only if everything was 0.
  uint16_t Sum() const;
  // The checksum to put in a header: ~Sum(). A received header whose
  // checksum field was included verifies when this is 0.
  uint16_t Checksum() const { return static_cast<uint16_t>(~Sum()); }

  // Bytes added so far.
  uint64_t length() const { return length_; }

 private:
  // Sum of the memory-order 64-bit words (end-around carry in carry_).
  uint64_t sum_ = 0;
  uint64_t carry_ = 0;
  uint64_t length_ = 0;
};

// Adds the pseudo-header of the IP header at `ip_header` (IPv4 when
// `ipv4`, else IPv6; the addresses are read from it) for transport protocol
// `proto` and `l4_len` transport bytes (RFC 768 / RFC 8200 section 8.1).
void AddPseudoHeader(bool ipv4, const uint8_t* ip_header, uint8_t proto,
                     uint32_t l4_len, InternetChecksum* c);

// The one's-complement sum of `bytes` in memory order, folded to 16 bits
// (store it with a native-endian store to get the right bytes), not
// complemented. The core of InternetChecksum; exposed for tests.
uint16_t RawSum16(const uint8_t* bytes, size_t len);

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_CHECKSUM_H_

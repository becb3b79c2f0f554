// The security header of a protected datagram (docs/security.md). In the
// auth and encrypt modes a braid datagram is
//
//   preamble (4) | security header (24) | frames | tag (16)
//
// and the header, in clear, is three big-endian u64s:
//
//   offset 4   Source Incarnation       the sender's; never 0
//   offset 12  Destination Incarnation  0: sealed with the domain's initial
//                                       key; else the receiver's incarnation,
//                                       sealed with the pair key src -> dst
//   offset 20  Packet Number            unique per key (see NonceFor)
//
// The header is authenticated with the rest; these helpers only move bytes.
#ifndef BRAID_CRYPTO_SECURITY_HEADER_H_
#define BRAID_CRYPTO_SECURITY_HEADER_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "wire/frames.h"

namespace braid::crypto {

inline constexpr size_t kSecurityHeaderSize = 24;
inline constexpr size_t kTagSize = 16;
// Bytes a secure mode adds to a datagram: the header and the tag.
inline constexpr size_t kSecurityOverhead = kSecurityHeaderSize + kTagSize;
// Offset of the first frame in a protected datagram.
inline constexpr size_t kProtectedFramesOffset =
    wire::kPreambleSize + kSecurityHeaderSize;
// The shortest protected datagram: no frames.
inline constexpr size_t kMinProtectedDatagram =
    kProtectedFramesOffset + kTagSize;
static_assert(kSecurityOverhead == 40);
static_assert(kProtectedFramesOffset == 28);

// Initial-key packet numbers must stay below this (see NonceFor).
inline constexpr uint64_t kInitialPacketNumberLimit = uint64_t{1} << 32;

struct SecurityHeader {
  uint64_t src_incarnation = 0;
  uint64_t dst_incarnation = 0;  // 0 = initial key
  uint64_t packet_number = 0;

  bool initial_key() const { return dst_incarnation == 0; }
};

// Writes `h` at bytes [4, 28) of `datagram` (after the preamble, which it
// leaves alone); returns kProtectedFramesOffset, where the frames go, or 0 —
// writing nothing — if `datagram` is shorter than that.
size_t WriteSecurityHeader(const SecurityHeader& h,
                           absl::Span<uint8_t> datagram);

// Reads the security header of a received protected datagram. False —
// leaving *h unspecified — if `datagram` is shorter than
// kMinProtectedDatagram, the source incarnation is 0, or an initial-key
// header's packet number is not below kInitialPacketNumberLimit. It checks
// nothing else (the preamble is wire::ParsePreamble's job) and proves
// nothing: the fields are trusted only once Open succeeds.
bool ParseSecurityHeader(absl::Span<const uint8_t> datagram, SecurityHeader* h);

// The 96-bit AES-GCM nonce of a datagram with header `h`. A nonce must
// never repeat under one key, so:
//  * pair key (dst != 0): 32 zero bits || packet number. The key belongs to
//    one (src, dst) pair of incarnations: the sender must not repeat a
//    packet number toward that incarnation of that peer (a per-peer counter
//    from 0, or one endpoint-wide counter, both do).
//  * initial key (dst == 0): src incarnation || packet number's low 32
//    bits. The key is the whole domain's, so the sender's incarnation keeps
//    senders apart; the sender must number its initial-key datagrams with
//    one endpoint-wide counter (not per peer: two peers would then see the
//    same nonce) that stays below kInitialPacketNumberLimit, which Seal and
//    ParseSecurityHeader enforce. Two endpoints picking the same random
//    incarnation could still collide: the 2^-64 chance of random
//    incarnations, and they would already confuse each other's peers.
std::array<uint8_t, 12> NonceFor(const SecurityHeader& h);

}  // namespace braid::crypto

#endif  // BRAID_CRYPTO_SECURITY_HEADER_H_

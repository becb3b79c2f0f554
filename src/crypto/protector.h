// Sealing and opening protected datagrams (security_header.h has the
// layout). kAuth: AES-GMAC — the tag covers the whole datagram before it and
// the frames stay in clear. kEncrypt: AES-GCM — the frames are encrypted and
// the tag covers them and, as associated data, the preamble and the security
// header. Either way one bit changed anywhere fails Open.
//
// The caller builds a datagram as: wire::WritePreamble, WriteSecurityHeader,
// the frames from kProtectedFramesOffset on, leaving kTagSize bytes of room
// after them; then Seal. A receiver: ParseSecurityHeader, pick the key the
// header names (dst 0: the initial key; dst = own incarnation: the rx key of
// the peer with that source incarnation — derived earlier, never for this
// datagram), Open, then parse the frames. Nothing here allocates.
#ifndef BRAID_CRYPTO_PROTECTOR_H_
#define BRAID_CRYPTO_PROTECTOR_H_

#include <cstddef>

#include "absl/types/span.h"
#include "braid/options.h"
#include "crypto/packet_key.h"
#include "crypto/security_header.h"

namespace braid::crypto {

// Seals the datagram in bytes [0, len) of `datagram` in place — its header
// already written — and appends the tag; returns the new length, len +
// kTagSize. Returns 0, with the datagram's bytes unspecified, if `mode` is
// kNone, `key` is empty or made for opening, len < kProtectedFramesOffset,
// `datagram` has less than kTagSize bytes of room after len, or the header does
// not suit the key (an initial key needs Destination Incarnation 0 and a packet
// number below kInitialPacketNumberLimit, a pair key a non-zero destination;
// the source must be non-zero). Seal never checks that the packet number is
// fresh: reusing one under a key breaks GCM (security_header.h, NonceFor).
size_t Seal(SecurityMode mode, PacketKey& key, absl::Span<uint8_t> datagram,
            size_t len);

// Verifies the received protected datagram `datagram` (exactly its bytes)
// under `key` and, in kEncrypt, decrypts its frames in place. True: the
// frames are the *frames_len bytes at kProtectedFramesOffset. False if the
// datagram is shorter than kMinProtectedDatagram, its header does not suit
// `key` (as for Seal), `key` is empty or made for sealing, `mode` is kNone, or
// the tag does not match; then *frames_len is untouched and the frames bytes
// are unspecified (in kEncrypt they were decrypted with a wrong or forged key):
// the caller drops the datagram and uses none of it.
bool Open(SecurityMode mode, PacketKey& key, absl::Span<uint8_t> datagram,
          size_t* frames_len);

}  // namespace braid::crypto

#endif  // BRAID_CRYPTO_PROTECTOR_H_

// Key derivation: HKDF-SHA256 (RFC 5869) through OpenSSL's EVP_KDF, and the
// two kinds of packet key braid derives from a security-domain key.
//
// Keys are AES-128 (AES-NI, GCM): GCM's security at the volumes one key
// protects here (a pair key lives for one pair of incarnations) rests on its
// 128-bit block and tag, not on the key length, and AES-128 runs 10 rounds
// against AES-256's 14. The saving is small at datagram sizes, where GHASH
// and libcrypto's per-call work weigh as much: `openssl speed -evp` at 1472
// bytes, 1.33 against 1.24 GB/s.
//
// Derivation runs when a peer's incarnation becomes known, never per packet:
// it allocates and costs microseconds.
#ifndef BRAID_CRYPTO_KDF_H_
#define BRAID_CRYPTO_KDF_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace braid::crypto {

inline constexpr size_t kPacketKeyBytes = 16;  // AES-128
using KeyBytes = std::array<uint8_t, kPacketKeyBytes>;

// The bytes of a key held in a string (SecurityOptions::domain_key).
inline absl::Span<const uint8_t> AsBytes(absl::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// HKDF-SHA256 extract-and-expand: fills `out` (1..8160 bytes) from input key
// material `ikm`, `salt` and `info`. InvalidArgument for an empty `ikm` or
// `out` (or longer than 255 hash lengths), Internal if libcrypto fails.
absl::Status Hkdf(absl::Span<const uint8_t> ikm, absl::Span<const uint8_t> salt,
                  absl::Span<const uint8_t> info, absl::Span<uint8_t> out);

// The key protecting datagrams from incarnation `src` to incarnation `dst`:
// HKDF(domain_key, salt "braid-v1", info "pair" || src || dst) with the
// incarnations as big-endian u64. The two directions of a pair get different
// keys; a new incarnation on either side gives new keys.
absl::StatusOr<KeyBytes> DerivePairKey(absl::Span<const uint8_t> domain_key,
                                       uint64_t src, uint64_t dst);

// The domain's one initial key, for datagrams whose sender does not know (or
// may not use) the receiver's incarnation: HKDF(domain_key, salt "braid-v1",
// info "initial"). Every endpoint derives it once at open, so a receiver
// never derives anything for a datagram before it is authenticated.
absl::StatusOr<KeyBytes> DeriveInitialKey(absl::Span<const uint8_t> domain_key);

}  // namespace braid::crypto

#endif  // BRAID_CRYPTO_KDF_H_

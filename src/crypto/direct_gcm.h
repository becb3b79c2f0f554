// AES-128-GCM without libcrypto's per-call parameter passing, for short
// datagrams and for GMAC.
//
// OpenSSL 3's EVP interface costs about as much as the cryptography on a
// 64-byte datagram: setting a nonce asks the provider for the IV length,
// and reading or setting the tag goes through OSSL_PARAM lookups (string
// compares). DirectGcm runs libcrypto's own GCM mode (`CRYPTO_gcm128_*`,
// which picks the CLMUL GHASH for this CPU) over an AES-128-ECB context of
// libcrypto's (AES-NI where the CPU has it, constant time): the ECB context
// encrypts GCM's counter blocks, libcrypto does GHASH and the tag. Output is
// bit for bit what EVP's AES-128-GCM gives for the same key, nonce and data
// (tests/crypto/direct_gcm_test.cc checks it both ways).
//
// What it gives up: libcrypto's stitched AES-GCM (CTR and GHASH in one
// pass), which is faster on long plaintexts; protector.cc keeps EVP for
// those (kDirectGcmMaxPlaintext).
#ifndef BRAID_CRYPTO_DIRECT_GCM_H_
#define BRAID_CRYPTO_DIRECT_GCM_H_

#include <array>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "crypto/kdf.h"

namespace braid::crypto {

// Plaintext (encrypted bytes, not associated data) up to which Seal and
// Open use DirectGcm rather than EVP; measured by bench/crypto_benchmark
// (BM_SealOpen against BM_SealOpenEvp).
inline constexpr size_t kDirectGcmMaxPlaintext = 1024;

struct DirectGcmState;  // direct_gcm.cc

class DirectGcm {
 public:
  static constexpr size_t kNonceSize = 12;
  static constexpr size_t kTagSize = 16;

  // Keys AES-128 with `key` (the key schedule and GHASH's table are
  // computed here, with allocation). Internal if libcrypto cannot.
  static absl::StatusOr<DirectGcm> Create(const KeyBytes& key);

  // Empty: Seal and Open fail.
  DirectGcm() = default;
  DirectGcm(DirectGcm&&) noexcept = default;
  DirectGcm& operator=(DirectGcm&&) noexcept = default;
  ~DirectGcm();

  bool empty() const { return state_ == nullptr; }

  // Authenticates `aad`, encrypts `text` in place, writes the tag. False
  // (the bytes of `text` and `tag` unspecified) only if empty or libcrypto
  // fails.
  bool Seal(const std::array<uint8_t, kNonceSize>& nonce,
            absl::Span<const uint8_t> aad, absl::Span<uint8_t> text,
            uint8_t tag[kTagSize]);

  // Decrypts `text` in place and checks `tag` (in constant time) over
  // `aad` and the ciphertext. False if the tag does not match (then
  // `text` holds what the wrong key or forged data decrypt to: unusable),
  // if empty, or if libcrypto fails.
  bool Open(const std::array<uint8_t, kNonceSize>& nonce,
            absl::Span<const uint8_t> aad, absl::Span<uint8_t> text,
            const uint8_t tag[kTagSize]);

 private:
  struct StateDeleter {
    void operator()(DirectGcmState* s) const;
  };
  std::unique_ptr<DirectGcmState, StateDeleter> state_;
};

}  // namespace braid::crypto

#endif  // BRAID_CRYPTO_DIRECT_GCM_H_

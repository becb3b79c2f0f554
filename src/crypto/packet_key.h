// A packet key ready for use: AES-128-GCM contexts for sealing and for
// opening, keyed once, so that a datagram costs only setting its nonce —
// no allocation and no key schedule per packet.
#ifndef BRAID_CRYPTO_PACKET_KEY_H_
#define BRAID_CRYPTO_PACKET_KEY_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "crypto/kdf.h"
#include "openssl/types.h"

namespace braid::crypto {

class PacketKey {
 public:
  // Which key it is, which decides the nonce layout and the security
  // header's Destination Incarnation (security_header.h).
  enum class Kind : uint8_t {
    kPair,     // one direction of one pair of incarnations (DerivePairKey)
    kInitial,  // the domain's initial key (DeriveInitialKey)
  };

  // Keys both contexts with `key` (the key schedule runs here). Internal if
  // libcrypto cannot provide AES-128-GCM.
  static absl::StatusOr<PacketKey> Create(Kind kind, const KeyBytes& key);

  // An empty key: Seal and Open refuse it.
  PacketKey() = default;
  PacketKey(PacketKey&&) noexcept = default;
  PacketKey& operator=(PacketKey&&) noexcept = default;

  bool empty() const { return seal_ == nullptr; }
  Kind kind() const { return kind_; }

  // The contexts, keyed, for protector.cc; each call sets the nonce anew.
  EVP_CIPHER_CTX* seal_context() { return seal_.get(); }
  EVP_CIPHER_CTX* open_context() { return open_.get(); }

 private:
  struct CtxDeleter {
    void operator()(EVP_CIPHER_CTX* c) const;
  };

  Kind kind_ = Kind::kPair;
  std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter> seal_;
  std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter> open_;
};

// The keys of one peer pair as seen from the local endpoint: `tx` seals
// what it sends to the peer, `rx` opens what the peer sends to it.
struct PeerKeys {
  PacketKey tx;
  PacketKey rx;
};

// Derives and keys both directions between incarnations `local` and
// `remote` (two HKDF runs and two key schedules: microseconds, with
// allocation). Call when the peer's incarnation is learnt from an
// authenticated datagram, never for one not yet authenticated.
absl::StatusOr<PeerKeys> MakePeerKeys(absl::Span<const uint8_t> domain_key,
                                      uint64_t local, uint64_t remote);

// Derives and keys the domain's initial key (once per endpoint).
absl::StatusOr<PacketKey> MakeInitialKey(absl::Span<const uint8_t> domain_key);

}  // namespace braid::crypto

#endif  // BRAID_CRYPTO_PACKET_KEY_H_

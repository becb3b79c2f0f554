// A packet key ready for use: AES-128-GCM keyed once for one use (sealing or
// opening), so that a datagram costs only setting its nonce — no allocation
// and no key schedule per packet. It holds the key twice: an EVP context
// (long plaintexts: libcrypto's stitched AES-GCM) and a DirectGcm (short
// ones and GMAC: no parameter passing per call); about 2 KiB of libcrypto
// state each.
#ifndef BRAID_CRYPTO_PACKET_KEY_H_
#define BRAID_CRYPTO_PACKET_KEY_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "crypto/direct_gcm.h"
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

  enum class Use : uint8_t { kSeal, kOpen };

  // Keys a context with `key` for `use` (the key schedule runs here).
  // Internal if libcrypto cannot provide AES-128-GCM.
  static absl::StatusOr<PacketKey> Create(Kind kind, Use use,
                                          const KeyBytes& key);

  // An empty key: Seal and Open refuse it.
  PacketKey() = default;
  PacketKey(PacketKey&&) noexcept = default;
  PacketKey& operator=(PacketKey&&) noexcept = default;

  bool empty() const { return ctx_ == nullptr; }
  Kind kind() const { return kind_; }
  Use use() const { return use_; }

  // The keyed contexts, for protector.cc; each datagram sets the nonce anew.
  EVP_CIPHER_CTX* context() { return ctx_.get(); }
  DirectGcm& direct() { return direct_; }

 private:
  struct CtxDeleter {
    void operator()(EVP_CIPHER_CTX* c) const;
  };

  Kind kind_ = Kind::kPair;
  Use use_ = Use::kSeal;
  std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter> ctx_;
  DirectGcm direct_;
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

// The domain's initial key, for sealing an endpoint's own first-contact
// datagrams and for opening everyone else's.
struct InitialKeys {
  PacketKey seal;
  PacketKey open;
};

// Derives and keys the domain's initial key (once per endpoint).
absl::StatusOr<InitialKeys> MakeInitialKeys(
    absl::Span<const uint8_t> domain_key);

}  // namespace braid::crypto

#endif  // BRAID_CRYPTO_PACKET_KEY_H_

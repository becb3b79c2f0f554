// PacketGuard: an endpoint's packet protection (SecurityOptions: auth or
// encrypt; docs/security.md). It decides which key seals each datagram the
// endpoint sends and which opens each one it receives, keeps every nonce
// unique (one packet-number counter per endpoint, for all keys), and bounds
// the key derivations that unauthenticated input can cause.
//
// Keys: a datagram whose sender does not know the receiver's incarnation
// (dst 0) is sealed with the domain's initial key, derived once. Any other
// is sealed with the pair key src -> dst. A peer's two pair keys are cached
// with it (PeerKeyCache) and derived when its incarnation (or ours towards
// it) changes. A derivation for anything else — a datagram naming an old
// incarnation of ours, a reply to an address we hold no peer for, a key
// for an incarnation other than the one a peer is known by — draws on a
// token bucket (kDeriveBurst, kDerivePerSecond): HKDF costs microseconds,
// so a flood of such datagrams must not buy one each.
#ifndef BRAID_ENDPOINT_PACKET_GUARD_H_
#define BRAID_ENDPOINT_PACKET_GUARD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "braid/options.h"
#include "braid/time.h"
#include "crypto/packet_key.h"
#include "crypto/security_header.h"

namespace braid::endpoint {

// The pair keys of one peer, for the incarnations they were derived for.
struct PeerKeyCache {
  uint64_t tx_src = 0, tx_dst = 0;  // tx seals src -> dst
  crypto::PacketKey tx;
  uint64_t rx_src = 0, rx_dst = 0;  // rx opens src -> dst
  crypto::PacketKey rx;
};

class PacketGuard {
 public:
  // Bytes a protected datagram has between its preamble and its frames,
  // and after its frames.
  static constexpr size_t kHeaderBytes = crypto::kSecurityHeaderSize;
  static constexpr size_t kTagBytes = crypto::kTagSize;
  static constexpr uint32_t kDeriveBurst = 64;
  static constexpr uint32_t kDerivePerSecond = 1000;

  // Errors: InvalidArgument (mode kNone, or a domain key shorter than 16
  // or longer than 64 bytes), Internal (libcrypto lacks HKDF or AES-GCM).
  static absl::StatusOr<std::unique_ptr<PacketGuard>> Create(
      SecurityMode mode, absl::string_view domain_key);

  SecurityMode mode() const { return mode_; }

  // Seals the datagram in data[0, len): preamble, kHeaderBytes of room,
  // frames from `src` to `dst` (0: not known yet), with kTagBytes of room
  // after len. `keys`: the cache of the peer it goes to (null: none).
  // Returns the sealed length, or 0 if it cannot be sealed (no derivation
  // token for an uncached key, the initial key's packet numbers spent):
  // the datagram must not be sent.
  size_t Seal(TimeNs now, uint8_t* data, size_t len, uint64_t src, uint64_t dst,
              PeerKeyCache* keys);

  enum class OpenResult : uint8_t {
    kOk,
    kFailed,  // not a protected datagram, or its tag does not match
    kNoKey,   // its key would need a derivation and no token was left
  };
  // Checks (and in encrypt, decrypts) a received datagram. `our_inc`: what
  // we call ourselves towards its sender (0 if not computed: then only the
  // initial key is tried), `peer_inc` the sender's incarnation as we know
  // it (0: not known), `keys` its peer's cache (null: none). On kOk, *h is
  // its security header and *frames its frames, in a buffer of the
  // guard's valid until the next Open.
  OpenResult Open(TimeNs now, absl::Span<const uint8_t> datagram,
                  uint64_t our_inc, uint64_t peer_inc, PeerKeyCache* keys,
                  crypto::SecurityHeader* h, absl::Span<const uint8_t>* frames);

  // Derivations refused for want of a token (EndpointStats).
  uint64_t derivations_refused() const { return refused_; }

 private:
  PacketGuard(SecurityMode mode, std::string domain_key,
              crypto::InitialKeys initial);
  // A token for a derivation not bound to a known peer.
  bool TakeToken(TimeNs now);
  // Keys `key` for src -> dst for `use`; false if libcrypto fails.
  bool Derive(uint64_t src, uint64_t dst, crypto::PacketKey::Use use,
              crypto::PacketKey* key);

  SecurityMode mode_;
  std::string domain_key_;
  crypto::InitialKeys initial_;
  uint64_t next_pn_ = 0;          // pair keys
  uint64_t next_initial_pn_ = 0;  // the initial key (below 2^32)
  double tokens_ = kDeriveBurst;
  TimeNs tokens_at_;
  uint64_t refused_ = 0;
  crypto::PacketKey scratch_key_;  // an uncached key, derived for one use
  std::vector<uint8_t> scratch_;   // the datagram being opened
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_PACKET_GUARD_H_

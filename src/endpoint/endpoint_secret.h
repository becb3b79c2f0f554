// EndpointSecret: the values an endpoint derives from a key chosen when it
// opens, which no one else can compute: the incarnation it presents to each
// peer, and the nonces of its challenges. A keyed PRF (SipHash-2-4 from
// OpenSSL's libcrypto) over the inputs, so values for different peers or
// claims are unrelated and an observer of some learns nothing of others.
#ifndef BRAID_ENDPOINT_ENDPOINT_SECRET_H_
#define BRAID_ENDPOINT_ENDPOINT_SECRET_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "braid/address.h"

struct evp_mac_ctx_st;

namespace braid::endpoint {

class EndpointSecret {
 public:
  using Key = std::array<uint8_t, 16>;

  // A key from the kernel's random source (getrandom).
  static Key RandomKey();
  // OK if the PRF is usable (libcrypto provides SipHash); otherwise an
  // error naming what is missing. Endpoint::Open checks this before any
  // EndpointSecret is built.
  static absl::Status CheckAvailable();

  explicit EndpointSecret(const Key& key);
  ~EndpointSecret();
  EndpointSecret(const EndpointSecret&) = delete;
  EndpointSecret& operator=(const EndpointSecret&) = delete;

  // The incarnation this endpoint (`incarnation`, its own random one, never
  // sent) presents to the peer at `peer`: non-zero, stable for the life of
  // the key, unguessable without it. Frames from `peer` must name it.
  uint64_t PairIncarnation(uint64_t incarnation, const NetAddr& peer) const;

  // The nonce of a challenge sent to `peer` (as we, `our_inc`, know it)
  // asking it to prove it is `claimed`, valid during `epoch`. A reply is
  // genuine iff it echoes the nonce computed for its own fields.
  // `kind`: what the challenge asks (wire::ChallengeKind).
  uint64_t ChallengeNonce(uint64_t epoch, uint64_t our_inc, const NetAddr& peer,
                          uint64_t claimed, uint8_t kind) const;

 private:
  uint64_t Prf(absl::Span<const uint8_t> in) const;

  evp_mac_ctx_st* ctx_ = nullptr;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_ENDPOINT_SECRET_H_

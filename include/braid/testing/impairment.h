// TEST FACILITY — not for production traffic. An endpoint whose backend
// impairs outbound datagrams (drop, duplicate, reorder, corrupt) with a
// seeded RNG, so loss recovery can be shown on plain loopback without root.
// Works over any backend EndpointOptions::backend names. Kept out of
// braid/options.h on purpose: a production program never includes this.
#ifndef BRAID_TESTING_IMPAIRMENT_H_
#define BRAID_TESTING_IMPAIRMENT_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "braid/endpoint.h"
#include "braid/options.h"

namespace braid {

// Impairments applied at the backend boundary to outbound datagrams.
struct TestImpairments {
  double drop = 0;       // probability a datagram is dropped
  double duplicate = 0;  // probability it is sent twice
  double reorder = 0;    // probability it is held back and sent after the next
                         // 1..8 datagrams (or after 50 us if none follow)
  double corrupt = 0;    // probability it is corrupted on the wire (and so
                         // discarded by the receiver's UDP checksum)
  uint64_t seed = 1;
  bool any() const {
    return drop > 0 || duplicate > 0 || reorder > 0 || corrupt > 0;
  }
};

// Endpoint::Open with `impairments` applied to the backend's outbound
// datagrams (none when !impairments.any()). Errors: Endpoint::Open's, and
// InvalidArgument when a probability is outside [0, 1].
absl::StatusOr<std::unique_ptr<Endpoint>> OpenEndpointForTesting(
    const EndpointOptions& options, const TestImpairments& impairments);

}  // namespace braid

#endif  // BRAID_TESTING_IMPAIRMENT_H_

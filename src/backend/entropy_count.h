// How many entropy values (source ports, address handles) a backend offers
// a peer unless its options say otherwise.
#ifndef BRAID_BACKEND_ENTROPY_COUNT_H_
#define BRAID_BACKEND_ENTROPY_COUNT_H_

#include <algorithm>
#include <cstdint>

#include "braid/options.h"

namespace braid::backend {

// Twice the paths (one path in go-back-N), so a failing path can be
// recycled onto a value no other path uses; at most 256.
inline uint16_t DefaultEntropyCount(const ProtocolOptions& p) {
  const int paths = p.mode == Mode::kGoBackN ? 1 : p.paths;
  return static_cast<uint16_t>(std::min(256, 2 * paths));
}

}  // namespace braid::backend

#endif  // BRAID_BACKEND_ENTROPY_COUNT_H_

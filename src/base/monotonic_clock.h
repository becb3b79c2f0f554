// The host's CLOCK_MONOTONIC as a TimeNs: the time scale of every clock
// reading in braid's I/O layers (the protocol core itself never reads a
// clock; it is handed `now`). Kernel receive timestamps and timerfd
// deadlines use the same scale.
#ifndef BRAID_BASE_MONOTONIC_CLOCK_H_
#define BRAID_BASE_MONOTONIC_CLOCK_H_

#include <time.h>

#include <cstdint>

#include "braid/time.h"

namespace braid {

inline TimeNs MonotonicNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimeNs(int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec);
}

}  // namespace braid

#endif  // BRAID_BASE_MONOTONIC_CLOCK_H_

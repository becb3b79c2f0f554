// Where the I/O layers read the time (the protocol core never does; it is
// handed `now`): a small interface, so a real backend runs on the host's
// CLOCK_MONOTONIC and the simulator, the benchmarks and unit tests on a
// virtual clock. Read a few times per burst or poll, never per packet.
#ifndef BRAID_BASE_CLOCK_H_
#define BRAID_BASE_CLOCK_H_

#include "base/monotonic_clock.h"
#include "braid/time.h"

namespace braid {

class Clock {
 public:
  virtual ~Clock() = default;
  // The current time, on the scale of the backend's timestamps.
  virtual TimeNs Now() = 0;
};

// The host's CLOCK_MONOTONIC (MonotonicNow).
class MonotonicClock final : public Clock {
 public:
  TimeNs Now() override { return MonotonicNow(); }
};

// A clock that moves only when told (tests, benchmarks).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeNs start = TimeNs::Zero()) : now_(start) {}
  TimeNs Now() override { return now_; }
  void Set(TimeNs t) { now_ = t; }
  void Advance(DurationNs d) { now_ = now_ + d; }

 private:
  TimeNs now_;
};

}  // namespace braid

#endif  // BRAID_BASE_CLOCK_H_

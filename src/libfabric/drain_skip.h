// When a CQ read may skip its progress pass. Libraries drain a CQ after
// every completion until it reads empty (Open MPI's mtl ofi does); that
// last read's progress pass — a receive system call that finds nothing —
// sat between a received message and the application's answer to it.
//
// A read that finds the CQ empty skips its progress pass when the read
// before it ran a progress pass, found entries and handed out all of them,
// the application has made no other call on the CQ's endpoints since, and
// it comes within the window after that read. Once only: the read after a
// skipped one progresses again, so a busy-polling reader loses one empty
// read of latency at most, and one that computes between reads none.
#ifndef BRAID_LIBFABRIC_DRAIN_SKIP_H_
#define BRAID_LIBFABRIC_DRAIN_SKIP_H_

#include <chrono>
#include <cstdint>

namespace braid::libfabric {

class DrainSkip {
 public:
  using Time = std::chrono::steady_clock::time_point;
  static constexpr std::chrono::nanoseconds kWindow{2000};

  // A read that ran a progress pass ended: `drained` when it handed out
  // entries and left the CQ empty. `app_calls` counts the application's
  // calls on the CQ's endpoints (Ep::app_calls) at its end; `now()` gives
  // the time (read only when needed: a clock read costs ~25 ns in a VM).
  template <typename NowFn>
  void OnProgressedRead(bool drained, uint64_t app_calls, NowFn&& now) {
    drained_ = drained;
    if (!drained) return;
    calls_ = app_calls;
    at_ = now();
  }

  // A read found the CQ empty: may it return without a progress pass?
  // Clears the state either way (once only).
  template <typename NowFn>
  bool Skip(uint64_t app_calls, NowFn&& now) {
    if (!drained_) return false;
    drained_ = false;
    return app_calls == calls_ && now() - at_ < kWindow;
  }

 private:
  bool drained_ = false;
  uint64_t calls_ = 0;
  Time at_;
};

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_DRAIN_SKIP_H_

// The decay of an EWMA rate (a path's loss or ECN-mark rate) over clean
// outcomes: each one multiplies the rate by (1 - gain). Applying n at once
// (an acked run) costs one multiplication, not n. A rate that falls below
// kNegligible becomes exactly 0: no rule acts on rates that small (their
// thresholds are whole percents), a clean path's rate can be skipped by a
// test for 0, and the rate never passes through subnormal doubles, whose
// arithmetic is slow (a path keeps decaying for tens of thousands of
// deliveries after one loss otherwise).
#ifndef BRAID_MULTIPATH_RATE_DECAY_H_
#define BRAID_MULTIPATH_RATE_DECAY_H_

#include <array>
#include <cstdint>

namespace braid::multipath {

class RateDecay {
 public:
  static constexpr double kNegligible = 1e-9;
  // Powers tabled up to this many outcomes (the longest acked run is 64).
  static constexpr uint32_t kSteps = 64;

  // `gain` in (0, 1].
  explicit RateDecay(double gain) {
    pow_[0] = 1.0;
    for (uint32_t n = 1; n <= kSteps; ++n) pow_[n] = pow_[n - 1] * (1 - gain);
  }
  // rate * (1 - gain)^n, or 0 if that is below kNegligible.
  double Apply(double rate, uint32_t n) const {
    for (; n > kSteps; n -= kSteps) rate *= pow_[kSteps];
    rate *= pow_[n];
    return rate < kNegligible ? 0.0 : rate;
  }

 private:
  std::array<double, kSteps + 1> pow_;
};

}  // namespace braid::multipath

#endif  // BRAID_MULTIPATH_RATE_DECAY_H_

// Smoothed round-trip time estimate in the manner of RFC 6298 (srtt with
// gain 1/8, rttvar with gain 1/4), plus the minimum RTT seen.
#ifndef BRAID_RETRANSMIT_RTT_ESTIMATOR_H_
#define BRAID_RETRANSMIT_RTT_ESTIMATOR_H_

#include "braid/time.h"

namespace braid::retransmit {

class RttEstimator {
 public:
  // Before the first sample srtt = min_rtt = initial_rtt, rttvar = half of it.
  explicit RttEstimator(DurationNs initial_rtt = DurationNs::Micros(100));

  // Forgets all samples; back to the initial estimate.
  void Reset(DurationNs initial_rtt);
  // Folds in one sample. Non-positive samples are ignored (returns false).
  bool AddSample(DurationNs rtt);

  // True once a sample has been folded in.
  bool has_sample() const { return has_sample_; }
  DurationNs srtt() const { return srtt_; }
  DurationNs rttvar() const { return rttvar_; }
  // Smallest sample seen (initial_rtt before any sample).
  DurationNs min_rtt() const { return min_rtt_; }
  // Most recent sample (initial_rtt before any sample).
  DurationNs latest() const { return latest_; }
  // srtt + 4 * rttvar, clamped to [min_rto, max_rto].
  DurationNs Rto(DurationNs min_rto, DurationNs max_rto) const;

 private:
  DurationNs srtt_;
  DurationNs rttvar_;
  DurationNs min_rtt_;
  DurationNs latest_;
  bool has_sample_ = false;
};

}  // namespace braid::retransmit

#endif  // BRAID_RETRANSMIT_RTT_ESTIMATOR_H_

#include "retransmit/rtt_estimator.h"

namespace braid::retransmit {

RttEstimator::RttEstimator(DurationNs initial_rtt) { Reset(initial_rtt); }

void RttEstimator::Reset(DurationNs initial_rtt) {
  if (initial_rtt <= DurationNs::Zero()) initial_rtt = DurationNs::Micros(100);
  srtt_ = initial_rtt;
  rttvar_ = initial_rtt / 2;
  min_rtt_ = initial_rtt;
  latest_ = initial_rtt;
  has_sample_ = false;
}

bool RttEstimator::AddSample(DurationNs rtt) {
  if (rtt <= DurationNs::Zero() || rtt.IsInfinite()) return false;
  latest_ = rtt;
  if (!has_sample_) {
    has_sample_ = true;
    srtt_ = rtt;
    rttvar_ = rtt / 2;
    min_rtt_ = rtt;
    return true;
  }
  min_rtt_ = Min(min_rtt_, rtt);
  const DurationNs err = srtt_ > rtt ? srtt_ - rtt : rtt - srtt_;
  // rttvar = 3/4 rttvar + 1/4 |srtt - rtt|; srtt = 7/8 srtt + 1/8 rtt.
  rttvar_ = DurationNs((rttvar_.ns() * 3 + err.ns()) / 4);
  srtt_ = DurationNs((srtt_.ns() * 7 + rtt.ns()) / 8);
  return true;
}

DurationNs RttEstimator::Rto(DurationNs min_rto, DurationNs max_rto) const {
  const DurationNs rto = srtt_ + rttvar_ * 4;
  return Min(Max(rto, min_rto), max_rto);
}

}  // namespace braid::retransmit

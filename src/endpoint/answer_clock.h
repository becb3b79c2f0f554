// How long the application takes to come back to the endpoint after a Poll
// handed it completions: its turnaround. Endpoint::Poll holds an ack-only
// datagram for the application's answer (the ack then rides on the reply)
// only while answers come within `limit`, the ack delay the peer's timers
// allow for. An application that takes longer (it consumes a 4 MiB message,
// or does a millisecond of work between receive and reply) would otherwise
// hold every ack past the peer's tail-probe timer: measured on loopback, a
// 4 MiB ping-pong fired a spurious tail probe for every message.
//
// Nothing is held before the first answer is seen (an application's first
// answer often comes after set-up work). A slow turnaround counts at once;
// fast ones bring the estimate down by 1/8 of the difference per answer, so
// one quick answer among slow ones does not start holding again.
#ifndef BRAID_ENDPOINT_ANSWER_CLOCK_H_
#define BRAID_ENDPOINT_ANSWER_CLOCK_H_

#include "braid/time.h"

namespace braid::endpoint {

class AnswerClock {
 public:
  explicit AnswerClock(DurationNs limit) : limit_(limit) {}

  // A Poll handed the application completions at `now`.
  void Handed(TimeNs now) { handed_ = now; }

  // The application called in again (Send, Poll, Wait) at `now`; the first
  // call after Handed ends one turnaround.
  void Returned(TimeNs now) {
    if (handed_.IsInfinite()) return;
    const DurationNs d = Max(now - handed_, DurationNs::Zero());
    handed_ = TimeNs::Infinite();
    if (!known_ || d > estimate_) {
      estimate_ = d;
      known_ = true;
    } else {
      estimate_ = estimate_ + (d - estimate_) / 8;
    }
  }

  // Whether an ack may wait for the application's answer.
  bool MayHold() const { return known_ && estimate_ <= limit_; }
  // The turnaround estimate; Infinite before the first answer.
  DurationNs estimate() const {
    return known_ ? estimate_ : DurationNs::Infinite();
  }

 private:
  DurationNs limit_;
  bool known_ = false;  // an answer has been timed
  DurationNs estimate_ = DurationNs::Zero();
  TimeNs handed_ = TimeNs::Infinite();
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_ANSWER_CLOCK_H_

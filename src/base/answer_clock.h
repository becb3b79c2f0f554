// Whether an I/O layer may hold an ack for the application's answer, so
// the ack rides on the reply instead of costing a datagram of its own:
// DriveLoop holds ack-only datagrams, braid0 holds RC ACKs.
//
// Two questions, two measures:
//
// * MayHold: does the application come back quickly after a poll handed it
//   messages? The turnaround is the time to its next call of any kind
//   (poll, send, wait). A hold lasts at least until that call, so it is
//   allowed only while turnarounds stay within `limit`, the ack delay the
//   peer's timers allow for. An application that takes longer (it consumes
//   a 4 MiB message, or does a millisecond of work between receive and
//   reply) would otherwise hold every ack past the peer's tail-probe
//   timer: measured on loopback, a 4 MiB ping-pong fired a spurious tail
//   probe for every message. Nothing is held before the first turnaround
//   is timed; a slow one counts at once, fast ones bring the estimate down
//   by 1/8 of the difference each.
// * MayHoldThroughPolls: does it answer? A hold may also last through
//   later polls (UCX polls its other completion queues before its caller
//   replies) until the application sends, for at most `limit` after the
//   hand-off — only while holds pay: a score goes up for each answer
//   within `limit` of its hand-off and down by two for each answer later
//   than that or hold that ended without one, so holds go on through
//   polls while at least two in three are answered in time. An application
//   that never answers (a bulk receiver) never scores.
#ifndef BRAID_BASE_ANSWER_CLOCK_H_
#define BRAID_BASE_ANSWER_CLOCK_H_

#include <algorithm>

#include "braid/time.h"

namespace braid {

class AnswerClock {
 public:
  explicit AnswerClock(DurationNs limit) : limit_(limit) {}

  // A poll handed the application received messages at `now`; a turnaround
  // starts (a later hand-off before the application's next call restarts
  // it).
  void Handed(TimeNs now) {
    handed_ = now;
    answer_handed_ = now;
  }

  // The application called in again (poll, send, wait) at `now`; the first
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

  // Whether Returned or Answered would record anything (a hand-off not yet
  // followed by a call): when not, they need no time.
  bool pending() const {
    return !handed_.IsInfinite() || !answer_handed_.IsInfinite();
  }

  // The application sent at `now`: a call (Returned), and the answer to the
  // last hand-off if it is the first send since.
  void Answered(TimeNs now) {
    Returned(now);
    if (answer_handed_.IsInfinite()) return;
    Score(now - answer_handed_ <= limit_);
    answer_handed_ = TimeNs::Infinite();
  }

  // A hold through polls ended at its deadline with no answer.
  void HoldExpired() {
    if (answer_handed_.IsInfinite()) return;
    Score(false);
    answer_handed_ = TimeNs::Infinite();
  }

  // Whether an ack may wait for the application's next call.
  bool MayHold() const { return known_ && estimate_ <= limit_; }
  // Whether it may wait through later polls, for an answer.
  bool MayHoldThroughPolls() const { return score_ >= kScoreToHold; }
  // How long after the hand-off a hold through polls lasts at most.
  DurationNs limit() const { return limit_; }
  // A hand-off waits for its answer.
  bool awaiting() const { return !answer_handed_.IsInfinite(); }
  // The turnaround estimate; Infinite before the first one is timed.
  DurationNs estimate() const {
    return known_ ? estimate_ : DurationNs::Infinite();
  }

 private:
  static constexpr int kScoreMax = 8;
  static constexpr int kScoreToHold = 4;

  void Score(bool in_time) {
    score_ =
        in_time ? std::min(score_ + 1, kScoreMax) : std::max(score_ - 2, 0);
  }

  DurationNs limit_;
  bool known_ = false;  // a turnaround has been timed
  DurationNs estimate_ = DurationNs::Zero();
  TimeNs handed_ = TimeNs::Infinite();         // turnaround open since
  TimeNs answer_handed_ = TimeNs::Infinite();  // answer awaited since
  int score_ = 0;
};

}  // namespace braid

#endif  // BRAID_BASE_ANSWER_CLOCK_H_

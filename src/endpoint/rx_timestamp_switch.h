// RxTimestamps::kAuto: turns a backend's receive timestamps on and off by
// how the application calls in. While it busy-polls promptly they stay off
// (a datagram is read within one Poll of its arrival, and the time of that
// read stands in). A Poll that comes more than `late_poll_gap` after the one
// before (the thread was descheduled or busy elsewhere, so datagrams may
// have waited unread and would look like network delay) turns them on,
// until the Polls have been prompt again for `linger`. From the first
// blocking wait on they stay on for good (Start).
#ifndef BRAID_ENDPOINT_RX_TIMESTAMP_SWITCH_H_
#define BRAID_ENDPOINT_RX_TIMESTAMP_SWITCH_H_

#include <cstdint>

#include "backend/backend.h"
#include "braid/time.h"

namespace braid::endpoint {

class RxTimestampSwitch {
 public:
  // `on_auto`: the policy applies (kAuto); otherwise every call is a no-op.
  RxTimestampSwitch(bool on_auto, DurationNs late_poll_gap, DurationNs linger)
      : pending_(on_auto), late_poll_gap_(late_poll_gap), linger_(linger) {}

  // kAuto and no Start yet: OnPoll applies.
  bool pending() const { return pending_; }

  // The application blocks from now on: timestamps on for good.
  void Start(backend::Backend* be) {
    if (!pending_) return;
    pending_ = false;
    if (!on_) be->SetRxTimestamps(true);
    on_ = true;
  }

  // A Poll at `now` (once per Poll, while pending()).
  void OnPoll(TimeNs now, backend::Backend* be) {
    if (!last_poll_.IsInfinite() && now - last_poll_ > late_poll_gap_) {
      last_late_poll_ = now;
      if (!on_) {
        be->SetRxTimestamps(true);
        on_ = true;
        ++switches_;
      }
    } else if (on_ && now - last_late_poll_ > linger_) {
      be->SetRxTimestamps(false);
      on_ = false;
      ++switches_;
    }
    last_poll_ = now;
  }

  // On/off changes made by OnPoll.
  uint64_t switches() const { return switches_; }

 private:
  bool pending_;
  DurationNs late_poll_gap_;
  DurationNs linger_;
  bool on_ = false;                             // as last set on the backend
  TimeNs last_poll_ = TimeNs::Infinite();       // the previous Poll's now
  TimeNs last_late_poll_ = TimeNs::Infinite();  // the last late one
  uint64_t switches_ = 0;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_RX_TIMESTAMP_SWITCH_H_

#include "retransmit/path_timer_queue.h"

#include <algorithm>

namespace braid::retransmit {

namespace {
struct TimedLater {
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a.when > b.when;
  }
};
struct ParkedLater {
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a.tx_index > b.tx_index;
  }
};
}  // namespace

PathTimerQueue::PathTimerQueue() {
  timed_.reserve(64);
  parked_.reserve(64);
  ack_parked_.reserve(64);
}

void PathTimerQueue::Clear() {
  timed_.clear();
  parked_.clear();
  ack_parked_.clear();
  std::fill(scheduled_at_.begin(), scheduled_at_.end(), TimeNs::Infinite());
  std::fill(is_parked_.begin(), is_parked_.end(), 0);
  std::fill(is_ack_parked_.begin(), is_ack_parked_.end(), 0);
}

void PathTimerQueue::Ensure(wire::PathId p) {
  if (scheduled_at_.size() > p) return;
  scheduled_at_.resize(p + 1, TimeNs::Infinite());
  is_parked_.resize(p + 1, 0);
  is_ack_parked_.resize(p + 1, 0);
}

void PathTimerQueue::Schedule(wire::PathId p, TimeNs when) {
  Ensure(p);
  if (scheduled_at_[p] <= when) return;
  scheduled_at_[p] = when;  // an older, later entry becomes stale
  timed_.push_back({when, p});
  std::push_heap(timed_.begin(), timed_.end(), TimedLater());
}

void PathTimerQueue::Park(wire::PathId p, uint64_t tx_index) {
  Ensure(p);
  if (is_parked_[p]) return;  // an earlier index releases it first
  is_parked_[p] = 1;
  parked_.push_back({tx_index, p});
  std::push_heap(parked_.begin(), parked_.end(), ParkedLater());
}

void PathTimerQueue::ParkUntilNextAck(wire::PathId p) {
  Ensure(p);
  if (is_ack_parked_[p]) return;
  is_ack_parked_[p] = 1;
  ack_parked_.push_back(p);
}

TimeNs PathTimerQueue::NextTime() const {
  return timed_.empty() ? TimeNs::Infinite() : timed_.front().when;
}

bool PathTimerQueue::PopDue(TimeNs now, wire::PathId* p) {
  while (!timed_.empty() && timed_.front().when <= now) {
    const Timed t = timed_.front();
    std::pop_heap(timed_.begin(), timed_.end(), TimedLater());
    timed_.pop_back();
    if (scheduled_at_[t.path] != t.when) continue;  // superseded entry
    scheduled_at_[t.path] = TimeNs::Infinite();
    *p = t.path;
    return true;
  }
  return false;
}

bool PathTimerQueue::PopReleased(uint64_t arrived_tx, wire::PathId* p) {
  if (parked_.empty() || parked_.front().tx_index >= arrived_tx) return false;
  *p = parked_.front().path;
  std::pop_heap(parked_.begin(), parked_.end(), ParkedLater());
  parked_.pop_back();
  is_parked_[*p] = 0;
  return true;
}

void PathTimerQueue::TakeAckParked(std::vector<wire::PathId>* out) {
  out->clear();
  out->swap(ack_parked_);
  for (wire::PathId p : *out) is_ack_parked_[p] = 0;
}

}  // namespace braid::retransmit

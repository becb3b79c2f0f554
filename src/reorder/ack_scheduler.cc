#include "reorder/ack_scheduler.h"

namespace braid::reorder {

AckScheduler::AckScheduler(const AckOptions& options) : options_(options) {
  if (options_.ack_every_packets == 0) options_.ack_every_packets = 1;
  if (options_.ack_delay < DurationNs::Zero()) {
    options_.ack_delay = DurationNs::Zero();
  }
}

void AckScheduler::OnData(TimeNs now, wire::PathId path, wire::PathSeq seq,
                          bool ce, bool ack_now, bool out_of_order,
                          bool duplicate, bool retransmit) {
  ++stats_.data_packets;
  const bool ce_changed = have_latest_ && ce != latest_ce_;
  if (ce) {
    ++stats_.ce_packets;
    ++ce_count_;
  }
  if (pending_count_ == 0) first_unacked_time_ = now;
  ++pending_count_;
  // The first duplicate since the last ack is echoed in preference to any
  // other arrival, flagged: the sender learns that this transmission was
  // unnecessary (like a D-SACK).
  if (!echo_duplicate_) {
    have_latest_ = true;
    latest_path_ = path;
    latest_seq_ = seq;
    latest_arrival_ = now;
    latest_ce_ = ce;
    if (duplicate) {
      echo_duplicate_ = true;
      ++stats_.duplicate_echoes;
    }
  }

  if (duplicate || (ack_now && retransmit)) urgent_ = true;
  const bool at_once = ack_now || out_of_order || duplicate ||
                       (options_.ack_on_ce_change && ce_changed);
  if (at_once && due_at_once_time_.IsInfinite()) due_at_once_time_ = now;
  if (pending_count_ >= options_.ack_every_packets && !due_by_count_) {
    due_by_count_ = true;
    if (due_at_once_time_.IsInfinite()) due_at_once_time_ = now;
  }
}

bool AckScheduler::AckDue(TimeNs now) const {
  return pending_count_ > 0 && now >= NextAckTime();
}

TimeNs AckScheduler::NextAckTime() const {
  if (pending_count_ == 0) return TimeNs::Infinite();
  if (!due_at_once_time_.IsInfinite()) return due_at_once_time_;
  return first_unacked_time_ + options_.ack_delay;
}

AckScheduler::Echo AckScheduler::OnAckSent(TimeNs now) {
  ++stats_.acks_sent;
  if (pending_count_ > 0) {
    if (due_by_count_) {
      ++stats_.count_acks;
    } else if (!due_at_once_time_.IsInfinite()) {
      ++stats_.immediate_acks;
    }
  }
  Echo e;
  e.valid = have_latest_;
  e.path = latest_path_;
  e.seq = latest_seq_;
  e.ce = latest_ce_;
  e.duplicate = echo_duplicate_;
  e.urgent = urgent_;
  e.ce_count = ce_count_;
  e.ack_delay = have_latest_ ? Max(now - latest_arrival_, DurationNs::Zero())
                             : DurationNs::Zero();
  Reset();
  return e;
}

void AckScheduler::Reset() {
  pending_count_ = 0;
  echo_duplicate_ = false;
  urgent_ = false;
  due_at_once_time_ = TimeNs::Infinite();
  due_by_count_ = false;
}

}  // namespace braid::reorder

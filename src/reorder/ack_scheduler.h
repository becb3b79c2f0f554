// Ack coalescing for one peer pair: decides when the receiver owes an ACK
// (by count, by time, or at once) and supplies the per-path echo fields.
#ifndef BRAID_REORDER_ACK_SCHEDULER_H_
#define BRAID_REORDER_ACK_SCHEDULER_H_

#include <cstdint>

#include "braid/time.h"
#include "wire/psn.h"

namespace braid::reorder {

struct AckOptions {
  // Ack once this many data packets are unacknowledged. 1 = ack every packet.
  uint32_t ack_every_packets = 8;
  // Ack at most this long after the first unacknowledged data packet.
  DurationNs ack_delay = DurationNs::Micros(10);
  // Ack at once when a packet's CE mark differs from the previous packet's
  // (the DCTCP receiver rule), so the sender sees exact CE boundaries.
  bool ack_on_ce_change = true;
};

struct AckSchedulerStats {
  uint64_t data_packets = 0;      // OnData calls
  uint64_t ce_packets = 0;        // of which CE-marked
  uint64_t acks_sent = 0;         // OnAckSent calls
  uint64_t immediate_acks = 0;    // acks made due at once by a trigger
  uint64_t count_acks = 0;        // acks made due by ack_every_packets
  uint64_t duplicate_echoes = 0;  // duplicates chosen as the echo
};

// Decides when to acknowledge. Feed every data packet (new or duplicate) to
// OnData(); send an ACK when AckDue(now); call OnAckSent() when it is built.
class AckScheduler {
 public:
  // Echo fields for the ACK about to be sent.
  struct Echo {
    // The latest data packet -- or, if a duplicate arrived since the last
    // ACK, the first such duplicate (then `duplicate` is set).
    wire::PathId path = 0;
    wire::PathSeq seq{0};    // its per-path sequence number
    DurationNs ack_delay;    // time it waited at the receiver before this ACK
    bool ce = false;         // the latest data packet was CE-marked
    uint32_t ce_count = 0;   // cumulative CE-marked data packets (wraps)
    bool valid = false;      // false if no data packet was ever seen
    bool duplicate = false;  // the echoed packet was a duplicate
    // The sender is repairing: a re-send asked for this ack at once, or a
    // duplicate arrived since the last ack (our previous ack was evidently
    // lost or late). Losing this ack costs the sender another timer.
    bool urgent = false;
  };

  explicit AckScheduler(const AckOptions& options = AckOptions());

  // Records a data packet arrival. `out_of_order`: it created or filled a
  // hole (ReceiveWindow::last_out_of_order()); `duplicate`: already received.
  // ack_now, out_of_order or duplicate make an ACK due at once.
  // `retransmit`: the sender flagged the packet as a re-send (with ack_now
  // it makes the ack urgent, see Echo::urgent).
  void OnData(TimeNs now, wire::PathId path, wire::PathSeq seq, bool ce,
              bool ack_now, bool out_of_order, bool duplicate,
              bool retransmit = false);

  // True if an ACK should be sent at `now`.
  bool AckDue(TimeNs now) const;

  // When the pending ACK becomes due; TimeNs::Infinite() if none is pending.
  // A due-at-once ACK reports the arrival time of the packet that made it due.
  TimeNs NextAckTime() const;

  // Returns the echo fields and clears the pending state. ack_delay = now -
  // arrival of the echoed (latest) packet. Callable when nothing is pending
  // (e.g. an ACK sent for another reason): echoes the latest packet again.
  Echo OnAckSent(TimeNs now);

  // True if data arrived since the last ACK.
  bool pending() const { return pending_count_ > 0; }
  // Data packets received since the last ACK.
  uint32_t pending_count() const { return pending_count_; }

  // Forgets pending state (new sender session). Cumulative counts are kept.
  void Reset();

  const AckOptions& options() const { return options_; }
  const AckSchedulerStats& stats() const { return stats_; }

 private:
  AckOptions options_;
  uint32_t pending_count_ = 0;
  TimeNs first_unacked_time_;
  TimeNs due_at_once_time_ = TimeNs::Infinite();  // Infinite unless triggered
  bool due_by_count_ = false;
  // Latest packet (the echo).
  bool have_latest_ = false;
  wire::PathId latest_path_ = 0;
  wire::PathSeq latest_seq_{0};
  TimeNs latest_arrival_;
  bool latest_ce_ = false;
  bool urgent_ = false;          // ack_now or a duplicate since the last ack
  bool echo_duplicate_ = false;  // latest_* is a duplicate: keep it
  uint32_t ce_count_ = 0;
  AckSchedulerStats stats_;
};

}  // namespace braid::reorder

#endif  // BRAID_REORDER_ACK_SCHEDULER_H_

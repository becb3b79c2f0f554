// Orders a peer's paths by when the oldest live transmission on each needs
// another look by the time-based loss rule, so an ack or timer touches only
// the paths that are due instead of every path. Three holding areas:
//  * scheduled: a min-heap of (time, path); a path's entry may be stale
//    (early), in which case the manager just looks and reschedules;
//  * parked on a send index: the path's front is past its reorder window
//    but nothing sent after it is known to have arrived yet; released once
//    the manager's arrival mark passes that index;
//  * parked until the next ack: the front is beyond the latest ack's reach.
// Each path has at most one live entry per area (duplicates are skipped
// lazily). No allocation once the heaps have grown to the number of paths.
#ifndef BRAID_RETRANSMIT_PATH_TIMER_QUEUE_H_
#define BRAID_RETRANSMIT_PATH_TIMER_QUEUE_H_

#include <cstdint>
#include <vector>

#include "braid/time.h"
#include "wire/psn.h"

namespace braid::retransmit {

class PathTimerQueue {
 public:
  PathTimerQueue();

  // Forgets every entry.
  void Clear();
  // Makes sure path p is due no later than `when` (adds an entry if p has
  // none or only a later one).
  void Schedule(wire::PathId p, TimeNs when);
  // Parks p until an arrival of a transmission with a key > tx_index. The
  // key is any order on transmissions; SentPacketManager uses send times
  // (ns), so one burst (one send time) never releases its own path.
  void Park(wire::PathId p, uint64_t tx_index);
  // Parks p until the next ack.
  void ParkUntilNextAck(wire::PathId p);

  // Earliest scheduled time; TimeNs::Infinite() if none. May be early.
  TimeNs NextTime() const;
  // Pops a path scheduled at or before `now`; false if none is due.
  bool PopDue(TimeNs now, wire::PathId* p);
  // Pops a path parked on an index below `arrived_tx`; false if none.
  bool PopReleased(uint64_t arrived_tx, wire::PathId* p);
  // Moves every path parked until the next ack into *out (cleared first).
  void TakeAckParked(std::vector<wire::PathId>* out);

 private:
  struct Timed {
    TimeNs when;
    wire::PathId path;
  };
  struct Parked {
    uint64_t tx_index;
    wire::PathId path;
  };
  void Ensure(wire::PathId p);

  std::vector<Timed> timed_;    // min-heap on when
  std::vector<Parked> parked_;  // min-heap on tx_index
  std::vector<wire::PathId> ack_parked_;
  // Per path: the time of its valid scheduled entry (Infinite if none),
  // whether it is parked on an index, and whether it waits for an ack.
  std::vector<TimeNs> scheduled_at_;
  std::vector<uint8_t> is_parked_;
  std::vector<uint8_t> is_ack_parked_;
};

}  // namespace braid::retransmit

#endif  // BRAID_RETRANSMIT_PATH_TIMER_QUEUE_H_

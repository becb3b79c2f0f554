// A fixed delay for packets held by the kernel (NFQUEUE): a FIFO of packet
// ids, each released a constant time after it arrived. Order is preserved.
#ifndef BRAID_TOOLS_FABRIC_DELAY_LINE_H_
#define BRAID_TOOLS_FABRIC_DELAY_LINE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "braid/time.h"

namespace braid::fabric {

// Bounded ring of (packet id, due time). No allocation after construction.
class DelayLine {
 public:
  // `capacity` packets at most (> 0) may be held, each for `delay`.
  DelayLine(size_t capacity, DurationNs delay);

  // Holds packet `id`, arrived at `now`. Returns false when full (the caller
  // decides the packet's fate; the line is unchanged).
  bool Push(uint32_t id, TimeNs now);

  // When the oldest held packet is due; TimeNs::Infinite() when empty.
  TimeNs NextDue() const;

  // Removes the oldest packet if it is due at `now` and stores its id.
  // Returns false if nothing is due.
  bool PopDue(TimeNs now, uint32_t* id);

  // Removes the oldest packet whatever its due time (used at shutdown).
  // Returns false when empty.
  bool PopAny(uint32_t* id);

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

 private:
  struct Slot {
    uint32_t id = 0;
    TimeNs due;
  };
  std::vector<Slot> slots_;
  DurationNs delay_;
  size_t head_ = 0;  // oldest
  size_t size_ = 0;
};

}  // namespace braid::fabric

#endif  // BRAID_TOOLS_FABRIC_DELAY_LINE_H_

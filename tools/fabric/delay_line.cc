#include "tools/fabric/delay_line.h"

namespace braid::fabric {

DelayLine::DelayLine(size_t capacity, DurationNs delay)
    : slots_(capacity > 0 ? capacity : 1), delay_(delay) {}

bool DelayLine::Push(uint32_t id, TimeNs now) {
  if (size_ == slots_.size()) return false;
  Slot& s = slots_[(head_ + size_) % slots_.size()];
  s.id = id;
  s.due = now + delay_;
  ++size_;
  return true;
}

TimeNs DelayLine::NextDue() const {
  return size_ == 0 ? TimeNs::Infinite() : slots_[head_].due;
}

bool DelayLine::PopDue(TimeNs now, uint32_t* id) {
  if (size_ == 0 || slots_[head_].due > now) return false;
  return PopAny(id);
}

bool DelayLine::PopAny(uint32_t* id) {
  if (size_ == 0) return false;
  *id = slots_[head_].id;
  head_ = (head_ + 1) % slots_.size();
  --size_;
  return true;
}

}  // namespace braid::fabric

// When each peer next needs its timers run: a min-heap of items keyed by
// wake time. Each item carries its own heap position (`T::heap_pos`, an
// intrusive hook), so changing an item's wake time is O(log n) and costs no
// lookup, and an evicted peer can be removed. The endpoint asks it for the
// earliest wake and for the peers due, instead of asking every peer on every
// poll (which made an idle poll cost O(peers)).
#ifndef BRAID_ENDPOINT_WAKE_HEAP_H_
#define BRAID_ENDPOINT_WAKE_HEAP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "braid/time.h"

namespace braid::endpoint {

inline constexpr size_t kNotInHeap = SIZE_MAX;

// T must have a `size_t heap_pos` member, kNotInHeap while not in a heap,
// and must stay at one address while in one.
template <typename T>
class WakeHeap {
 public:
  // Sets `p`'s wake time: inserts, moves, or (Infinite) removes it.
  void Set(T* p, TimeNs at) {
    if (p->heap_pos == kNotInHeap) {
      if (at.IsInfinite()) return;
      heap_.push_back(Entry{at, p});
      p->heap_pos = heap_.size() - 1;
      SiftUp(heap_.size() - 1);
      return;
    }
    const size_t i = p->heap_pos;
    if (at.IsInfinite()) {
      RemoveAt(i);
      return;
    }
    const TimeNs old = heap_[i].at;
    heap_[i].at = at;
    if (at < old) {
      SiftUp(i);
    } else if (old < at) {
      SiftDown(i);
    }
  }
  // Forgets `p` (no-op if absent).
  void Remove(T* p) {
    if (p->heap_pos != kNotInHeap) RemoveAt(p->heap_pos);
  }
  // The earliest wake time; Infinite when empty.
  TimeNs Earliest() const {
    return heap_.empty() ? TimeNs::Infinite() : heap_[0].at;
  }
  // Removes every item due at or before `now` and appends it to `out`
  // (earliest first). The caller runs their timers and Sets them again.
  void PopDue(TimeNs now, std::vector<T*>* out) {
    while (!heap_.empty() && heap_[0].at <= now) {
      out->push_back(heap_[0].item);
      RemoveAt(0);
    }
  }
  size_t size() const { return heap_.size(); }

 private:
  struct Entry {
    TimeNs at;
    T* item;
  };
  void Place(size_t i, const Entry& e) {
    heap_[i] = e;
    e.item->heap_pos = i;
  }
  void SiftUp(size_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!(e.at < heap_[parent].at)) break;
      Place(i, heap_[parent]);
      i = parent;
    }
    Place(i, e);
  }
  void SiftDown(size_t i) {
    const Entry e = heap_[i];
    const size_t n = heap_.size();
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1].at < heap_[child].at) ++child;
      if (!(heap_[child].at < e.at)) break;
      Place(i, heap_[child]);
      i = child;
    }
    Place(i, e);
  }
  void RemoveAt(size_t i) {
    heap_[i].item->heap_pos = kNotInHeap;
    const size_t last = heap_.size() - 1;
    if (i == last) {
      heap_.pop_back();
      return;
    }
    heap_[i] = heap_[last];
    heap_.pop_back();
    heap_[i].item->heap_pos = i;
    if (i > 0 && heap_[i].at < heap_[(i - 1) / 2].at) {
      SiftUp(i);
    } else {
      SiftDown(i);
    }
  }

  std::vector<Entry> heap_;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_WAKE_HEAP_H_

#include "sim/simulator.h"

#include <algorithm>
#include <utility>

namespace braid::sim {

Simulator::Simulator(SimulatorOptions options)
    : seed_rng_(options.seed), pool_(options.pool) {
  heap_.reserve(1024);
  due_.resize(256);
}

Simulator::~Simulator() = default;

// The heap is 4-ary: half the levels of a binary heap, and a node's four
// children share one or two cache lines, so a pop from a heap of thousands
// of events waits on fewer misses. Keys (at, seq) are unique, so the order
// events run in does not depend on the heap's shape.
namespace {
constexpr size_t kArity = 4;
}  // namespace

void Simulator::Push(const Event& e) {
  // Sift up with a hole instead of swaps.
  size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!Before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Simulator::Event Simulator::Pop() {
  Event top = heap_.front();
  Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n > 0) {
    size_t i = 0;
    while (true) {
      const size_t first = kArity * i + 1;
      if (first >= n) break;
      const size_t end = std::min(first + kArity, n);
      size_t child = first;
      for (size_t c = first + 1; c < end; ++c) {
        if (Before(heap_[c], heap_[child])) child = c;
      }
      if (!Before(heap_[child], last)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
  }
  return top;
}

void Simulator::PushDue(const Event& e) {
  if (due_size_ == due_.size()) {
    std::vector<Event> bigger(due_.size() * 2);
    for (size_t i = 0; i < due_size_; ++i) {
      bigger[i] = due_[(due_head_ + i) & (due_.size() - 1)];
    }
    due_ = std::move(bigger);
    due_head_ = 0;
  }
  due_[(due_head_ + due_size_) & (due_.size() - 1)] = e;
  ++due_size_;
}

Simulator::Event Simulator::PopDue() {
  const Event e = due_[due_head_];
  due_head_ = (due_head_ + 1) & (due_.size() - 1);
  --due_size_;
  return e;
}

void Simulator::ScheduleRaw(TimeNs at, EventFn fn, void* obj, uint64_t arg) {
  int64_t t = at.ns();
  if (t <= now_.ns()) {
    // Due now: every event already queued for now() has a lower rank, and
    // every later one a higher, so the FIFO stays in rank order.
    if (t < now_.ns()) ++counters_.scheduled_in_past;
    PushDue(Event{now_.ns(), next_seq_++, fn, obj, arg});
    return;
  }
  Push(Event{t, next_seq_++, fn, obj, arg});
}

void Simulator::ScheduleRanked(TimeNs at, uint64_t rank, EventFn fn, void* obj,
                               uint64_t arg) {
  // Always the heap: the rank may be lower than that of events already in
  // the due FIFO, and the heap orders by (time, rank).
  Push(Event{std::max(at.ns(), now_.ns()), rank, fn, obj, arg});
}

Simulator::TimerId Simulator::Schedule(TimeNs at, Callback cb) {
  uint32_t index;
  if (!free_timers_.empty()) {
    index = free_timers_.back();
    free_timers_.pop_back();
  } else {
    index = static_cast<uint32_t>(timers_.size());
    timers_.emplace_back();
  }
  TimerSlot& slot = timers_[index];
  slot.cb = std::move(cb);
  slot.armed = true;
  ++slot.generation;
  if (slot.generation == 0) slot.generation = 1;
  // Index + 1 so that no valid id is 0.
  const uint64_t id = (static_cast<uint64_t>(slot.generation) << 32) |
                      (static_cast<uint64_t>(index) + 1);
  ScheduleRaw(at, &Simulator::RunTimer, this, id);
  return TimerId{id};
}

bool Simulator::Cancel(TimerId id) {
  if (!id.valid()) return false;
  const uint64_t low = id.value & 0xffffffffULL;
  if (low == 0 || low > timers_.size()) return false;
  const uint32_t index = static_cast<uint32_t>(low - 1);
  TimerSlot& slot = timers_[index];
  if (!slot.armed || slot.generation != (id.value >> 32)) return false;
  slot.armed = false;
  slot.cb = nullptr;
  // The heap event stays; it finds the generation changed and does nothing.
  // The slot is recycled only when that event has fired (see RunTimer), so
  // a stale event can never run a newer callback.
  ++counters_.timers_cancelled;
  return true;
}

void Simulator::RunTimer(void* self_ptr, uint64_t id) {
  auto* self = static_cast<Simulator*>(self_ptr);
  const uint32_t index = static_cast<uint32_t>((id & 0xffffffffULL) - 1);
  TimerSlot& slot = self->timers_[index];
  const bool live = slot.armed && slot.generation == (id >> 32);
  Callback cb;
  if (live) {
    cb = std::move(slot.cb);
    slot.cb = nullptr;
    slot.armed = false;
  }
  // Each Schedule pushes exactly one heap event per slot use, so the slot is
  // free again once its event has been popped, live or cancelled.
  self->free_timers_.push_back(index);
  if (live) cb();
}

bool Simulator::Step() {
  Event e;
  if (due_size_ > 0 && DueFirst()) {
    e = PopDue();
  } else if (!heap_.empty()) {
    e = Pop();
  } else {
    return false;
  }
  now_ = TimeNs(e.at);
  ++counters_.events_run;
  e.fn(e.obj, e.arg);
  return true;
}

void Simulator::RunUntil(TimeNs t) {
  while (!idle() && NextEventTime() <= t) Step();
  if (now_ < t && !t.IsInfinite()) now_ = t;
}

bool Simulator::RunUntilIdle(uint64_t max_events) {
  for (uint64_t n = 0; n < max_events; ++n) {
    if (!Step()) return true;
  }
  return idle();
}

TimeNs Simulator::NextEventTime() const {
  if (due_size_ > 0) return now_;
  return heap_.empty() ? TimeNs::Infinite() : TimeNs(heap_.front().at);
}

}  // namespace braid::sim

// The discrete-event loop of the network simulator: a virtual clock, a
// 4-ary heap of small POD events for the future and a FIFO for events due
// now (no heap work for them). Same inputs and seed => identical run.
// Events at equal times run in the order they were scheduled (or, for
// ScheduleRanked, in the order their ranks were reserved).
#ifndef BRAID_SIM_SIMULATOR_H_
#define BRAID_SIM_SIMULATOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "base/rng.h"
#include "braid/time.h"
#include "sim/packet_pool.h"

namespace braid::sim {

// A raw event handler: a plain function called with the object and argument
// given to ScheduleRaw. Used by simulator components on the per-packet path.
using EventFn = void (*)(void* obj, uint64_t arg);

struct SimulatorOptions {
  // Master seed; every component draws its own stream from it (NextSeed()).
  uint64_t seed = 1;
  // Packet pool configuration (payload capacity of every packet buffer).
  PacketPoolOptions pool{};
};

struct SimulatorCounters {
  uint64_t events_run = 0;
  uint64_t timers_cancelled = 0;
  uint64_t scheduled_in_past = 0;  // clamped to now()
};

class Simulator {
 public:
  // A callback for drivers' own timers. Small captures are stored inline.
  using Callback = absl::AnyInvocable<void()>;

  // Identifies a timer set with Schedule(); used to Cancel() it.
  struct TimerId {
    uint64_t value = 0;  // 0 = none
    bool valid() const { return value != 0; }
  };

  explicit Simulator(SimulatorOptions options = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // The virtual clock. Starts at TimeNs::Zero(); never goes backwards.
  TimeNs now() const { return now_; }

  // Schedules fn(obj, arg) at `at` (clamped to now() if in the past). No
  // allocation once the queues have grown to their working size.
  void ScheduleRaw(TimeNs at, EventFn fn, void* obj, uint64_t arg);

  // For components that keep time-ordered events of their own (a link's
  // packets in flight) and hand the simulator only the earliest: reserves
  // the place among equal-time events that an event scheduled now would
  // get. ScheduleRanked(at, rank, ...) later runs the event exactly where
  // ScheduleRaw(at, ...) at the time of ReserveRank would have.
  uint64_t ReserveRank() { return next_seq_++; }
  // Schedules fn(obj, arg) at `at` (>= now()) with a rank from ReserveRank.
  void ScheduleRanked(TimeNs at, uint64_t rank, EventFn fn, void* obj,
                      uint64_t arg);

  // Schedules `cb` at `at` (clamped to now() if in the past). Returns an id
  // that Cancel() accepts until the callback has run.
  TimerId Schedule(TimeNs at, Callback cb);
  // Same as Schedule(now() + d, cb).
  TimerId ScheduleAfter(DurationNs d, Callback cb) {
    return Schedule(now_ + d, std::move(cb));
  }
  // Cancels a pending timer. Returns false if it already ran, was cancelled,
  // or the id is unknown.
  bool Cancel(TimerId id);

  // Runs the single earliest event. Returns false if there was none.
  bool Step();
  // Runs every event with time <= t, then sets now() to max(now(), t).
  void RunUntil(TimeNs t);
  // Same as RunUntil(now() + d).
  void RunFor(DurationNs d) { RunUntil(now_ + d); }
  // Runs until no event is pending or `max_events` have run. Returns true if
  // the simulator became idle.
  bool RunUntilIdle(uint64_t max_events = UINT64_MAX);

  // Time of the earliest pending event, or TimeNs::Infinite().
  TimeNs NextEventTime() const;
  // Events in the queues (a component's own held events are not counted;
  // its earliest one is).
  size_t pending_events() const { return heap_.size() + due_size_; }
  bool idle() const { return heap_.empty() && due_size_ == 0; }

  // A fresh deterministic seed for a component (links, switches, drivers).
  uint64_t NextSeed() { return seed_rng_.Next(); }
  // A fresh packet id (unique within this simulator).
  uint64_t NextPacketId() { return ++last_packet_id_; }

  PacketPool& pool() { return pool_; }
  const SimulatorCounters& counters() const { return counters_; }

 private:
  struct Event {
    int64_t at;
    uint64_t seq;
    EventFn fn;
    void* obj;
    uint64_t arg;
  };
  struct TimerSlot {
    Callback cb;
    uint32_t generation = 0;
    bool armed = false;
  };

  static bool Before(const Event& a, const Event& b) {
    return a.at < b.at || (a.at == b.at && a.seq < b.seq);
  }
  void Push(const Event& e);
  Event Pop();
  // The due FIFO: events scheduled for now() while the clock stood there,
  // in rank order (a ring that doubles when full).
  void PushDue(const Event& e);
  Event PopDue();
  // True if the next event to run is the due FIFO's front (else the heap's
  // top). Requires a non-empty due FIFO.
  bool DueFirst() const {
    return heap_.empty() || heap_.front().at > now_.ns() ||
           due_[due_head_].seq < heap_.front().seq;
  }
  static void RunTimer(void* self, uint64_t id);

  TimeNs now_ = TimeNs::Zero();
  uint64_t next_seq_ = 0;
  uint64_t last_packet_id_ = 0;
  std::vector<Event> heap_;
  std::vector<Event> due_;  // ring; size a power of two
  size_t due_head_ = 0;
  size_t due_size_ = 0;
  std::vector<TimerSlot> timers_;
  std::vector<uint32_t> free_timers_;
  Rng seed_rng_;
  PacketPool pool_;
  SimulatorCounters counters_;
};

}  // namespace braid::sim

#endif  // BRAID_SIM_SIMULATOR_H_

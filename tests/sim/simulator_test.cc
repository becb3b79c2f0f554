#include "sim/simulator.h"

#include <vector>

#include "gtest/gtest.h"

namespace braid::sim {
namespace {

TEST(SimulatorTest, ClockStartsAtZeroAndIsIdle) {
  Simulator sim;
  EXPECT_EQ(sim.now(), TimeNs::Zero());
  EXPECT_TRUE(sim.idle());
  EXPECT_FALSE(sim.Step());
  EXPECT_TRUE(sim.NextEventTime().IsInfinite());
}

TEST(SimulatorTest, EventsRunInTimeOrderAndAdvanceTheClock) {
  Simulator sim;
  std::vector<int64_t> seen;
  for (int64_t t : {50, 10, 30, 20, 40}) {
    sim.Schedule(TimeNs(t), [&, t] {
      EXPECT_EQ(sim.now().ns(), t);
      seen.push_back(t);
    });
  }
  EXPECT_TRUE(sim.RunUntilIdle());
  EXPECT_EQ(seen, (std::vector<int64_t>{10, 20, 30, 40, 50}));
  EXPECT_EQ(sim.now().ns(), 50);
}

TEST(SimulatorTest, EqualTimesRunInInsertionOrder) {
  Simulator sim;
  std::vector<int> seen;
  for (int i = 0; i < 100; ++i) {
    sim.Schedule(TimeNs(7), [&, i] { seen.push_back(i); });
  }
  sim.RunUntilIdle();
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[i], i);
}

TEST(SimulatorTest, RunUntilStopsAtTheGivenTimeAndSetsTheClock) {
  Simulator sim;
  int ran = 0;
  sim.Schedule(TimeNs(10), [&] { ++ran; });
  sim.Schedule(TimeNs(20), [&] { ++ran; });
  sim.Schedule(TimeNs(21), [&] { ++ran; });
  sim.RunUntil(TimeNs(20));
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(sim.now().ns(), 20);
  sim.RunUntil(TimeNs(15));  // never goes backwards
  EXPECT_EQ(sim.now().ns(), 20);
  sim.RunFor(DurationNs(100));
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(sim.now().ns(), 120);
}

TEST(SimulatorTest, CancelledTimerDoesNotRun) {
  Simulator sim;
  int ran = 0;
  auto id = sim.Schedule(TimeNs(10), [&] { ++ran; });
  EXPECT_TRUE(sim.Cancel(id));
  EXPECT_FALSE(sim.Cancel(id));  // second cancel is a no-op
  sim.RunUntilIdle();
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(sim.counters().timers_cancelled, 1u);
}

TEST(SimulatorTest, CancelAfterRunReturnsFalseEvenIfSlotWasReused) {
  Simulator sim;
  int a = 0, b = 0;
  auto first = sim.Schedule(TimeNs(1), [&] { ++a; });
  sim.RunUntilIdle();
  auto second = sim.Schedule(TimeNs(2), [&] { ++b; });  // reuses the slot
  EXPECT_FALSE(sim.Cancel(first));
  sim.RunUntilIdle();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  EXPECT_FALSE(sim.Cancel(second));
}

TEST(SimulatorTest, CallbacksMayScheduleMoreEvents) {
  Simulator sim;
  int count = 0;
  std::function<void()> tick = [&] {
    if (++count < 10) sim.ScheduleAfter(DurationNs(5), tick);
  };
  sim.Schedule(TimeNs(0), tick);
  sim.RunUntilIdle();
  EXPECT_EQ(count, 10);
  EXPECT_EQ(sim.now().ns(), 45);
}

TEST(SimulatorTest, EventInThePastIsClampedToNow) {
  Simulator sim;
  sim.RunUntil(TimeNs(100));
  TimeNs ran_at;
  sim.Schedule(TimeNs(5), [&] { ran_at = sim.now(); });
  sim.RunUntilIdle();
  EXPECT_EQ(ran_at.ns(), 100);
  EXPECT_EQ(sim.counters().scheduled_in_past, 1u);
}

TEST(SimulatorTest, RawEventsInterleaveWithTimersByTimeThenOrder) {
  Simulator sim;
  std::vector<uint64_t> seen;
  struct Ctx {
    std::vector<uint64_t>* seen;
  } ctx{&seen};
  auto fn = [](void* obj, uint64_t arg) {
    static_cast<Ctx*>(obj)->seen->push_back(arg);
  };
  sim.ScheduleRaw(TimeNs(5), fn, &ctx, 1);
  sim.Schedule(TimeNs(5), [&] { seen.push_back(2); });
  sim.ScheduleRaw(TimeNs(3), fn, &ctx, 0);
  sim.RunUntilIdle();
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 1, 2}));
}

TEST(SimulatorTest, RunUntilIdleHonoursTheEventLimit) {
  Simulator sim;
  std::function<void()> forever = [&] {
    sim.ScheduleAfter(DurationNs(1), forever);
  };
  sim.Schedule(TimeNs(0), forever);
  EXPECT_FALSE(sim.RunUntilIdle(1000));
  EXPECT_EQ(sim.counters().events_run, 1000u);
}

TEST(SimulatorTest, SameSeedGivesSameComponentSeeds) {
  Simulator a(SimulatorOptions{.seed = 42});
  Simulator b(SimulatorOptions{.seed = 42});
  Simulator c(SimulatorOptions{.seed = 43});
  const uint64_t a1 = a.NextSeed();
  EXPECT_EQ(a1, b.NextSeed());
  EXPECT_NE(a1, c.NextSeed());
}

TEST(SimulatorTest, ManyRandomTimesComeOutSorted) {
  Simulator sim;
  Rng rng(7);
  int64_t last = -1;
  uint64_t last_seq_at_time = 0;
  bool sorted = true;
  for (uint64_t i = 0; i < 5000; ++i) {
    const int64_t t = static_cast<int64_t>(rng.Uniform(1000));
    sim.Schedule(TimeNs(t), [&, t, i] {
      if (t < last || (t == last && i < last_seq_at_time)) sorted = false;
      last = t;
      last_seq_at_time = i;
    });
  }
  sim.RunUntilIdle();
  EXPECT_TRUE(sorted);
}

// Records the order raw events ran in.
struct Log {
  std::vector<uint64_t> order;
  static void Note(void* self, uint64_t arg) {
    static_cast<Log*>(self)->order.push_back(arg);
  }
};

TEST(SimulatorTest, RankedEventRunsWhereItsRankWasReservedAmongEqualTimes) {
  Simulator sim;
  Log log;
  sim.ScheduleRaw(TimeNs(10), &Log::Note, &log, 1);
  const uint64_t rank = sim.ReserveRank();  // between events 1 and 3
  sim.ScheduleRaw(TimeNs(10), &Log::Note, &log, 3);
  sim.ScheduleRaw(TimeNs(5), &Log::Note, &log, 0);
  sim.ScheduleRanked(TimeNs(10), rank, &Log::Note, &log, 2);
  sim.RunUntilIdle();
  EXPECT_EQ(log.order, (std::vector<uint64_t>{0, 1, 2, 3}));
}

TEST(SimulatorTest, EventsDueNowRunAfterLowerRankedOnesOfTheSameTime) {
  Simulator sim;
  Log log;
  const uint64_t early = sim.ReserveRank();
  // At time 10 event 1 schedules two events for now: a ranked one reserved
  // before it (runs first) and a plain one (runs after everything queued).
  struct Ctx {
    Simulator* sim;
    Log* log;
    uint64_t early;
  } ctx{&sim, &log, early};
  sim.ScheduleRaw(
      TimeNs(10),
      [](void* c, uint64_t) {
        auto* x = static_cast<Ctx*>(c);
        x->log->order.push_back(1);
        x->sim->ScheduleRaw(x->sim->now(), &Log::Note, x->log, 4);
        x->sim->ScheduleRanked(x->sim->now(), x->early, &Log::Note, x->log, 2);
      },
      &ctx, 0);
  sim.ScheduleRaw(TimeNs(10), &Log::Note, &log, 3);
  EXPECT_EQ(sim.pending_events(), 2u);
  sim.RunUntilIdle();
  EXPECT_EQ(log.order, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(sim.idle());
  EXPECT_EQ(sim.now().ns(), 10);
}

TEST(SimulatorTest, ManyEventsDueNowRunInOrderAndKeepTheClock) {
  Simulator sim;
  Log log;
  sim.RunUntil(TimeNs(100));
  for (uint64_t i = 0; i < 1000; ++i) {  // grows the due queue
    sim.ScheduleRaw(TimeNs(i % 2 == 0 ? 100 : 3), &Log::Note, &log, i);
  }
  EXPECT_EQ(sim.NextEventTime(), TimeNs(100));
  EXPECT_EQ(sim.counters().scheduled_in_past, 500u);
  sim.RunUntil(TimeNs(100));
  ASSERT_EQ(log.order.size(), 1000u);
  for (uint64_t i = 0; i < 1000; ++i) EXPECT_EQ(log.order[i], i);
  EXPECT_EQ(sim.now().ns(), 100);
}

}  // namespace
}  // namespace braid::sim

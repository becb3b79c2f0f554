#include "base/monotonic_clock.h"

#include <time.h>

#include "gtest/gtest.h"

namespace braid {
namespace {

TEST(MonotonicClockTest, ReadsClockMonotonicInNanoseconds) {
  timespec before;
  clock_gettime(CLOCK_MONOTONIC, &before);
  const TimeNs t = MonotonicNow();
  timespec after;
  clock_gettime(CLOCK_MONOTONIC, &after);
  const int64_t lo = int64_t{before.tv_sec} * 1000000000 + before.tv_nsec;
  const int64_t hi = int64_t{after.tv_sec} * 1000000000 + after.tv_nsec;
  EXPECT_GE(t.ns(), lo);
  EXPECT_LE(t.ns(), hi);
}

TEST(MonotonicClockTest, NeverGoesBack) {
  TimeNs last = MonotonicNow();
  for (int i = 0; i < 1000; ++i) {
    const TimeNs t = MonotonicNow();
    EXPECT_GE(t, last);
    last = t;
  }
}

}  // namespace
}  // namespace braid

#include "tools/fabric/port_tally.h"

#include "gtest/gtest.h"

namespace braid::fabric {
namespace {

TimeNs At(int64_t us) { return TimeNs(us * 1000); }

TEST(PortTallyTest, AllInOrderIsCompleteWithoutLoss) {
  PortTally t(3);
  for (uint32_t s = 0; s < 3; ++s) {
    t.Record(s, 100, At(s), At(s + 10), false);
  }
  EXPECT_TRUE(t.complete());
  PortReport r = t.Report(4000);
  EXPECT_EQ(r.sport, 4000);
  EXPECT_EQ(r.received, 3u);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(r.reordered, 0u);
  EXPECT_EQ(r.bytes, 300u);
  EXPECT_EQ(r.delay_min, DurationNs::Micros(10));
  EXPECT_EQ(r.delay_max, DurationNs::Micros(10));
}

TEST(PortTallyTest, MissingSequenceNumbersCountAsLost) {
  PortTally t(5);
  t.Record(0, 10, At(0), At(1), false);
  t.Record(4, 10, At(0), At(1), false);
  EXPECT_FALSE(t.complete());
  EXPECT_EQ(t.Report(1).lost, 3u);
}

TEST(PortTallyTest, DuplicateIsCountedOnceAndNotReceivedTwice) {
  PortTally t(2);
  t.Record(0, 10, At(0), At(1), false);
  t.Record(0, 10, At(0), At(2), false);
  PortReport r = t.Report(1);
  EXPECT_EQ(r.received, 1u);
  EXPECT_EQ(r.duplicates, 1u);
}

TEST(PortTallyTest, EarlierSequenceAfterLaterOneIsReordered) {
  PortTally t(3);
  t.Record(2, 10, At(0), At(1), false);
  t.Record(0, 10, At(0), At(2), false);
  t.Record(1, 10, At(0), At(3), false);
  EXPECT_EQ(t.Report(1).reordered, 2u);
}

TEST(PortTallyTest, SequenceBeyondExpectedIsOutOfRangeNotACrash) {
  PortTally t(2);
  t.Record(2, 10, At(0), At(1), false);
  t.Record(0xffffffffu, 10, At(0), At(1), false);
  PortReport r = t.Report(1);
  EXPECT_EQ(r.out_of_range, 2u);
  EXPECT_EQ(r.received, 0u);
}

TEST(PortTallyTest, CeMarksAndDelayPercentilesAreReported) {
  PortTally t(100);
  for (uint32_t s = 0; s < 100; ++s) {
    t.Record(s, 1000, At(0), At(s + 1), s % 4 == 0);
  }
  PortReport r = t.Report(1);
  EXPECT_EQ(r.ce, 25u);
  EXPECT_EQ(r.delay_min, DurationNs::Micros(1));
  EXPECT_EQ(r.delay_p50, DurationNs::Micros(50));
  EXPECT_EQ(r.delay_p99, DurationNs::Micros(99));
  EXPECT_EQ(r.delay_max, DurationNs::Micros(100));
  // 100 kB over 99 us of arrivals.
  EXPECT_NEAR(r.rate_mbps, 100000.0 * 8 / 99, 1e-6);
}

}  // namespace
}  // namespace braid::fabric

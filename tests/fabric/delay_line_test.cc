#include "tools/fabric/delay_line.h"

#include "gtest/gtest.h"

namespace braid::fabric {
namespace {

TEST(DelayLineTest, PacketIsReleasedExactlyAfterTheDelay) {
  DelayLine line(4, DurationNs::Micros(100));
  ASSERT_TRUE(line.Push(7, TimeNs(1000)));
  EXPECT_EQ(line.NextDue(), TimeNs(101000));
  uint32_t id = 0;
  EXPECT_FALSE(line.PopDue(TimeNs(100999), &id));
  ASSERT_TRUE(line.PopDue(TimeNs(101000), &id));
  EXPECT_EQ(id, 7u);
  EXPECT_EQ(line.NextDue(), TimeNs::Infinite());
}

TEST(DelayLineTest, ReleaseKeepsArrivalOrder) {
  DelayLine line(8, DurationNs::Micros(10));
  for (uint32_t i = 0; i < 5; ++i) ASSERT_TRUE(line.Push(i, TimeNs(i)));
  uint32_t id = 0;
  for (uint32_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(line.PopDue(TimeNs(1000000), &id));
    EXPECT_EQ(id, i);
  }
  EXPECT_FALSE(line.PopDue(TimeNs(1000000), &id));
}

TEST(DelayLineTest, FullLineRefusesAndStaysIntact) {
  DelayLine line(2, DurationNs::Micros(10));
  ASSERT_TRUE(line.Push(1, TimeNs(0)));
  ASSERT_TRUE(line.Push(2, TimeNs(0)));
  EXPECT_FALSE(line.Push(3, TimeNs(0)));
  EXPECT_EQ(line.size(), 2u);
  uint32_t id = 0;
  ASSERT_TRUE(line.PopAny(&id));
  EXPECT_EQ(id, 1u);
  EXPECT_TRUE(line.Push(3, TimeNs(5)));  // wraps around the ring
  ASSERT_TRUE(line.PopAny(&id));
  EXPECT_EQ(id, 2u);
  ASSERT_TRUE(line.PopAny(&id));
  EXPECT_EQ(id, 3u);
  EXPECT_FALSE(line.PopAny(&id));
}

TEST(DelayLineTest, PopAnyIgnoresDueTimeForShutdown) {
  DelayLine line(2, DurationNs::Seconds(10));
  ASSERT_TRUE(line.Push(9, TimeNs(0)));
  uint32_t id = 0;
  EXPECT_FALSE(line.PopDue(TimeNs(1), &id));
  ASSERT_TRUE(line.PopAny(&id));
  EXPECT_EQ(id, 9u);
}

}  // namespace
}  // namespace braid::fabric

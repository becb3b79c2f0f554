#include "retransmit/path_timer_queue.h"

#include <vector>

#include "gtest/gtest.h"

namespace braid::retransmit {
namespace {

using wire::PathId;

TimeNs T(int64_t us) { return TimeNs(us * 1000); }

TEST(PathTimerQueueTest, DuePathsPopInTimeOrder) {
  PathTimerQueue q;
  q.Schedule(3, T(30));
  q.Schedule(1, T(10));
  q.Schedule(2, T(20));
  EXPECT_EQ(q.NextTime(), T(10));
  PathId p;
  EXPECT_FALSE(q.PopDue(T(9), &p));
  ASSERT_TRUE(q.PopDue(T(25), &p));
  EXPECT_EQ(p, 1);
  ASSERT_TRUE(q.PopDue(T(25), &p));
  EXPECT_EQ(p, 2);
  EXPECT_FALSE(q.PopDue(T(25), &p));
  EXPECT_EQ(q.NextTime(), T(30));
}

TEST(PathTimerQueueTest, EarlierScheduleSupersedesLaterOne) {
  PathTimerQueue q;
  q.Schedule(5, T(50));
  q.Schedule(5, T(20));
  q.Schedule(5, T(40));  // later than the live entry: ignored
  PathId p;
  ASSERT_TRUE(q.PopDue(T(100), &p));
  EXPECT_EQ(p, 5);
  EXPECT_FALSE(q.PopDue(T(100), &p));  // the 50us entry was superseded
}

TEST(PathTimerQueueTest, ParkedPathIsReleasedOnceALaterSendArrived) {
  PathTimerQueue q;
  q.Park(7, 100);
  q.Park(8, 50);
  PathId p;
  EXPECT_FALSE(q.PopReleased(50, &p));  // index 50 itself arrived: not later
  ASSERT_TRUE(q.PopReleased(51, &p));
  EXPECT_EQ(p, 8);
  EXPECT_FALSE(q.PopReleased(51, &p));
  ASSERT_TRUE(q.PopReleased(1000, &p));
  EXPECT_EQ(p, 7);
  q.Park(7, 200);  // may park again once released
  ASSERT_TRUE(q.PopReleased(201, &p));
}

TEST(PathTimerQueueTest, AckParkedPathsAreHandedOverOnce) {
  PathTimerQueue q;
  q.ParkUntilNextAck(4);
  q.ParkUntilNextAck(4);
  q.ParkUntilNextAck(9);
  std::vector<PathId> out;
  q.TakeAckParked(&out);
  EXPECT_EQ(out, (std::vector<PathId>{4, 9}));
  q.TakeAckParked(&out);
  EXPECT_TRUE(out.empty());
}

TEST(PathTimerQueueTest, ClearForgetsEverything) {
  PathTimerQueue q;
  q.Schedule(1, T(1));
  q.Park(2, 1);
  q.ParkUntilNextAck(3);
  q.Clear();
  PathId p;
  EXPECT_EQ(q.NextTime(), TimeNs::Infinite());
  EXPECT_FALSE(q.PopDue(T(100), &p));
  EXPECT_FALSE(q.PopReleased(100, &p));
  std::vector<PathId> out;
  q.TakeAckParked(&out);
  EXPECT_TRUE(out.empty());
  q.Schedule(1, T(5));  // usable again
  ASSERT_TRUE(q.PopDue(T(5), &p));
}

}  // namespace
}  // namespace braid::retransmit

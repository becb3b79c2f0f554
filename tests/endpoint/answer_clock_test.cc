#include "endpoint/answer_clock.h"

#include "gtest/gtest.h"

namespace braid::endpoint {
namespace {

TimeNs At(int64_t us) { return TimeNs(us * 1000); }

TEST(AnswerClockTest, HoldsWhileAnswersComeWithinTheLimit) {
  AnswerClock c(DurationNs::Micros(10));
  for (int i = 0; i < 100; ++i) {
    c.Handed(At(100 * i));
    c.Returned(At(100 * i + 3));
  }
  EXPECT_TRUE(c.MayHold());
  EXPECT_EQ(c.estimate(), DurationNs::Micros(3));
}

TEST(AnswerClockTest, NothingIsHeldBeforeTheFirstAnswer) {
  AnswerClock c(DurationNs::Micros(10));
  EXPECT_FALSE(c.MayHold());
  EXPECT_TRUE(c.estimate().IsInfinite());
  c.Handed(At(0));
  EXPECT_FALSE(c.MayHold());  // handed, not yet answered
  c.Returned(At(4));
  EXPECT_TRUE(c.MayHold());
  EXPECT_EQ(c.estimate(), DurationNs::Micros(4));
}

TEST(AnswerClockTest, OneSlowAnswerStopsHoldingAtOnce) {
  AnswerClock c(DurationNs::Micros(10));
  c.Handed(At(0));
  c.Returned(At(1));
  ASSERT_TRUE(c.MayHold());
  c.Handed(At(100));
  c.Returned(At(1700));  // 1.6 ms of work between receive and reply
  EXPECT_FALSE(c.MayHold());
}

TEST(AnswerClockTest, FastAnswersBringItBackGradually) {
  AnswerClock c(DurationNs::Micros(10));
  c.Handed(At(0));
  c.Returned(At(100));
  int answers = 0;
  int64_t t = 1000;
  while (!c.MayHold()) {
    c.Handed(At(t));
    c.Returned(At(t + 2));
    t += 100;
    ++answers;
    ASSERT_LT(answers, 100);
  }
  // 100 us -> <= 10 us at 1/8 of the difference per answer: ~18 answers,
  // so a single quick answer does not start holding again.
  EXPECT_GT(answers, 10);
}

TEST(AnswerClockTest, OnlyTheFirstCallAfterAHandOffCounts) {
  AnswerClock c(DurationNs::Micros(10));
  c.Returned(At(50));  // nothing handed: no sample
  EXPECT_FALSE(c.MayHold());
  c.Handed(At(100));
  c.Returned(At(102));
  c.Returned(At(5000));  // a later call, not an answer to the hand-off
  EXPECT_TRUE(c.MayHold());
  EXPECT_EQ(c.estimate(), DurationNs::Micros(2));
}

}  // namespace
}  // namespace braid::endpoint

#include "base/answer_clock.h"

#include "gtest/gtest.h"

namespace braid {
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

TEST(AnswerClockTest, HoldsThroughPollsWhileAnswersComeInTime) {
  AnswerClock c(DurationNs::Micros(10));
  int answers = 0;
  for (; !c.MayHoldThroughPolls(); ++answers) {
    ASSERT_LT(answers, 10);
    c.Handed(At(100 * answers));
    EXPECT_TRUE(c.awaiting());
    c.Returned(At(100 * answers + 1));  // polls in between: no answer
    c.Answered(At(100 * answers + 3));
    EXPECT_FALSE(c.awaiting());
  }
  EXPECT_EQ(answers, 4);  // not on the first answer
  EXPECT_EQ(c.limit(), DurationNs::Micros(10));
  EXPECT_EQ(c.estimate(), DurationNs::Micros(1));  // the first call counts
}

TEST(AnswerClockTest, HoldsThatDoNotPayStopHoldingThroughPolls) {
  AnswerClock c(DurationNs::Micros(10));
  for (int i = 0; i < 8; ++i) {
    c.Handed(At(100 * i));
    c.Answered(At(100 * i + 2));
  }
  ASSERT_TRUE(c.MayHoldThroughPolls());
  // One in two answered in time: below two in three, holding stops.
  int t = 1000;
  for (int i = 0; i < 6; ++i, t += 100) {
    c.Handed(At(t));
    c.HoldExpired();
    c.HoldExpired();  // one miss per hand-off
    c.Handed(At(t + 50));
    c.Answered(At(t + 52));
  }
  EXPECT_FALSE(c.MayHoldThroughPolls());
  // An answer later than the limit is a miss as well.
  AnswerClock d(DurationNs::Micros(10));
  for (int i = 0; i < 8; ++i) {
    d.Handed(At(100 * i));
    d.Answered(At(100 * i + 2));
  }
  for (int i = 0; i < 3; ++i) {
    d.Handed(At(1000 + 100 * i));
    d.Answered(At(1000 + 100 * i + 20));
  }
  EXPECT_FALSE(d.MayHoldThroughPolls());
}

TEST(AnswerClockTest, AnApplicationThatNeverAnswersIsNeverHeldThroughPolls) {
  AnswerClock c(DurationNs::Micros(10));
  for (int i = 0; i < 100; ++i) {  // a bulk receiver polls
    c.Handed(At(i));
    c.Returned(At(i + 1));
  }
  EXPECT_TRUE(c.MayHold());  // it comes back at once
  EXPECT_FALSE(c.MayHoldThroughPolls());
}

}  // namespace
}  // namespace braid

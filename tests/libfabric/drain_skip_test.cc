#include "libfabric/drain_skip.h"

#include <chrono>

#include "gtest/gtest.h"

namespace braid::libfabric {
namespace {

using std::chrono::nanoseconds;

class DrainSkipTest : public ::testing::Test {
 protected:
  DrainSkip::Time At(int64_t ns) const { return t0_ + nanoseconds(ns); }
  auto Now(int64_t ns) const {
    return [this, ns] { return At(ns); };
  }
  DrainSkip d_;
  DrainSkip::Time t0_ = std::chrono::steady_clock::now();
};

TEST_F(DrainSkipTest, TheReadRightAfterADrainSkipsOnce) {
  d_.OnProgressedRead(/*drained=*/true, 7, Now(0));
  EXPECT_TRUE(d_.Skip(7, Now(300)));
  EXPECT_FALSE(d_.Skip(7, Now(400)));  // the next read progresses
}

TEST_F(DrainSkipTest, NothingToSkipWithoutADrain) {
  EXPECT_FALSE(d_.Skip(0, Now(0)));
  // Progressed but found nothing, or left entries behind.
  d_.OnProgressedRead(/*drained=*/false, 7, Now(0));
  EXPECT_FALSE(d_.Skip(7, Now(100)));
}

TEST_F(DrainSkipTest, ACallOnTheEndpointsInBetweenProgresses) {
  d_.OnProgressedRead(true, 7, Now(0));
  EXPECT_FALSE(d_.Skip(8, Now(100)));  // e.g. a send the next pass must push
}

TEST_F(DrainSkipTest, AReadAfterTheWindowProgresses) {
  const int64_t w = DrainSkip::kWindow.count();
  d_.OnProgressedRead(true, 7, Now(0));
  EXPECT_FALSE(d_.Skip(7, Now(w)));
  d_.OnProgressedRead(true, 7, Now(0));
  EXPECT_TRUE(d_.Skip(7, Now(w - 1)));
}

TEST_F(DrainSkipTest, TheClockIsReadOnlyWhenItDecides) {
  int reads = 0;
  auto counting = [&] {
    ++reads;
    return At(0);
  };
  d_.OnProgressedRead(false, 1, counting);
  EXPECT_FALSE(d_.Skip(1, counting));
  EXPECT_EQ(reads, 0);
  d_.OnProgressedRead(true, 1, counting);
  EXPECT_TRUE(d_.Skip(1, counting));
  EXPECT_EQ(reads, 2);
}

}  // namespace
}  // namespace braid::libfabric

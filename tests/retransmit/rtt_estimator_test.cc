#include "retransmit/rtt_estimator.h"

#include "gtest/gtest.h"

namespace braid::retransmit {
namespace {

constexpr DurationNs Us(int64_t n) { return DurationNs::Micros(n); }

TEST(RttEstimatorTest, InitialEstimateComesFromInitialRtt) {
  RttEstimator e(Us(100));
  EXPECT_FALSE(e.has_sample());
  EXPECT_EQ(e.srtt(), Us(100));
  EXPECT_EQ(e.rttvar(), Us(50));
  EXPECT_EQ(e.Rto(Us(1), DurationNs::Millis(100)), Us(300));
}

TEST(RttEstimatorTest, FirstSampleReplacesInitialEstimate) {
  RttEstimator e(Us(100));
  EXPECT_TRUE(e.AddSample(Us(20)));
  EXPECT_TRUE(e.has_sample());
  EXPECT_EQ(e.srtt(), Us(20));
  EXPECT_EQ(e.rttvar(), Us(10));
  EXPECT_EQ(e.min_rtt(), Us(20));
  EXPECT_EQ(e.latest(), Us(20));
}

TEST(RttEstimatorTest, LaterSamplesUseRfc6298Gains) {
  RttEstimator e(Us(100));
  e.AddSample(Us(80));
  e.AddSample(Us(160));
  // rttvar = 3/4 * 40 + 1/4 * |80 - 160| = 50; srtt = 7/8 * 80 + 1/8 * 160.
  EXPECT_EQ(e.rttvar(), Us(50));
  EXPECT_EQ(e.srtt(), Us(90));
  EXPECT_EQ(e.min_rtt(), Us(80));
  EXPECT_EQ(e.latest(), Us(160));
}

TEST(RttEstimatorTest, NonPositiveSampleIsIgnored) {
  RttEstimator e(Us(100));
  EXPECT_FALSE(e.AddSample(DurationNs::Zero()));
  EXPECT_FALSE(e.AddSample(Us(-5)));
  EXPECT_FALSE(e.has_sample());
  EXPECT_EQ(e.srtt(), Us(100));
}

TEST(RttEstimatorTest, RtoIsClampedToFloorAndCeiling) {
  RttEstimator e(Us(100));
  e.AddSample(Us(10));  // srtt 10 + 4 * 5 = 30
  EXPECT_EQ(e.Rto(Us(200), Us(1000)), Us(200));
  EXPECT_EQ(e.Rto(Us(1), Us(1000)), Us(30));
  EXPECT_EQ(e.Rto(Us(1), Us(25)), Us(25));
}

TEST(RttEstimatorTest, ResetForgetsSamples) {
  RttEstimator e(Us(100));
  e.AddSample(Us(10));
  e.Reset(Us(40));
  EXPECT_FALSE(e.has_sample());
  EXPECT_EQ(e.srtt(), Us(40));
  EXPECT_EQ(e.min_rtt(), Us(40));
}

}  // namespace
}  // namespace braid::retransmit

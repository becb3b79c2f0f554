#include "tools/braid_perf/histogram.h"

#include <cmath>

#include "gtest/gtest.h"

namespace braid::perf {
namespace {

TEST(HistogramTest, EmptyHistogramReportsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Quantile(0.5), 0);
  EXPECT_EQ(h.min(), 0);
}

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram h;
  for (int v = 1; v <= 50; ++v) h.Add(v);
  EXPECT_EQ(h.Quantile(0.5), 25);
  EXPECT_EQ(h.Quantile(1.0), 50);
  EXPECT_EQ(h.min(), 1);
  EXPECT_DOUBLE_EQ(h.mean(), 25.5);
}

TEST(HistogramTest, QuantilesOfAUniformRangeAreWithinTwoPercent) {
  Histogram h;
  for (int64_t v = 1; v <= 1000000; ++v) h.Add(v * 10);  // 10 ns .. 10 ms
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double want = q * 1e7;
    EXPECT_NEAR(h.Quantile(q), want, want * 0.02) << q;
  }
}

TEST(HistogramTest, QuantilesOfABoundedRunAreTheNearestRankSample) {
  // 11123 ns and 11187 ns share a histogram bucket; kept samples tell them
  // apart, the way udp-blast's sorted samples do.
  Histogram h;
  for (int i = 0; i < 60; ++i) h.Add(11123);
  for (int i = 0; i < 40; ++i) h.Add(11187);
  EXPECT_TRUE(h.exact());
  EXPECT_EQ(h.Quantile(0.60), 11123);
  EXPECT_EQ(h.Quantile(0.61), 11187);
  EXPECT_EQ(h.Quantile(0.0), 11123);
  h.Add(5);  // unsorted again: the next query re-sorts
  EXPECT_EQ(h.Quantile(0.0), 5);
}

TEST(HistogramTest, RunsLongerThanTheSampleStoreFallBackToBuckets) {
  Histogram h;
  for (size_t i = 0; i < Histogram::kExactSamples; ++i) h.Add(1000);
  EXPECT_TRUE(h.exact());
  for (int i = 0; i < 10; ++i) h.Add(1000);
  EXPECT_FALSE(h.exact());
  EXPECT_NEAR(h.Quantile(0.5), 1000, 16);
  h.Clear();
  EXPECT_TRUE(h.exact());
  h.Add(7);
  EXPECT_EQ(h.Quantile(0.5), 7);
}

TEST(HistogramTest, TailQuantileSeesTheOutlier) {
  Histogram h;
  for (int i = 0; i < 999; ++i) h.Add(10000);
  h.Add(5000000);
  EXPECT_NEAR(h.Quantile(0.5), 10000, 200);
  EXPECT_NEAR(h.Quantile(0.9995), 5000000, 100000);
  EXPECT_EQ(h.max(), 5000000);
}

TEST(HistogramTest, HugeAndNegativeSamplesAreClamped) {
  Histogram h;
  h.Add(-5);
  h.Add(INT64_MAX);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.Quantile(0.1), 0);
}

}  // namespace
}  // namespace braid::perf

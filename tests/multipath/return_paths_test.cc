#include "multipath/return_paths.h"

#include "gtest/gtest.h"

namespace braid::multipath {
namespace {

DurationNs Us(int64_t us) { return DurationNs::Micros(us); }

// `rounds` samples on each of ports 1000..1000+n-1, port p's excess given
// by f(p); returns whether the last sample of `watch` was judged slow.
template <typename F>
bool Feed(ReturnPaths& rp, int n, int rounds, F f, uint16_t watch) {
  bool slow = false;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < n; ++i) {
      const auto port = static_cast<uint16_t>(1000 + i);
      const bool s = rp.Observe(port, f(port));
      if (port == watch) slow = s;
    }
  }
  return slow;
}

TEST(ReturnPathsTest, OneSlowReturnPortIsToldApart) {
  ReturnPaths rp;
  const bool slow = Feed(
      rp, 8, 10, [](uint16_t p) { return p == 1003 ? Us(200) : Us(5); }, 1003);
  EXPECT_TRUE(slow);
  EXPECT_TRUE(rp.IsSlow(1003));
  for (uint16_t p = 1000; p < 1008; ++p) {
    if (p != 1003) {
      EXPECT_FALSE(rp.IsSlow(p)) << p;
    }
  }
  EXPECT_EQ(rp.judged_ports(), 8);
  EXPECT_EQ(rp.reference_excess(), Us(5));
}

TEST(ReturnPathsTest, ADelaySharedByNearlyEveryPortIsNotTheReturnPath) {
  // Seven of eight ports slow: the fastest quarter is slow too (a queue
  // every ack crosses, or forward queueing): nothing is filtered.
  ReturnPaths rp;
  Feed(
      rp, 8, 10, [](uint16_t p) { return p < 1007 ? Us(300) : Us(5); }, 0);
  for (uint16_t p = 1000; p < 1008; ++p) EXPECT_FALSE(rp.IsSlow(p)) << p;
}

TEST(ReturnPathsTest, SlowPortsAreToldApartEvenWhenTheyAreTheMajority) {
  // Five of eight ports on a slow spine (a receiver's entropies hash
  // unevenly): judged against the fastest quarter, not the median.
  ReturnPaths rp;
  Feed(
      rp, 8, 10, [](uint16_t p) { return p < 1005 ? Us(300) : Us(5); }, 0);
  for (uint16_t p = 1000; p < 1008; ++p) {
    EXPECT_EQ(rp.IsSlow(p), p < 1005) << p;
  }
}

TEST(ReturnPathsTest, WithinFactorOrMarginIsOrdinaryVariation) {
  ReturnPaths rp;
  // 3x the reference but only 40 us above it: under the 50 us margin.
  Feed(
      rp, 8, 10, [](uint16_t p) { return p == 1002 ? Us(60) : Us(20); }, 0);
  EXPECT_FALSE(rp.IsSlow(1002));
  // 100 us above a reference of 200: under the factor 2.
  ReturnPaths rp2;
  Feed(
      rp2, 8, 10, [](uint16_t p) { return p == 1002 ? Us(300) : Us(200); }, 0);
  EXPECT_FALSE(rp2.IsSlow(1002));
}

TEST(ReturnPathsTest, NeedsThreeJudgedPortsAndEnoughSamples) {
  ReturnPaths two;
  Feed(
      two, 2, 10, [](uint16_t p) { return p == 1001 ? Us(500) : Us(5); }, 0);
  EXPECT_FALSE(two.IsSlow(1001));  // with two ports neither is "the rest"
  ReturnPaths young;
  Feed(
      young, 8, 3, [](uint16_t p) { return p == 1001 ? Us(500) : Us(5); }, 0);
  EXPECT_EQ(young.judged_ports(), 0);  // 3 samples each, 4 needed
  EXPECT_FALSE(young.IsSlow(1001));
  EXPECT_FALSE(young.IsSlow(4242));  // never seen
}

TEST(ReturnPathsTest, NegativeExcessCountsAsZeroAndOffMeansOff) {
  ReturnPaths rp;
  Feed(
      rp, 8, 10, [](uint16_t) { return Us(-30); }, 0);
  EXPECT_EQ(rp.reference_excess(), DurationNs::Zero());
  ReturnPathOptions o;
  o.factor = 0;
  ReturnPaths off(o);
  EXPECT_FALSE(Feed(
      off, 8, 10, [](uint16_t p) { return p == 1003 ? Us(900) : Us(5); },
      1003));
}

TEST(ReturnPathsTest, AFreshPortIsJudgedByItsSampleAlone) {
  // The receiver moved an ack path to a fresh entropy: its first samples
  // have no history; each is judged by itself against the reference.
  ReturnPaths rp;
  Feed(
      rp, 8, 10, [](uint16_t) { return Us(5); }, 0);
  EXPECT_TRUE(rp.Observe(3000, Us(400)));
  EXPECT_FALSE(rp.Observe(3001, Us(20)));
  EXPECT_FALSE(rp.IsSlow(3000));  // not judged as a port yet (1 sample)
  // Without three judged ports there is no reference to judge by.
  ReturnPaths empty;
  EXPECT_FALSE(empty.Observe(3000, Us(400)));
}

TEST(ReturnPathsTest, NewPortsReplaceTheLeastRecentlyUsedOnes) {
  ReturnPaths rp;
  // 64 ports fill the table; 64 more replace them all (a receiver whose
  // entropies were all recycled): the old ports are forgotten.
  for (int i = 0; i < 2 * ReturnPaths::kCapacity; ++i) {
    for (int k = 0; k < 4; ++k) {
      rp.Observe(static_cast<uint16_t>(2000 + i), i == 70 ? Us(400) : Us(5));
    }
  }
  EXPECT_EQ(rp.judged_ports(), ReturnPaths::kCapacity);
  EXPECT_TRUE(rp.IsSlow(2070));
  EXPECT_FALSE(rp.IsSlow(2000));  // gone: unknown ports are not slow
  rp.Reset();
  EXPECT_EQ(rp.judged_ports(), 0);
  EXPECT_FALSE(rp.IsSlow(2070));
}

}  // namespace
}  // namespace braid::multipath

// Tests for braid::Rng: reproducible streams, range of Uniform, and a rough
// check that the output is uniform (fixed seeds, so the test is exact).
#include "base/rng.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace braid {
namespace {

std::vector<uint64_t> Draw(Rng& rng, int n) {
  std::vector<uint64_t> v(n);
  for (auto& x : v) x = rng.Next();
  return v;
}

// Pearson chi-square of `counts` against a uniform expectation.
double ChiSquare(const std::vector<int>& counts, int total) {
  const double expect = static_cast<double>(total) / counts.size();
  double chi2 = 0;
  for (int c : counts) chi2 += (c - expect) * (c - expect) / expect;
  return chi2;
}

TEST(RngTest, StreamMatchesXoshiro256StarStarSeededBySplitMix64) {
  // Reference values computed by an independent implementation of the
  // published algorithms; they pin the stream so seeded scenarios and golden
  // outputs stay reproducible across releases.
  Rng one(1);
  EXPECT_EQ(one.Next(), 0xb3f2af6d0fc710c5ULL);
  EXPECT_EQ(one.Next(), 0x853b559647364ceaULL);
  EXPECT_EQ(one.Next(), 0x92f89756082a4514ULL);
  EXPECT_EQ(one.Next(), 0x642e1c7bc266a3a7ULL);
  Rng zero(0);
  EXPECT_EQ(zero.Next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(zero.Next(), 0xbf6e1f784956452aULL);
  Rng other(0xdeadbeef);
  EXPECT_EQ(other.Next(), 0xc5555444a74d7e83ULL);
  EXPECT_EQ(other.Next(), 0x65c30d37b4b16e38ULL);
}

TEST(RngTest, SameSeedGivesTheSameStream) {
  Rng a(42);
  Rng b(42);
  EXPECT_EQ(Draw(a, 1000), Draw(b, 1000));
}

TEST(RngTest, DefaultSeedIsOne) {
  Rng a;
  Rng b(1);
  EXPECT_EQ(Draw(a, 100), Draw(b, 100));
}

TEST(RngTest, ReseedingRestartsTheStream) {
  Rng a(7);
  const std::vector<uint64_t> first = Draw(a, 100);
  a.Seed(7);
  EXPECT_EQ(Draw(a, 100), first);
}

TEST(RngTest, NearbySeedsGiveUnrelatedStreams) {
  std::set<uint64_t> firsts;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    Rng r(seed);
    firsts.insert(r.Next());
  }
  EXPECT_EQ(firsts.size(), 1000u);
  Rng a(100);
  Rng b(101);
  int equal = 0;
  for (int i = 0; i < 1000; ++i) equal += a.Next() == b.Next();
  EXPECT_EQ(equal, 0);
}

TEST(RngTest, EveryOutputBitTakesBothValues) {
  Rng r(3);
  uint64_t any = 0;
  uint64_t all = ~uint64_t{0};
  for (int i = 0; i < 256; ++i) {
    const uint64_t x = r.Next();
    any |= x;
    all &= x;
  }
  EXPECT_EQ(any, ~uint64_t{0});
  EXPECT_EQ(all, 0u);
}

TEST(RngTest, UniformStaysInRange) {
  Rng r(11);
  for (uint64_t n :
       {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{7}, uint64_t{1000},
        uint64_t{1} << 32, (uint64_t{1} << 32) + 1, ~uint64_t{0}}) {
    uint64_t max_seen = 0;
    for (int i = 0; i < 10000; ++i) {
      const uint64_t x = r.Uniform(n);
      ASSERT_LT(x, n) << "n=" << n;
      max_seen = std::max(max_seen, x);
    }
    if (n > 1 && n <= 1000) {
      EXPECT_EQ(max_seen, n - 1) << "n=" << n;
    }
  }
}

TEST(RngTest, UniformOfOneIsAlwaysZero) {
  Rng r(5);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(r.Uniform(1), 0u);
}

TEST(RngTest, UniformIsRoughlyUniformOverSmallRanges) {
  for (uint64_t seed : {1, 2, 3}) {
    for (int n : {2, 10, 64, 1000}) {
      Rng r(seed);
      std::vector<int> counts(n, 0);
      const int total = n * 200;
      for (int i = 0; i < total; ++i) ++counts[r.Uniform(n)];
      // Far beyond the 1e-6 tail of chi-square with n-1 degrees of freedom
      // (mean n-1, sd sqrt(2(n-1))).
      const double limit = (n - 1) + 8 * std::sqrt(2.0 * (n - 1)) + 20;
      EXPECT_LT(ChiSquare(counts, total), limit)
          << "seed=" << seed << " n=" << n;
    }
  }
}

TEST(RngTest, UniformDoubleIsInUnitIntervalWithMeanOneHalf) {
  Rng r(9);
  double sum = 0;
  std::vector<int> deciles(10, 0);
  const int total = 100000;
  for (int i = 0; i < total; ++i) {
    const double x = r.UniformDouble();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
    ++deciles[static_cast<int>(x * 10)];
  }
  EXPECT_NEAR(sum / total, 0.5, 0.005);
  EXPECT_LT(ChiSquare(deciles, total), 40.0);
}

TEST(RngTest, BernoulliMatchesItsProbability) {
  Rng r(13);
  int hits = 0;
  for (int i = 0; i < 100000; ++i) hits += r.Bernoulli(0.25);
  EXPECT_NEAR(hits / 100000.0, 0.25, 0.01);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(r.Bernoulli(0.0));
    ASSERT_TRUE(r.Bernoulli(1.0));
  }
}

}  // namespace
}  // namespace braid

#include "multipath/rate_decay.h"

#include <cmath>

#include "gtest/gtest.h"

namespace braid::multipath {
namespace {

TEST(RateDecayTest, NOutcomesAtOnceEqualNOneByOne) {
  const double gain = 1.0 / 128;
  const RateDecay decay(gain);
  for (uint32_t n : {0u, 1u, 2u, 17u, 63u, 64u, 65u, 130u, 300u}) {
    double one_by_one = 0.5;
    for (uint32_t i = 0; i < n; ++i) one_by_one *= 1 - gain;
    EXPECT_NEAR(decay.Apply(0.5, n), one_by_one, one_by_one * 1e-12)
        << "n=" << n;
  }
}

TEST(RateDecayTest, ZeroStaysZero) {
  const RateDecay decay(1.0 / 32);
  EXPECT_EQ(decay.Apply(0.0, 1), 0.0);
  EXPECT_EQ(decay.Apply(0.0, 64), 0.0);
}

TEST(RateDecayTest, ClearsToZeroWithoutPassingThroughSubnormals) {
  // One loss (rate = gain), then clean outcomes one at a time: the rate
  // reaches exactly 0 after about ln(1e-9 / gain) / ln(1 - gain) steps and
  // is never subnormal on the way.
  const double gain = 1.0 / 128;
  const RateDecay decay(gain);
  double rate = gain;
  int steps = 0;
  while (rate != 0 && steps < 100000) {
    rate = decay.Apply(rate, 1);
    ASSERT_NE(std::fpclassify(rate), FP_SUBNORMAL) << "step " << steps;
    ASSERT_TRUE(rate == 0 || rate >= RateDecay::kNegligible);
    ++steps;
  }
  EXPECT_EQ(rate, 0.0);
  const double expected =
      std::log(RateDecay::kNegligible / gain) / std::log(1 - gain);
  EXPECT_NEAR(steps, expected, 2);
}

TEST(RateDecayTest, GainOfOneClearsAtOnce) {
  const RateDecay decay(1.0);
  EXPECT_EQ(decay.Apply(0.7, 1), 0.0);
  EXPECT_EQ(decay.Apply(0.7, 0), 0.7);
}

}  // namespace
}  // namespace braid::multipath

#include "reorder/coverage.h"

#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"

namespace braid::reorder {
namespace {

TEST(CoverageTest, InOrderRangesMergeIntoOne) {
  Coverage c;
  for (uint32_t i = 0; i < 100; ++i) EXPECT_TRUE(c.Insert(i * 10, i * 10 + 10));
  EXPECT_EQ(c.covered_bytes(), 1000u);
  EXPECT_EQ(c.ranges(), 1u);
  EXPECT_EQ(c.heap_bytes(), 0u);
}

TEST(CoverageTest, HoleFilledFromBothSidesMerges) {
  Coverage c;
  EXPECT_TRUE(c.Insert(0, 10));
  EXPECT_TRUE(c.Insert(20, 30));
  EXPECT_EQ(c.ranges(), 2u);
  EXPECT_TRUE(c.Insert(10, 20));
  EXPECT_EQ(c.ranges(), 1u);
  EXPECT_EQ(c.covered_bytes(), 30u);
}

TEST(CoverageTest, AnyOverlapIsRefusedAndChangesNothing) {
  Coverage c;
  EXPECT_TRUE(c.Insert(10, 20));
  EXPECT_TRUE(c.Insert(30, 40));
  EXPECT_FALSE(c.Insert(10, 20));  // identical
  EXPECT_FALSE(c.Insert(15, 16));  // inside
  EXPECT_FALSE(c.Insert(5, 11));   // over the start
  EXPECT_FALSE(c.Insert(19, 25));  // over the end
  EXPECT_FALSE(c.Insert(0, 50));   // around both
  EXPECT_FALSE(c.Insert(25, 31));  // into the next range
  EXPECT_EQ(c.covered_bytes(), 20u);
  EXPECT_EQ(c.ranges(), 2u);
  EXPECT_TRUE(c.Insert(20, 30));
  EXPECT_EQ(c.ranges(), 1u);
}

TEST(CoverageTest, RandomOrderMatchesAByteMap) {
  Rng rng(5);
  for (int round = 0; round < 50; ++round) {
    const uint32_t len = 1 + static_cast<uint32_t>(rng.Next() % 5000);
    std::vector<bool> have(len, false);
    uint64_t want_bytes = 0;
    Coverage c;
    for (int i = 0; i < 300; ++i) {
      const uint32_t b = static_cast<uint32_t>(rng.Next() % len);
      const uint32_t e =
          b + 1 + static_cast<uint32_t>(rng.Next() % std::min(len - b, 200u));
      bool free = true;
      for (uint32_t k = b; k < e; ++k) free = free && !have[k];
      ASSERT_EQ(c.Insert(b, e), free) << b << ".." << e;
      if (free) {
        for (uint32_t k = b; k < e; ++k) have[k] = true;
        want_bytes += e - b;
      }
      ASSERT_EQ(c.covered_bytes(), want_bytes);
    }
    size_t runs = 0;
    for (uint32_t k = 0; k < len; ++k)
      runs += have[k] && (k == 0 || !have[k - 1]);
    EXPECT_EQ(c.ranges(), runs);
  }
}

}  // namespace
}  // namespace braid::reorder

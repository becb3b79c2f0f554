#include "backend/verbs_ud/ud_regions.h"

#include <vector>

#include "gtest/gtest.h"

namespace braid::backend {
namespace {

TEST(UdRegionsTest, FindsTheKeyOnlyForRangesWhollyInsideARegion) {
  std::vector<uint8_t> a(4096), b(4096);
  UdRegions r;
  ASSERT_TRUE(r.Add(reinterpret_cast<uintptr_t>(a.data()), a.size(), 11, &a));
  ASSERT_TRUE(r.Add(reinterpret_cast<uintptr_t>(b.data()), b.size(), 22, &b));
  EXPECT_EQ(r.Find(a.data(), 4096), 11u);
  EXPECT_EQ(r.Find(a.data() + 100, 10), 11u);
  EXPECT_EQ(r.Find(b.data() + 4000, 96), 22u);
  EXPECT_EQ(r.Find(a.data() + 4000, 97), std::nullopt);  // runs past the end
  EXPECT_EQ(r.Find(b.data() + 4000, 97), std::nullopt);
  EXPECT_EQ(r.Find(a.data() - 1, 2), std::nullopt);
  uint8_t other[8];
  EXPECT_EQ(r.Find(other, 8), std::nullopt);
}

TEST(UdRegionsTest, OverlapsAndEmptyRegionsAreRefused) {
  std::vector<uint8_t> a(4096);
  const uintptr_t p = reinterpret_cast<uintptr_t>(a.data());
  UdRegions r;
  ASSERT_TRUE(r.Add(p + 1000, 1000, 1, nullptr));
  EXPECT_FALSE(r.Add(p + 1500, 10, 2, nullptr));   // inside
  EXPECT_FALSE(r.Add(p + 500, 501, 2, nullptr));   // reaches into it
  EXPECT_FALSE(r.Add(p + 1999, 100, 2, nullptr));  // starts in it
  EXPECT_FALSE(r.Add(p, 0, 2, nullptr));
  EXPECT_TRUE(r.Add(p + 2000, 100, 3, nullptr));  // adjacent is fine
  EXPECT_TRUE(r.Add(p, 1000, 4, nullptr));
  EXPECT_EQ(r.size(), 3u);
}

TEST(UdRegionsTest, ARemovedRegionIsNoLongerFound) {
  std::vector<uint8_t> a(64);
  UdRegions r;
  int handle = 0;
  ASSERT_TRUE(r.Add(reinterpret_cast<uintptr_t>(a.data()), 64, 5, &handle));
  EXPECT_EQ(r.Find(a.data(), 8), 5u);  // remembered as the last hit
  EXPECT_EQ(r.Remove(reinterpret_cast<uintptr_t>(a.data())), &handle);
  EXPECT_EQ(r.Find(a.data(), 8), std::nullopt);
  EXPECT_EQ(r.Remove(reinterpret_cast<uintptr_t>(a.data())), nullptr);
}

}  // namespace
}  // namespace braid::backend

#include "endpoint/ring.h"

#include <memory>

#include "gtest/gtest.h"

namespace braid::endpoint {
namespace {

TEST(RingTest, KeepsFifoOrderAcrossWrapAndGrowth) {
  Ring<int> r;
  int next_in = 0, next_out = 0;
  // Interleave pushes and pops so the ring wraps, then grow it while wrapped.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7 + round; ++i) r.push_back(int{next_in++});
    for (int i = 0; i < 5 + round; ++i) {
      ASSERT_EQ(r.front(), next_out++);
      r.pop_front();
    }
  }
  ASSERT_EQ(r.size(), static_cast<size_t>(next_in - next_out));
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i], next_out + static_cast<int>(i));
  }
  EXPECT_EQ(r.back(), next_in - 1);
}

TEST(RingTest, PushFrontPutsElementsAheadInReverseOrderOfInsertion) {
  Ring<int> r;
  for (int i = 0; i < 5; ++i) r.push_back(int{i});
  for (int i = 0; i < 20; ++i) r.push_front(int{-1 - i});  // grows, wraps
  ASSERT_EQ(r.size(), 25u);
  for (int i = 0; i < 25; ++i) {
    EXPECT_EQ(r.front(), i - 20);
    r.pop_front();
  }
  EXPECT_TRUE(r.empty());
}

TEST(RingTest, SteadyTrafficDoesNotGrowTheStorage) {
  Ring<int> r;
  for (int i = 0; i < 100; ++i) r.push_back(int{i});
  const size_t cap = r.capacity();
  for (int i = 0; i < 100000; ++i) {
    r.pop_front();
    r.push_back(int{i});
  }
  EXPECT_EQ(r.capacity(), cap);
  EXPECT_EQ(r.size(), 100u);
}

TEST(RingTest, PopReleasesWhatTheElementOwned) {
  Ring<std::shared_ptr<int>> r;
  auto p = std::make_shared<int>(1);
  r.push_back(std::shared_ptr<int>(p));
  EXPECT_EQ(p.use_count(), 2);
  r.pop_front();
  EXPECT_EQ(p.use_count(), 1);
  r.push_back(std::shared_ptr<int>(p));
  r.clear();
  EXPECT_EQ(p.use_count(), 1);
}

}  // namespace
}  // namespace braid::endpoint

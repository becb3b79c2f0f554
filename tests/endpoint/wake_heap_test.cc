#include "endpoint/wake_heap.h"

#include <algorithm>
#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"

namespace braid::endpoint {
namespace {

struct Item {
  size_t heap_pos = kNotInHeap;
};

// Items 0..255, at stable addresses.
Item* Fake(size_t i) {
  static Item items[256];
  return &items[i];
}

TEST(WakeHeapTest, EmptyHeapWakesNever) {
  WakeHeap<Item> h;
  EXPECT_TRUE(h.Earliest().IsInfinite());
  std::vector<Item*> due;
  h.PopDue(TimeNs(1000000), &due);
  EXPECT_TRUE(due.empty());
}

TEST(WakeHeapTest, SetMovesAPeerAndInfiniteRemovesIt) {
  WakeHeap<Item> h;
  h.Set(Fake(1), TimeNs(50));
  h.Set(Fake(2), TimeNs(30));
  EXPECT_EQ(h.Earliest(), TimeNs(30));
  h.Set(Fake(2), TimeNs(70));  // later: peer 1 is now first
  EXPECT_EQ(h.Earliest(), TimeNs(50));
  h.Set(Fake(1), TimeNs::Infinite());
  EXPECT_EQ(Fake(1)->heap_pos, kNotInHeap);
  EXPECT_EQ(h.Earliest(), TimeNs(70));
  h.Remove(Fake(2));
  h.Remove(Fake(3));  // never there
  EXPECT_EQ(h.size(), 0u);
  EXPECT_EQ(Fake(2)->heap_pos, kNotInHeap);
}

TEST(WakeHeapTest, PopDueReturnsExactlyThePeersDueEarliestFirst) {
  WakeHeap<Item> h;
  h.Set(Fake(1), TimeNs(40));
  h.Set(Fake(2), TimeNs(10));
  h.Set(Fake(3), TimeNs(90));
  h.Set(Fake(4), TimeNs(40));
  std::vector<Item*> due;
  h.PopDue(TimeNs(40), &due);
  ASSERT_EQ(due.size(), 3u);
  EXPECT_EQ(due[0], Fake(2));
  EXPECT_TRUE((due[1] == Fake(1) && due[2] == Fake(4)) ||
              (due[1] == Fake(4) && due[2] == Fake(1)));
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(h.Earliest(), TimeNs(90));
}

TEST(WakeHeapTest, RandomUpdatesAgreeWithALinearScan) {
  WakeHeap<Item> h;
  constexpr int kPeers = 64;
  for (int i = 0; i < kPeers; ++i) Fake(i)->heap_pos = kNotInHeap;
  std::vector<TimeNs> model(kPeers, TimeNs::Infinite());
  Rng rng(7);
  for (int step = 0; step < 20000; ++step) {
    const int i = static_cast<int>(rng.Next() % kPeers);
    const uint64_t r = rng.Next() % 10;
    const TimeNs at = r == 0 ? TimeNs::Infinite()
                             : TimeNs(static_cast<int64_t>(rng.Next() % 1000));
    h.Set(Fake(i), at);
    model[i] = at;
    if (step % 97 == 0) {  // pop what is due at a random time
      const TimeNs now(static_cast<int64_t>(rng.Next() % 1000));
      std::vector<Item*> due;
      h.PopDue(now, &due);
      for (Item* p : due) {
        const int k = static_cast<int>(p - Fake(0));
        ASSERT_LE(model[k], now);
        model[k] = TimeNs::Infinite();
      }
      for (int k = 0; k < kPeers; ++k) ASSERT_FALSE(model[k] <= now) << k;
    }
    const TimeNs want = *std::min_element(model.begin(), model.end());
    ASSERT_EQ(h.Earliest(), want) << "step " << step;
  }
}

}  // namespace
}  // namespace braid::endpoint

#include "verbs_compat/mr_keys.h"

#include <cstdint>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace braid::verbs_compat {
namespace {

// A key source that returns `draws` in turn, then fails.
KeyRandom Scripted(std::deque<uint32_t> draws) {
  return [d = std::move(draws)](uint32_t* key) mutable {
    if (d.empty()) return false;
    *key = d.front();
    d.pop_front();
    return true;
  };
}

// A key source counting up from `first`.
KeyRandom Counting(uint32_t first) {
  return [n = first](uint32_t* key) mutable {
    *key = n++;
    return true;
  };
}

TEST(MrKeysTest, KernelKeysAreDistinctNonZeroAndSpreadOverAll32Bits) {
  MrKeys keys(KernelKeyRandom);
  constexpr int kKeys = 20000;
  absl::flat_hash_set<uint32_t> seen;
  int ones[32] = {};
  for (int i = 0; i < kKeys; ++i) {
    absl::StatusOr<uint32_t> k = keys.Allocate();
    ASSERT_TRUE(k.ok()) << k.status();
    ASSERT_NE(*k, 0u);
    ASSERT_TRUE(seen.insert(*k).second) << "key " << *k << " twice";
    for (int b = 0; b < 32; ++b) ones[b] += (*k >> b) & 1;
  }
  // Every bit is random: about half the keys have it set (the bounds are
  // 20 standard deviations from the mean).
  for (int b = 0; b < 32; ++b) {
    EXPECT_GT(ones[b], kKeys * 4 / 10) << "bit " << b;
    EXPECT_LT(ones[b], kKeys * 6 / 10) << "bit " << b;
  }
  EXPECT_EQ(keys.in_use(), static_cast<size_t>(kKeys));
}

TEST(MrKeysTest, ZeroAndKeysInUseAreDrawnAgain) {
  MrKeys keys(Scripted({0, 5, 0, 5, 7}));
  EXPECT_EQ(*keys.Allocate(), 5u);
  EXPECT_EQ(*keys.Allocate(), 7u);
}

TEST(MrKeysTest, AReleasedKeyIsNotHandedOutWhileRetired) {
  MrKeys keys(Scripted({5, 5, 9}));
  ASSERT_EQ(*keys.Allocate(), 5u);
  keys.Release(5);
  EXPECT_EQ(keys.in_use(), 0u);
  EXPECT_EQ(*keys.Allocate(), 9u);  // 5 is retired
}

TEST(MrKeysTest, ARetiredKeyReturnsOnlyAfterKRetiredKeysKeptOthers) {
  // Keys 1, 2, 3, ... in turn, each released at once; then 1 again.
  uint32_t next = 1;
  bool replay_first = false;
  MrKeys keys([&](uint32_t* key) {
    *key = replay_first ? 1 : next++;
    replay_first = false;
    return true;
  });
  ASSERT_EQ(*keys.Allocate(), 1u);
  keys.Release(1);
  for (size_t i = 0; i < MrKeys::kRetiredKeysKept; ++i) {
    replay_first = true;  // 1 is drawn first, refused, then the next key
    absl::StatusOr<uint32_t> k = keys.Allocate();
    ASSERT_TRUE(k.ok());
    ASSERT_NE(*k, 1u) << "after " << i << " other keys";
    keys.Release(*k);
  }
  // kRetiredKeysKept keys released after 1: it has left the retired set.
  replay_first = true;
  EXPECT_EQ(*keys.Allocate(), 1u);
}

TEST(MrKeysTest, ReleasingAKeyNotInUseChangesNothing) {
  MrKeys keys(Scripted({5, 6}));
  keys.Release(5);  // never handed out: not retired
  EXPECT_EQ(*keys.Allocate(), 5u);
  keys.Release(77);
  EXPECT_EQ(keys.in_use(), 1u);
}

TEST(MrKeysTest, AFailingSourceIsUnavailable) {
  MrKeys keys(Scripted({}));
  absl::StatusOr<uint32_t> k = keys.Allocate();
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnavailable);
}

TEST(MrKeysTest, DrawsThatAllCollideAreResourceExhausted) {
  MrKeys keys([](uint32_t* key) {
    *key = 0;
    return true;
  });
  absl::StatusOr<uint32_t> k = keys.Allocate();
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(MrKeysTest, CountingSourceGivesDistinctKeys) {
  MrKeys keys(Counting(100));
  EXPECT_EQ(*keys.Allocate(), 100u);
  EXPECT_EQ(*keys.Allocate(), 101u);
  EXPECT_EQ(keys.in_use(), 2u);
}

}  // namespace
}  // namespace braid::verbs_compat

#include "verbs_compat/pd_mr.h"

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace braid::verbs_compat {
namespace {

TEST(MrTableTest, NewKeysAreUniqueAndNeverZero) {
  MrTable t;
  absl::flat_hash_set<uint32_t> seen;
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<uint32_t> k = t.NewKey();
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_NE(*k, 0u);
    EXPECT_TRUE(seen.insert(*k).second);
  }
}

TEST(MrTableTest, AnUnknownKeyIsABadKey) {
  MrTable t;
  uint8_t* out = nullptr;
  EXPECT_EQ(t.CheckRemote(12345, nullptr, 0, 8, IBV_ACCESS_REMOTE_WRITE, &out),
            AccessResult::kBadKey);
  EXPECT_EQ(out, nullptr);
}

}  // namespace
}  // namespace braid::verbs_compat

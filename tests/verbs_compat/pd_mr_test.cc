#include "verbs_compat/pd_mr.h"

#include <vector>

#include "gtest/gtest.h"

namespace braid::verbs_compat {
namespace {

// Pd needs a Context only for its public struct; MrTable checks need just
// the pointers, so these tests build Mrs on fake PDs via a minimal path.
TEST(MrTableTest, KeysAreUniqueAndNeverZero) {
  MrTable t(0);
  uint32_t prev = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint32_t k = t.NewKey();
    EXPECT_NE(k, 0u);
    EXPECT_NE(k, prev);
    prev = k;
  }
}

}  // namespace
}  // namespace braid::verbs_compat

// braid_verbs_query_stats_sized writes exactly the fields the caller's
// struct has: a program built against an older (shorter) braid_verbs_stats
// gets no byte past it, and the exported braid_verbs_query_stats symbol
// (for programs built before the sized call) fills the fields it had then.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

constexpr uint8_t kUntouched = 0xab;

// A buffer a little larger than the struct, every byte kUntouched.
std::vector<uint8_t> Sentinel() {
  return std::vector<uint8_t>(sizeof(braid_verbs_stats) + 16, kUntouched);
}

size_t FirstTouchedFromEnd(const std::vector<uint8_t>& b) {
  size_t n = b.size();
  while (n > 0 && b[n - 1] == kUntouched) --n;
  return n;
}

TEST(VerbsStatsTest, ASizedQueryWritesNothingPastTheSizeGiven) {
  Pair p;
  std::vector<uint8_t> buf = Sentinel();
  auto* out = reinterpret_cast<braid_verbs_stats*>(buf.data());
  ASSERT_EQ(braid_verbs_query_stats_sized(p.a.ctx, out, 3 * sizeof(uint64_t)),
            0);
  for (size_t i = 3 * sizeof(uint64_t); i < buf.size(); ++i) {
    ASSERT_EQ(buf[i], kUntouched) << "byte " << i;
  }
  // The whole struct: every field written (counters are small numbers, so
  // the top byte of each is 0, never the sentinel), nothing past it.
  buf = Sentinel();
  out = reinterpret_cast<braid_verbs_stats*>(buf.data());
  ASSERT_EQ(braid_verbs_query_stats(p.a.ctx, out), 0);
  for (size_t f = 0; f < sizeof(braid_verbs_stats); f += 8) {
    EXPECT_EQ(buf[f + 7], 0) << "field at offset " << f << " not written";
  }
  EXPECT_EQ(FirstTouchedFromEnd(buf), sizeof(braid_verbs_stats));
}

TEST(VerbsStatsTest, BadSizesAndContextsAreEinval) {
  Pair p;
  braid_verbs_stats st;
  EXPECT_EQ(braid_verbs_query_stats_sized(p.a.ctx, &st, 0), EINVAL);
  EXPECT_EQ(braid_verbs_query_stats_sized(p.a.ctx, &st, 12), EINVAL);
  EXPECT_EQ(braid_verbs_query_stats_sized(p.a.ctx, nullptr, sizeof(st)),
            EINVAL);
  EXPECT_EQ(braid_verbs_query_stats_sized(nullptr, &st, sizeof(st)), EINVAL);
}

}  // namespace
}  // namespace braid::verbs_compat::testing

// The symbol an older program calls by name (or finds with dlsym), as its
// header declared it.
#undef braid_verbs_query_stats
extern "C" int braid_verbs_query_stats(struct ibv_context* context,
                                       struct braid_verbs_stats* out);

namespace braid::verbs_compat::testing {
namespace {

TEST(VerbsStatsTest, TheOldSymbolFillsOnlyTheFieldsItsCallersKnew) {
  Pair p;
  std::vector<uint8_t> buf = Sentinel();
  ASSERT_EQ(braid_verbs_query_stats(
                p.a.ctx, reinterpret_cast<braid_verbs_stats*>(buf.data())),
            0);
  EXPECT_EQ(FirstTouchedFromEnd(buf), offsetof(braid_verbs_stats, acks_sent));
}

}  // namespace
}  // namespace braid::verbs_compat::testing

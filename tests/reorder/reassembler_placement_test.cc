// Direct placement in the Reassembler: fragments of a placed message go
// straight into the destination the placement function names (in any
// order), only the head is buffered, and a refusal writes nothing.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"
#include "reorder/reassembler.h"

namespace braid::reorder {
namespace {

using wire::MsgSeq;
using wire::PlacementExt;

std::vector<uint8_t> Pattern(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng.Next() | 1);  // never 0
  return v;
}

// Fragment `index` of a placed message `msg` split at `mss`.
Fragment PlacedFrag(uint32_t msg, const std::vector<uint8_t>& data,
                    uint32_t mss, uint32_t index, const PlacementExt* ext) {
  Fragment f;
  f.msg = MsgSeq(msg);
  f.stream_id = 2;
  f.stream_seq = 5;
  f.msg_len = static_cast<uint32_t>(data.size());
  f.offset = index * mss;
  const size_t len = std::min<size_t>(mss, data.size() - f.offset);
  f.payload = absl::MakeConstSpan(data.data() + f.offset, len);
  f.placement = ext;
  return f;
}

std::vector<uint32_t> Shuffled(uint32_t n, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed);
  for (size_t i = order.size() - 1; i > 0; --i) {
    std::swap(order[i], order[rng.Uniform(i + 1)]);
  }
  return order;
}

// A destination region plus a placement function that counts its calls.
struct Target {
  explicit Target(size_t n) : mem(n, 0) {}
  std::vector<uint8_t> mem;
  int calls = 0;
  bool accept = true;
  size_t short_by = 0;  // offer this many bytes less than `mem`
  bool Place(const Fragment& f, absl::Span<uint8_t>* dest) {
    ++calls;
    if (!accept) return false;
    *dest = absl::MakeSpan(mem).subspan(0, mem.size() - short_by);
    return true;
  }
  // Feeds `f` to `r` with this target as the placement function.
  FragResult Feed(Reassembler& r, const Fragment& f, CompletedMessage* out) {
    return r.OnFragment(
        f,
        [this](const Fragment& g, absl::Span<uint8_t>* d) {
          return Place(g, d);
        },
        out);
  }
  // Feeds every fragment of placed message `msg` in a shuffled order.
  void FeedAll(Reassembler& r, uint32_t msg, const std::vector<uint8_t>& data,
               uint32_t mss, const PlacementExt& ext, uint64_t seed,
               CompletedMessage* out) {
    const auto n = static_cast<uint32_t>((data.size() + mss - 1) / mss);
    for (uint32_t i : Shuffled(n, seed)) {
      Feed(r, PlacedFrag(msg, data, mss, i, &ext), out);
    }
  }
  bool Untouched(size_t from = 0) const {
    return std::all_of(mem.begin() + from, mem.end(),
                       [](uint8_t b) { return b == 0; });
  }
};

TEST(ReassemblerPlacementTest, FragmentsInAnyOrderLandInPlaceWithOnlyTheHead) {
  constexpr uint32_t kMss = 1000, kHead = 40;
  const PlacementExt ext{.key = 7, .offset = 0x1000, .head_len = kHead};
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed=" << seed);
    const auto data = Pattern(49 * kMss + 321, seed);
    Target t(data.size() - kHead);
    Reassembler r;
    CompletedMessage out;
    const std::vector<uint32_t> order = Shuffled(50, seed);
    for (size_t i = 0; i < order.size(); ++i) {
      const FragResult res =
          t.Feed(r, PlacedFrag(3, data, kMss, order[i], &ext), &out);
      ASSERT_EQ(res, i + 1 == order.size() ? FragResult::kComplete
                                           : FragResult::kPartial);
      // No message buffer: only the head is ever held, plus the coverage
      // ranges of 50 fragments in random order (8 bytes per hole at most).
      EXPECT_LE(r.bytes_buffered(), kHead);
      EXPECT_LE(r.memory_used(), kHead + 64 * 8);
    }
    EXPECT_EQ(out.placement, Placement::kPlaced);
    EXPECT_EQ(out.ext, ext);
    EXPECT_EQ(out.msg_len, data.size());
    EXPECT_EQ(out.stream_id, 2);
    EXPECT_EQ(out.stream_seq, 5u);
    EXPECT_EQ(out.data,
              std::vector<uint8_t>(data.begin(), data.begin() + kHead));
    EXPECT_TRUE(std::equal(t.mem.begin(), t.mem.end(), data.begin() + kHead));
    // Asked once per fragment that carries placed bytes (all 50 here).
    EXPECT_EQ(t.calls, 50);
    EXPECT_EQ(r.stats().bytes_placed, data.size() - kHead);
    EXPECT_EQ(r.stats().bytes_copied, kHead);
    EXPECT_EQ(r.stats().messages_placed, 1u);
    EXPECT_EQ(r.bytes_buffered(), 0u);
    EXPECT_EQ(r.memory_used(), 0u);
  }
}

TEST(ReassemblerPlacementTest, HeadSpanningSeveralFragmentsIsSplitCorrectly) {
  constexpr uint32_t kMss = 100, kHead = 250;
  const PlacementExt ext{.key = 1, .offset = 0, .head_len = kHead};
  const auto data = Pattern(1000, 9);
  Target t(data.size() - kHead);
  Reassembler r;
  CompletedMessage out;
  t.FeedAll(r, 1, data, kMss, ext, 3, &out);
  ASSERT_EQ(out.placement, Placement::kPlaced);
  EXPECT_EQ(out.data, std::vector<uint8_t>(data.begin(), data.begin() + kHead));
  EXPECT_TRUE(std::equal(t.mem.begin(), t.mem.end(), data.begin() + kHead));
  // Fragments 0 and 1 are all head: the function is not asked for them.
  EXPECT_EQ(t.calls, 8);
}

TEST(ReassemblerPlacementTest, RefusedMessageWritesNoByteAndCompletesRefused) {
  constexpr uint32_t kMss = 500, kHead = 24;
  const PlacementExt ext{.key = 99, .offset = 0, .head_len = kHead};
  const auto data = Pattern(5000, 4);
  Target t(data.size() - kHead);
  t.accept = false;
  Reassembler r;
  CompletedMessage out;
  t.FeedAll(r, 4, data, kMss, ext, 8, &out);
  EXPECT_EQ(out.placement, Placement::kRefused);
  EXPECT_EQ(out.data, std::vector<uint8_t>(data.begin(), data.begin() + kHead));
  EXPECT_TRUE(t.Untouched());
  EXPECT_EQ(r.stats().bytes_placed, 0u);
  EXPECT_EQ(r.stats().messages_refused, 1u);
  // Refused on the first fragment with placed bytes, never asked again.
  EXPECT_EQ(t.calls, 1);
}

TEST(ReassemblerPlacementTest, RefusalIsStickyWhenTheFunctionChangesItsMind) {
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 0};
  const auto data = Pattern(400, 5);
  Target t(data.size());
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(t.Feed(r, PlacedFrag(1, data, 100, 0, &ext), &out),
            FragResult::kPartial);  // placed
  t.accept = false;
  EXPECT_EQ(t.Feed(r, PlacedFrag(1, data, 100, 2, &ext), &out),
            FragResult::kPartial);  // refused
  t.accept = true;
  t.Feed(r, PlacedFrag(1, data, 100, 1, &ext), &out);
  EXPECT_EQ(t.Feed(r, PlacedFrag(1, data, 100, 3, &ext), &out),
            FragResult::kComplete);
  EXPECT_EQ(out.placement, Placement::kRefused);
  EXPECT_TRUE(std::equal(t.mem.begin(), t.mem.begin() + 100, data.begin()));
  EXPECT_TRUE(t.Untouched(100));
  EXPECT_EQ(t.calls, 2);
}

TEST(ReassemblerPlacementTest, DestinationShorterThanThePlacedPartIsRefused) {
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 8};
  const auto data = Pattern(300, 6);
  Target t(292);
  t.short_by = 1;  // offers 291 of the 292 bytes needed
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(t.Feed(r, PlacedFrag(1, data, 1000, 0, &ext), &out),
            FragResult::kComplete);
  EXPECT_EQ(out.placement, Placement::kRefused);
  EXPECT_TRUE(t.Untouched());
}

TEST(ReassemblerPlacementTest, SingleFragmentMessageIsPlacedAtOnce) {
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 10};
  const auto data = Pattern(300, 7);
  Target t(290);
  Reassembler r;
  CompletedMessage out;
  out.data = {1, 2, 3};
  EXPECT_EQ(t.Feed(r, PlacedFrag(1, data, 1000, 0, &ext), &out),
            FragResult::kComplete);
  EXPECT_EQ(out.placement, Placement::kPlaced);
  EXPECT_EQ(out.data, std::vector<uint8_t>(data.begin(), data.begin() + 10));
  EXPECT_TRUE(std::equal(t.mem.begin(), t.mem.end(), data.begin() + 10));
}

TEST(ReassemblerPlacementTest, AllHeadMessageNeverAsksTheFunction) {
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 300};
  const auto data = Pattern(300, 7);
  Target t(0);
  Reassembler r;
  CompletedMessage out;
  t.Feed(r, PlacedFrag(1, data, 1000, 0, &ext), &out);
  EXPECT_EQ(out.placement, Placement::kPlaced);
  EXPECT_EQ(out.data, data);
  EXPECT_EQ(t.calls, 0);
}

TEST(ReassemblerPlacementTest,
     WithoutAPlacementFunctionPlacedMessagesAreRefused) {
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 4};
  const auto data = Pattern(300, 7);
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(PlacedFrag(1, data, 1000, 0, &ext), &out),
            FragResult::kComplete);
  EXPECT_EQ(out.placement, Placement::kRefused);
  EXPECT_EQ(out.data.size(), 4u);
}

TEST(ReassemblerPlacementTest, PlacedMessagesAreNotBoundByTheReceiveBudget) {
  ReassemblerOptions o;
  o.max_bytes = 4096;  // far below the message
  Reassembler r(o);
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 16};
  const auto data = Pattern(200000, 8);
  Target t(data.size() - 16);
  CompletedMessage out;
  FragResult last = FragResult::kPartial;
  for (uint32_t i = 0; i < 200; ++i) {
    last = t.Feed(r, PlacedFrag(1, data, 1000, i, &ext), &out);
    ASSERT_NE(last, FragResult::kNoMemory);
  }
  EXPECT_EQ(last, FragResult::kComplete);
  EXPECT_TRUE(std::equal(t.mem.begin(), t.mem.end(), data.begin() + 16));
  // The same message unplaced does not fit.
  Fragment plain = PlacedFrag(2, data, 1000, 0, nullptr);
  EXPECT_EQ(r.OnFragment(plain, &out), FragResult::kMalformed);
}

TEST(ReassemblerPlacementTest, OverlappingFragmentIsDroppedBeforeAnyWrite) {
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 0};
  const auto data = Pattern(400, 9);
  auto forged = data;
  std::fill(forged.begin(), forged.end(), 0x55);
  Target t(400);
  Reassembler r;
  CompletedMessage out;
  t.Feed(r, PlacedFrag(1, data, 100, 0, &ext), &out);
  t.Feed(r, PlacedFrag(1, data, 100, 1, &ext), &out);
  EXPECT_EQ(t.Feed(r, PlacedFrag(1, forged, 100, 1, &ext), &out),
            FragResult::kMalformed);
  EXPECT_TRUE(std::equal(t.mem.begin(), t.mem.begin() + 200, data.begin()));
  EXPECT_EQ(r.stats().malformed_overlap, 1u);
}

TEST(ReassemblerPlacementTest, FragmentsDisagreeingOnTheDescriptorAreDropped) {
  const PlacementExt a{.key = 5, .offset = 0, .head_len = 0};
  const PlacementExt b{.key = 6, .offset = 0, .head_len = 0};
  const auto data = Pattern(400, 10);
  Target t(400);
  Reassembler r;
  CompletedMessage out;
  t.Feed(r, PlacedFrag(1, data, 100, 0, &a), &out);
  EXPECT_EQ(t.Feed(r, PlacedFrag(1, data, 100, 1, &b), &out),
            FragResult::kMalformed);
  EXPECT_EQ(t.Feed(r, PlacedFrag(1, data, 100, 2, nullptr), &out),
            FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_inconsistent, 2u);
  EXPECT_EQ(t.calls, 1);
}

TEST(ReassemblerPlacementTest, HeadLongerThanTheLimitIsMalformed) {
  ReassemblerOptions o;
  o.max_placement_head = 64;
  Reassembler r(o);
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 65};
  const auto data = Pattern(400, 11);
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(PlacedFrag(1, data, 100, 0, &ext), &out),
            FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_placement, 1u);
}

TEST(ReassemblerPlacementTest, ClearDropsPlacedPartialsAndTheirHeads) {
  const PlacementExt ext{.key = 5, .offset = 0, .head_len = 50};
  const auto data = Pattern(400, 12);
  Target t(350);
  Reassembler r;
  CompletedMessage out;
  t.Feed(r, PlacedFrag(1, data, 100, 0, &ext), &out);
  EXPECT_EQ(r.bytes_buffered(), 50u);
  r.Clear();
  EXPECT_EQ(r.bytes_buffered(), 0u);
  EXPECT_EQ(r.memory_used(), 0u);
  EXPECT_EQ(r.partial_messages(), 0u);
}

}  // namespace
}  // namespace braid::reorder

// Reassembly commits memory as fragments land, chunk by chunk, and the
// endpoint-wide budget bounds it.
#include <algorithm>
#include <numeric>
#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"
#include "reorder/reassembler.h"

namespace braid::reorder {
namespace {

constexpr uint64_t kChunk = 64u << 10;

Fragment Piece(uint32_t msg, const std::vector<uint8_t>& data, uint32_t msg_len,
               uint32_t offset, uint32_t len) {
  Fragment f;
  f.msg = wire::MsgSeq(msg);
  f.msg_len = msg_len;
  f.offset = offset;
  f.payload = absl::MakeConstSpan(data.data() + offset, len);
  return f;
}

TEST(ReassemblerMemoryTest, HighOffsetFragmentCommitsOnlyItsChunk) {
  const uint32_t msg_len = 64u << 20;
  std::vector<uint8_t> data(msg_len);
  ReassemblyBudget budget;
  ReassemblerOptions o;
  o.budget = &budget;
  Reassembler r(o);
  CompletedMessage out;
  ASSERT_EQ(r.OnFragment(Piece(1, data, msg_len, msg_len - 5000, 1000), &out),
            FragResult::kPartial);
  EXPECT_GE(r.memory_used(), kChunk);
  EXPECT_LE(r.memory_used(), kChunk + 1024);
  EXPECT_EQ(budget.committed(), r.memory_used());
  // Nothing before it was committed or reserved.
  EXPECT_LE(budget.reserved(), kChunk);
  // A second fragment in the same chunk commits nothing more.
  const uint64_t before = r.memory_used();
  ASSERT_EQ(r.OnFragment(Piece(1, data, msg_len, msg_len - 4000, 1000), &out),
            FragResult::kPartial);
  EXPECT_EQ(r.memory_used(), before);
  r.Clear();
  EXPECT_EQ(r.memory_used(), 0u);
  EXPECT_EQ(budget.committed(), 0u);
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(ReassemblerMemoryTest, ShuffledFragmentsAcrossChunksReassembleExactly) {
  const uint32_t msg_len = 300000;
  Rng rng(5);
  std::vector<uint8_t> data(msg_len);
  for (auto& b : data) b = static_cast<uint8_t>(rng.Next());
  std::vector<uint32_t> offs;
  for (uint32_t off = 0; off < msg_len; off += 1000) offs.push_back(off);
  for (size_t i = offs.size(); i > 1; --i) {
    std::swap(offs[i - 1], offs[rng.Uniform(i)]);
  }
  ReassemblyBudget budget;
  ReassemblerOptions o;
  o.budget = &budget;
  Reassembler r(o);
  CompletedMessage out;
  for (size_t i = 0; i < offs.size(); ++i) {
    const uint32_t len = std::min<uint32_t>(1000, msg_len - offs[i]);
    const FragResult res =
        r.OnFragment(Piece(1, data, msg_len, offs[i], len), &out);
    ASSERT_EQ(res, i + 1 == offs.size() ? FragResult::kComplete
                                        : FragResult::kPartial);
    EXPECT_LE(budget.committed(), msg_len + 8 * 1024);
  }
  EXPECT_TRUE(out.data == data);
  EXPECT_GT(r.stats().side_chunks, 0u);
  EXPECT_EQ(r.memory_used(), 0u);
  EXPECT_EQ(budget.committed(), 0u);
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(ReassemblerMemoryTest, InOrderMessageUsesOneBufferAndNoSideChunk) {
  const uint32_t msg_len = 1u << 20;
  std::vector<uint8_t> data(msg_len);
  std::iota(data.begin(), data.end(), 0);
  BufferPool pool;
  Reassembler r(ReassemblerOptions(), &pool);
  CompletedMessage out;
  for (uint32_t off = 0; off < msg_len; off += 1400) {
    r.OnFragment(Piece(1, data, msg_len, off, std::min(1400u, msg_len - off)),
                 &out);
  }
  EXPECT_TRUE(out.data == data);
  EXPECT_EQ(r.stats().side_chunks, 0u);
  EXPECT_EQ(pool.stats().gets, 1u);  // the whole length, reserved once
}

TEST(ReassemblerMemoryTest, UnprovenPeersGetHalfTheBudgetProvenTheRest) {
  ReassemblyBudget budget(1u << 20);
  ReassemblerOptions o;
  o.budget = &budget;
  Reassembler stranger(o), friend_(o);
  friend_.set_proven(true);
  std::vector<uint8_t> data(16u << 20);
  CompletedMessage out;
  uint32_t refused = 0;
  for (uint32_t m = 1; m <= 16; ++m) {
    if (stranger.OnFragment(Piece(m, data, 16u << 20, 0, 1000), &out) ==
        FragResult::kNoMemory) {
      ++refused;
      EXPECT_TRUE(stranger.last_refusal_endpoint());
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_LE(budget.committed(), budget.max_bytes() / 2);
  EXPECT_TRUE(budget.TakePressure());
  // The proven peer still finds room beyond the half.
  for (uint32_t m = 1; m <= 6; ++m) {
    EXPECT_EQ(friend_.OnFragment(Piece(m, data, 16u << 20, 0, 1000), &out),
              FragResult::kPartial);
  }
  EXPECT_GT(budget.committed(), budget.max_bytes() / 2);
  EXPECT_LE(budget.peak(), budget.max_bytes());
}

TEST(ReassemblerMemoryTest, PlacedMessageCommitsOnlyItsHead) {
  const uint32_t msg_len = 8u << 20;
  std::vector<uint8_t> data(msg_len, 3), dest(msg_len);
  wire::PlacementExt ext;
  ext.head_len = 100;
  ReassemblyBudget budget;
  ReassemblerOptions o;
  o.budget = &budget;
  Reassembler r(o);
  CompletedMessage out;
  auto place = [&](const Fragment&, absl::Span<uint8_t>* d) {
    *d = absl::MakeSpan(dest).subspan(ext.head_len);
    return true;
  };
  for (uint32_t off : {msg_len - 2000, msg_len / 2, 0u}) {
    Fragment f = Piece(1, data, msg_len, off, 1000);
    f.placement = &ext;
    ASSERT_EQ(r.OnFragment(f, place, &out), FragResult::kPartial);
  }
  // The head's bytes and the bookkeeping; the placed bytes went to `dest`.
  EXPECT_LE(budget.committed(), ext.head_len + 1024u);
  EXPECT_LE(budget.reserved(), ext.head_len);
  EXPECT_EQ(r.stats().bytes_placed, 3000u - ext.head_len);
}

TEST(ReassemblerMemoryTest, DestroyedReassemblerGivesItsMemoryBack) {
  ReassemblyBudget budget;
  ReassemblerOptions o;
  o.budget = &budget;
  std::vector<uint8_t> data(1u << 20);
  {
    Reassembler r(o);
    CompletedMessage out;
    ASSERT_EQ(r.OnFragment(Piece(1, data, 1u << 20, 500000, 1000), &out),
              FragResult::kPartial);
    ASSERT_EQ(r.OnFragment(Piece(2, data, 1u << 20, 0, 1000), &out),
              FragResult::kPartial);
    EXPECT_GT(budget.committed(), 2 * kChunk);
  }
  EXPECT_EQ(budget.committed(), 0u);
  EXPECT_EQ(budget.reserved(), 0u);
}

}  // namespace
}  // namespace braid::reorder

#include "reorder/reassembler.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"

namespace braid::reorder {
namespace {

using wire::MsgSeq;

std::vector<uint8_t> Pattern(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng.Next());
  return v;
}

// Fragment `index` of `msg` split at `mss`.
Fragment Frag(uint32_t msg, const std::vector<uint8_t>& data, uint32_t mss,
              uint32_t index, uint16_t stream = 0, uint32_t stream_seq = 0) {
  Fragment f;
  f.msg = MsgSeq(msg);
  f.stream_id = stream;
  f.stream_seq = stream_seq;
  f.msg_len = static_cast<uint32_t>(data.size());
  f.offset = index * mss;
  const size_t len = std::min<size_t>(mss, data.size() - f.offset);
  f.payload = absl::MakeConstSpan(data.data() + f.offset, len);
  return f;
}

uint32_t Frags(size_t len, uint32_t mss) {
  return len == 0 ? 1 : static_cast<uint32_t>((len + mss - 1) / mss);
}

TEST(ReassemblerTest, SingleFragmentMessageCompletesAtOnce) {
  Reassembler r;
  const auto data = Pattern(700, 1);
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(9, data, 1000, 0, 3, 4), &out),
            FragResult::kComplete);
  EXPECT_EQ(out.msg, MsgSeq(9));
  EXPECT_EQ(out.stream_id, 3);
  EXPECT_EQ(out.stream_seq, 4u);
  EXPECT_EQ(out.data, data);
  EXPECT_EQ(r.partial_messages(), 0u);
}

TEST(ReassemblerTest, ZeroByteMessageIsOneEmptyFragment) {
  Reassembler r;
  const std::vector<uint8_t> empty;
  CompletedMessage out;
  out.data = {1, 2, 3};
  EXPECT_EQ(r.OnFragment(Frag(1, empty, 1000, 0), &out), FragResult::kComplete);
  EXPECT_TRUE(out.data.empty());
  EXPECT_EQ(r.bytes_buffered(), 0u);
}

TEST(ReassemblerTest, AnyOrderArrivalOfThousandFragmentsIsByteExact) {
  constexpr uint32_t kMss = 1000;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed=" << seed);
    Rng rng(seed);
    // 1000 fragments; the last one short.
    const auto data = Pattern(999 * kMss + 1 + rng.Uniform(kMss), seed);
    ASSERT_EQ(Frags(data.size(), kMss), 1000u);
    std::vector<uint32_t> order(1000);
    std::iota(order.begin(), order.end(), 0);
    for (size_t i = order.size() - 1; i > 0; --i) {
      std::swap(order[i], order[rng.Uniform(i + 1)]);
    }
    Reassembler r;
    CompletedMessage out;
    for (size_t i = 0; i < order.size(); ++i) {
      const FragResult res = r.OnFragment(Frag(77, data, kMss, order[i]), &out);
      if (i + 1 < order.size()) {
        ASSERT_EQ(res, FragResult::kPartial) << "fragment #" << i;
        ASSERT_EQ(r.bytes_buffered(), data.size());
      } else {
        ASSERT_EQ(res, FragResult::kComplete);
      }
    }
    EXPECT_EQ(out.msg, MsgSeq(77));
    EXPECT_TRUE(out.data == data);
    EXPECT_EQ(r.partial_messages(), 0u);
    EXPECT_EQ(r.bytes_buffered(), 0u);
    EXPECT_EQ(r.memory_used(), 0u);
  }
}

TEST(ReassemblerTest, InterleavedMessagesReassembleIndependently) {
  const uint64_t seed = 42;
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  Rng rng(seed);
  constexpr uint32_t kMss = 64;
  std::vector<std::vector<uint8_t>> msgs;
  std::vector<std::pair<uint32_t, uint32_t>> frags;  // (msg, index)
  for (uint32_t m = 0; m < 50; ++m) {
    msgs.push_back(Pattern(rng.Uniform(1000), seed + m));
    for (uint32_t i = 0; i < Frags(msgs[m].size(), kMss); ++i) {
      frags.push_back({m, i});
    }
  }
  for (size_t i = frags.size() - 1; i > 0; --i) {
    std::swap(frags[i], frags[rng.Uniform(i + 1)]);
  }
  Reassembler r;
  CompletedMessage out;
  std::vector<bool> done(msgs.size(), false);
  for (auto [m, i] : frags) {
    const FragResult res = r.OnFragment(Frag(m, msgs[m], kMss, i), &out);
    ASSERT_NE(res, FragResult::kMalformed);
    if (res == FragResult::kComplete) {
      ASSERT_EQ(out.msg, MsgSeq(m));
      ASSERT_TRUE(out.data == msgs[m]);
      ASSERT_FALSE(done[m]);
      done[m] = true;
    }
  }
  EXPECT_TRUE(std::all_of(done.begin(), done.end(), [](bool b) { return b; }));
}

TEST(ReassemblerTest, LastFragmentFirstIsValidatedWhenSizeIsLearned) {
  const auto data = Pattern(250, 3);
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 2), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 0), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 1), &out), FragResult::kComplete);
  EXPECT_EQ(out.data, data);
}

// Bytes [begin, end) of `data` as a fragment of message `msg`.
Fragment Piece(uint32_t msg, const std::vector<uint8_t>& data, uint32_t begin,
               uint32_t end) {
  Fragment f;
  f.msg = MsgSeq(msg);
  f.msg_len = static_cast<uint32_t>(data.size());
  f.offset = begin;
  f.payload = absl::MakeConstSpan(data.data() + begin, end - begin);
  return f;
}

TEST(ReassemblerTest, FragmentsOfDifferentSizesReassemble) {
  // What a sender that fills datagrams produces: a short head (the rest of
  // a datagram that ended the previous message), full middles, a short tail.
  const auto data = Pattern(250, 3);
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Piece(1, data, 230, 250), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Piece(1, data, 0, 30), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Piece(1, data, 130, 230), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Piece(1, data, 30, 130), &out), FragResult::kComplete);
  EXPECT_EQ(out.data, data);
  EXPECT_EQ(r.memory_used(), 0u);
}

TEST(ReassemblerTest, RandomCutsInRandomOrderAreByteExact) {
  Rng rng(77);
  Reassembler r;
  for (uint32_t msg = 1; msg <= 200; ++msg) {
    const auto data = Pattern(1 + rng.Next() % 20000, msg);
    const uint32_t len = static_cast<uint32_t>(data.size());
    std::vector<uint32_t> cuts = {0, len};
    const size_t ncuts = rng.Next() % 40;
    for (size_t i = 0; i < ncuts; ++i) {
      cuts.push_back(static_cast<uint32_t>(rng.Next() % len));
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<Fragment> frags;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      frags.push_back(Piece(msg, data, cuts[i], cuts[i + 1]));
    }
    for (size_t i = frags.size(); i > 1; --i) {
      std::swap(frags[i - 1], frags[rng.Next() % i]);
    }
    CompletedMessage out;
    for (size_t i = 0; i < frags.size(); ++i) {
      const FragResult want =
          i + 1 == frags.size() ? FragResult::kComplete : FragResult::kPartial;
      ASSERT_EQ(r.OnFragment(frags[i], &out), want) << "msg " << msg;
    }
    ASSERT_EQ(out.data, data) << "msg " << msg;
  }
  EXPECT_EQ(r.partial_messages(), 0u);
  EXPECT_EQ(r.memory_used(), 0u);
  EXPECT_EQ(r.stats().malformed_overlap, 0u);
}

TEST(ReassemblerTest, EmptyFragmentInsideAPartialMessageIsMalformed) {
  const auto data = Pattern(300, 3);
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Piece(1, data, 0, 100), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Piece(1, data, 100, 100), &out),
            FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_bad_layout, 1u);
  EXPECT_EQ(r.OnFragment(Piece(1, data, 100, 300), &out),
            FragResult::kComplete);
  EXPECT_EQ(out.data, data);
}

TEST(ReassemblerTest, OverlappingFragmentIsMalformedAndDoesNotComplete) {
  const auto data = Pattern(300, 4);
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 0), &out), FragResult::kPartial);
  // Same bytes again (a duplicate that slipped past the PSN filter).
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 0), &out), FragResult::kMalformed);
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 1), &out), FragResult::kPartial);
  // Half-overlapping fragment [150, 250).
  Fragment f = Frag(1, data, 100, 1);
  f.offset = 150;
  EXPECT_EQ(r.OnFragment(f, &out), FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_overlap, 2u);
  // A fragment reaching into a hole from covered bytes is refused too.
  EXPECT_EQ(r.OnFragment(Piece(1, data, 199, 300), &out),
            FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_overlap, 3u);
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 2), &out), FragResult::kComplete);
  EXPECT_EQ(out.data, data);
}

TEST(ReassemblerTest, TwoFinalFragmentsBeforeSizeKnownAreOverlap) {
  const auto data = Pattern(300, 4);
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 2), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 2), &out), FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_overlap, 1u);
}

TEST(ReassemblerTest, FragmentPastMessageEndIsMalformed) {
  const auto data = Pattern(300, 5);
  Reassembler r;
  CompletedMessage out;
  Fragment f = Frag(1, data, 100, 2);
  f.offset = 260;
  EXPECT_EQ(r.OnFragment(f, &out), FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_out_of_bounds, 1u);
  EXPECT_EQ(r.partial_messages(), 0u);
}

TEST(ReassemblerTest, InconsistentMessageFieldsAreMalformed) {
  const auto data = Pattern(300, 6);
  Reassembler r;
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 0, 2, 5), &out),
            FragResult::kPartial);
  Fragment f = Frag(1, data, 100, 1, 2, 5);
  f.msg_len = 400;
  EXPECT_EQ(r.OnFragment(f, &out), FragResult::kMalformed);
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 1, 3, 5), &out),
            FragResult::kMalformed);
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 1, 2, 6), &out),
            FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_inconsistent, 3u);
  // Fragments may differ in size: [100, 150) then [150, 200).
  Fragment g = Frag(1, data, 100, 1, 2, 5);
  g.payload = g.payload.subspan(0, 50);
  EXPECT_EQ(r.OnFragment(g, &out), FragResult::kPartial);
  g.offset = 150;
  g.payload = absl::MakeConstSpan(data.data() + 150, 50);
  EXPECT_EQ(r.OnFragment(g, &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Frag(1, data, 100, 2, 2, 5), &out),
            FragResult::kComplete);
  EXPECT_EQ(out.data, data);
}

TEST(ReassemblerTest, EmptyFragmentOfNonEmptyMessageIsMalformed) {
  const auto data = Pattern(300, 6);
  Reassembler r;
  CompletedMessage out;
  Fragment f = Frag(1, data, 100, 0);
  f.payload = {};
  EXPECT_EQ(r.OnFragment(f, &out), FragResult::kMalformed);
  EXPECT_EQ(r.partial_messages(), 0u);
  EXPECT_EQ(r.memory_used(), 0u);
}

TEST(ReassemblerTest, MemoryLimitRefusesNewMessagesWithNoMemory) {
  ReassemblerOptions o;
  o.max_bytes = 1000;
  o.max_message_bytes = 1000;
  Reassembler r(o);
  const auto a = Pattern(600, 7);
  const auto b = Pattern(600, 8);
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(1, a, 100, 0), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Frag(2, b, 100, 0), &out), FragResult::kNoMemory);
  EXPECT_EQ(r.stats().no_memory, 1u);
  EXPECT_EQ(r.partial_messages(), 1u);
  // Fragments of the admitted message still proceed.
  for (uint32_t i = 1; i < 6; ++i) r.OnFragment(Frag(1, a, 100, i), &out);
  EXPECT_EQ(out.data, a);
  // Memory freed: the refused message is accepted on retransmission.
  EXPECT_EQ(r.OnFragment(Frag(2, b, 100, 0), &out), FragResult::kPartial);
}

TEST(ReassemblerTest, MessageLargerThanLimitIsMalformed) {
  ReassemblerOptions o;
  o.max_message_bytes = 500;
  Reassembler r(o);
  const auto a = Pattern(600, 7);
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(1, a, 100, 0), &out), FragResult::kMalformed);
  EXPECT_EQ(r.stats().malformed_too_large, 1u);
}

TEST(ReassemblerTest, PartialMessageCountIsBounded) {
  ReassemblerOptions o;
  o.max_partial_messages = 2;
  Reassembler r(o);
  const auto a = Pattern(300, 9);
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(1, a, 100, 0), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Frag(2, a, 100, 0), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Frag(3, a, 100, 0), &out), FragResult::kNoMemory);
  // Single-fragment messages need no partial state and still complete.
  const auto small = Pattern(50, 10);
  EXPECT_EQ(r.OnFragment(Frag(4, small, 100, 0), &out), FragResult::kComplete);
}

TEST(ReassemblerTest, ClearDropsPartialsAndReturnsBuffersToPool) {
  BufferPool pool;
  Reassembler r(ReassemblerOptions(), &pool);
  const auto a = Pattern(3000, 11);
  CompletedMessage out;
  EXPECT_EQ(r.OnFragment(Frag(1, a, 1000, 0), &out), FragResult::kPartial);
  EXPECT_EQ(r.OnFragment(Frag(2, a, 1000, 1), &out), FragResult::kPartial);
  EXPECT_EQ(r.bytes_buffered(), 6000u);
  r.Clear();
  EXPECT_EQ(r.partial_messages(), 0u);
  EXPECT_EQ(r.bytes_buffered(), 0u);
  EXPECT_EQ(r.memory_used(), 0u);
  EXPECT_EQ(pool.pooled_buffers(), 2u);
  EXPECT_EQ(r.stats().cleared_messages, 2u);
}

TEST(ReassemblerTest, PoolCanBeGivenThroughOptions) {
  BufferPool pool;
  ReassemblerOptions o;
  o.pool = &pool;
  Reassembler r(o);
  EXPECT_EQ(&r.pool(), &pool);
  const auto a = Pattern(3000, 11);
  CompletedMessage out;
  r.OnFragment(Frag(1, a, 1000, 0), &out);
  r.Clear();
  EXPECT_EQ(pool.pooled_buffers(), 1u);
}

TEST(ReassemblerTest, SteadyStateReusesPooledBuffers) {
  Reassembler r;
  const auto a = Pattern(5000, 12);
  CompletedMessage out;
  for (uint32_t m = 0; m < 100; ++m) {
    for (uint32_t i = 0; i < 5; ++i) r.OnFragment(Frag(m, a, 1000, i), &out);
    ASSERT_EQ(out.msg, MsgSeq(m));
    ASSERT_TRUE(out.data == a);
    // The next completion hands this buffer back to the pool.
  }
  EXPECT_LE(r.pool().stats().allocations, 2u);
}

// Buffers are filled without zero-filling them first (BufferPool::Reserve):
// a reused buffer that held a longer message, and whose stale bytes the new
// one must not show, and fragments arriving last-first, which leave a gap
// to fill later.
TEST(ReassemblerTest, ReusedBufferAndBackwardArrivalGiveTheExactMessage) {
  BufferPool pool;
  pool.Put(std::vector<uint8_t>(8000, 0xEE));  // class 4096..8191 -> 4096
  pool.Put(std::vector<uint8_t>(8192, 0xDD));  // class 8192
  Reassembler r(ReassemblerOptions(), &pool);
  for (const size_t len : {5000u, 7000u, 1000u}) {
    const auto a = Pattern(len, len);
    CompletedMessage out;
    const uint32_t n = Frags(len, 1000);
    for (uint32_t i = n; i-- > 0;) {
      EXPECT_EQ(r.OnFragment(Frag(1, a, 1000, i), &out),
                i == 0 ? FragResult::kComplete : FragResult::kPartial);
    }
    EXPECT_EQ(out.data, a) << len;
    pool.Put(std::move(out.data));
  }
  // Forward arrival, in steps smaller than a page, into a new buffer.
  const auto b = Pattern(100000, 7);
  CompletedMessage out;
  for (uint32_t i = 0; i < Frags(b.size(), 1000); ++i) {
    r.OnFragment(Frag(2, b, 1000, i), &out);
  }
  EXPECT_EQ(out.data, b);
}

TEST(ReassemblerTest, ManyHolesAreChargedAndReleased) {
  const auto a = Pattern(64 * 300, 13);  // 300 fragments of 64 bytes
  Reassembler r;
  CompletedMessage out;
  // Every other fragment first: 150 holes, ranges far beyond the inline
  // room, charged as memory.
  for (uint32_t i = 0; i < 300; i += 2) {
    ASSERT_EQ(r.OnFragment(Frag(1, a, 64, i), &out), FragResult::kPartial);
  }
  EXPECT_GE(r.memory_used(), a.size() + 150 * 8);
  for (uint32_t i = 1; i < 300; i += 2) {
    const FragResult res = r.OnFragment(Frag(1, a, 64, i), &out);
    ASSERT_EQ(res, i == 299 ? FragResult::kComplete : FragResult::kPartial);
  }
  EXPECT_EQ(out.data, a);
  EXPECT_EQ(r.memory_used(), 0u);
}

TEST(ReassemblerTest, CopyLimitWritesOnlyEachFragmentsFirstBytes) {
  ReassemblerOptions o;
  o.fragment_copy_limit = 16;
  const auto data = Pattern(5000, 7);
  const uint32_t mss = 1000;
  for (bool reversed : {false, true}) {
    Reassembler r(o);
    CompletedMessage out;
    const uint32_t n = Frags(data.size(), mss);
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t i = reversed ? n - 1 - k : k;
      const FragResult want =
          k + 1 == n ? FragResult::kComplete : FragResult::kPartial;
      ASSERT_EQ(r.OnFragment(Frag(3, data, mss, i), &out), want) << i;
    }
    // The whole length, with each fragment's first 16 bytes in place and
    // nothing else written (a fresh buffer: zeros).
    ASSERT_EQ(out.data.size(), data.size());
    for (size_t b = 0; b < data.size(); ++b) {
      if (b % mss >= 16) {
        ASSERT_EQ(out.data[b], 0) << "byte " << b;
      }
    }
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_TRUE(std::equal(data.begin() + i * mss,
                             data.begin() + i * mss + 16,
                             out.data.begin() + i * mss))
          << "fragment " << i << (reversed ? " reversed" : "");
    }
  }
  // A message in one fragment: its length, its first bytes.
  Reassembler r(o);
  const auto small = Pattern(700, 8);
  CompletedMessage out;
  ASSERT_EQ(r.OnFragment(Frag(4, small, 1000, 0), &out), FragResult::kComplete);
  ASSERT_EQ(out.data.size(), small.size());
  EXPECT_TRUE(std::equal(small.begin(), small.begin() + 16, out.data.begin()));
  EXPECT_EQ(std::count(out.data.begin() + 16, out.data.end(), 0),
            static_cast<long>(small.size() - 16));
}

}  // namespace
}  // namespace braid::reorder

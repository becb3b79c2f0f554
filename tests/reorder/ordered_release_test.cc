#include "reorder/ordered_release.h"

#include <map>
#include <utility>
#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"

namespace braid::reorder {
namespace {

using PushResult = OrderedRelease::PushResult;

CompletedMessage Msg(uint16_t stream, uint32_t seq, size_t bytes = 10) {
  CompletedMessage m;
  m.msg = wire::MsgSeq(seq * 100 + stream);
  m.stream_id = stream;
  m.stream_seq = seq;
  m.data.assign(bytes, static_cast<uint8_t>(seq));
  return m;
}

TEST(OrderedReleaseTest, UnorderedStreamPassesStraightThrough) {
  OrderedRelease o;
  std::vector<CompletedMessage> out;
  EXPECT_EQ(o.Push(Msg(0, 7), &out), PushResult::kOk);
  EXPECT_EQ(o.Push(Msg(0, 3), &out), PushResult::kOk);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].stream_seq, 7u);
  EXPECT_EQ(out[1].stream_seq, 3u);
  EXPECT_EQ(o.held_messages(), 0u);
}

TEST(OrderedReleaseTest, LaterMessagesWaitForTheirPredecessor) {
  OrderedRelease o;
  std::vector<CompletedMessage> out;
  o.Push(Msg(1, 2, 100), &out);
  o.Push(Msg(1, 1, 50), &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(o.held_messages(), 2u);
  EXPECT_EQ(o.held_bytes(), 150u);
  o.Push(Msg(1, 0), &out);
  ASSERT_EQ(out.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(out[i].stream_seq, i);
  EXPECT_EQ(o.held_messages(), 0u);
  EXPECT_EQ(o.held_bytes(), 0u);
  EXPECT_EQ(o.next_seq(1), 3u);
}

TEST(OrderedReleaseTest, StreamsDoNotBlockEachOther) {
  OrderedRelease o;
  std::vector<CompletedMessage> out;
  o.Push(Msg(1, 1), &out);
  o.Push(Msg(2, 0), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].stream_id, 2);
}

TEST(OrderedReleaseTest, RandomArrivalIsReleasedInOrderPerStream) {
  const uint64_t seed = 0xabc;
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  Rng rng(seed);
  std::vector<CompletedMessage> in;
  constexpr uint32_t kPerStream = 300;
  for (uint16_t s = 0; s < 5; ++s) {
    for (uint32_t q = 0; q < kPerStream; ++q)
      in.push_back(Msg(s, q, 1 + q % 7));
  }
  for (size_t i = in.size() - 1; i > 0; --i) {
    std::swap(in[i], in[rng.Uniform(i + 1)]);
  }
  OrderedRelease o;
  std::vector<CompletedMessage> out;
  for (auto& m : in) ASSERT_EQ(o.Push(std::move(m), &out), PushResult::kOk);
  ASSERT_EQ(out.size(), in.size());
  std::map<uint16_t, uint32_t> next;
  for (const auto& m : out) {
    if (m.stream_id == 0) continue;
    EXPECT_EQ(m.stream_seq, next[m.stream_id]++) << "stream " << m.stream_id;
    EXPECT_EQ(m.data.size(), 1 + m.stream_seq % 7);
  }
  for (uint16_t s = 1; s < 5; ++s) EXPECT_EQ(next[s], kPerStream);
  EXPECT_EQ(o.held_messages(), 0u);
}

TEST(OrderedReleaseTest, StaleAndDuplicateMessagesAreRefused) {
  OrderedRelease o;
  std::vector<CompletedMessage> out;
  o.Push(Msg(1, 0), &out);
  EXPECT_EQ(o.Push(Msg(1, 0), &out), PushResult::kStale);
  EXPECT_EQ(o.Push(Msg(1, 5), &out), PushResult::kOk);
  EXPECT_EQ(o.Push(Msg(1, 5), &out), PushResult::kDuplicate);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(o.stats().stale, 1u);
  EXPECT_EQ(o.stats().duplicate, 1u);
}

TEST(OrderedReleaseTest, StreamLimitRefusesNewStreams) {
  OrderedReleaseOptions opts;
  opts.max_streams = 2;
  BufferPool pool;
  OrderedRelease o(opts, &pool);
  std::vector<CompletedMessage> out;
  EXPECT_EQ(o.Push(Msg(1, 0), &out), PushResult::kOk);
  EXPECT_EQ(o.Push(Msg(2, 1), &out), PushResult::kOk);
  EXPECT_EQ(o.Push(Msg(3, 0, 100), &out), PushResult::kTooManyStreams);
  EXPECT_EQ(o.Push(Msg(0, 0), &out), PushResult::kOk) << "stream 0 is free";
  EXPECT_EQ(o.Push(Msg(2, 0), &out), PushResult::kOk) << "known stream ok";
  EXPECT_EQ(o.stats().too_many_streams, 1u);
  EXPECT_EQ(pool.pooled_buffers(), 1u) << "dropped buffer recycled";
}

TEST(OrderedReleaseTest, ResetRestartsStreamsAndDropsHeld) {
  OrderedRelease o;
  std::vector<CompletedMessage> out;
  o.Push(Msg(1, 0), &out);
  o.Push(Msg(1, 2), &out);
  o.Push(Msg(2, 3), &out);
  EXPECT_EQ(o.Reset(), 2u);
  EXPECT_EQ(o.held_messages(), 0u);
  EXPECT_EQ(o.held_bytes(), 0u);
  EXPECT_EQ(o.tracked_streams(), 0u);
  out.clear();
  EXPECT_EQ(o.Push(Msg(1, 0), &out), PushResult::kOk);
  EXPECT_EQ(out.size(), 1u);
}

TEST(OrderedReleaseTest, ResetStreamAffectsOnlyThatStream) {
  OrderedRelease o;
  std::vector<CompletedMessage> out;
  o.Push(Msg(1, 1), &out);
  o.Push(Msg(2, 1), &out);
  EXPECT_EQ(o.ResetStream(1), 1u);
  EXPECT_EQ(o.held_messages(), 1u);
  o.Push(Msg(2, 0), &out);
  EXPECT_EQ(out.size(), 2u);
}

TEST(OrderedReleaseTest, SeqMoreThanHalfTheSpaceAheadIsStale) {
  OrderedRelease o;
  std::vector<CompletedMessage> out;
  for (uint32_t q = 0; q < 3; ++q) o.Push(Msg(1, q), &out);
  EXPECT_EQ(o.Push(Msg(1, 0x80000003u), &out), PushResult::kStale);
  EXPECT_EQ(o.Push(Msg(1, 0x80000002u), &out), PushResult::kOk);
}

}  // namespace
}  // namespace braid::reorder

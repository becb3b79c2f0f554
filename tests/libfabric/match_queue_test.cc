#include "libfabric/match_queue.h"

#include <string>

#include "gtest/gtest.h"

namespace braid::libfabric {
namespace {

NetAddr Peer(uint16_t port) { return NetAddr::Ipv4(0x7f000001, port); }

RecvSpec Spec(uint64_t tag, uint64_t ignore = 0, NetAddr src = NetAddr()) {
  RecvSpec s;
  s.src = src;
  s.tag = tag;
  s.ignore = ignore;
  return s;
}

PostedRecv Recv(int id, uint64_t tag = 0, uint64_t ignore = 0,
                NetAddr src = NetAddr()) {
  PostedRecv r;
  r.context = reinterpret_cast<void*>(static_cast<uintptr_t>(id));
  r.spec = Spec(tag, ignore, src);
  return r;
}

int Id(const PostedRecv& r) {
  return static_cast<int>(reinterpret_cast<uintptr_t>(r.context));
}

UnexpectedMsg Msg(NetAddr peer, uint64_t tag, size_t payload) {
  UnexpectedMsg m;
  m.peer = peer;
  m.header.kind = MsgKind::kTagged;
  m.header.tag = tag;
  m.data.assign(kHeaderBytes + payload, 0);
  return m;
}

TEST(MatchesTest, TagsMustAgreeOutsideTheIgnoreMask) {
  RecvSpec s = Spec(0xab00, 0x00ff);
  EXPECT_TRUE(Matches(s, Peer(1), 0xab00));
  EXPECT_TRUE(Matches(s, Peer(1), 0xab7f));
  EXPECT_FALSE(Matches(s, Peer(1), 0xac00));
}

TEST(MatchesTest, DirectedReceiveTakesOnlyItsSource) {
  RecvSpec s = Spec(0, 0, Peer(1));
  EXPECT_TRUE(Matches(s, Peer(1), 0));
  EXPECT_FALSE(Matches(s, Peer(2), 0));
  EXPECT_TRUE(Matches(RecvSpec{}, Peer(2), 0));
}

TEST(PostedQueueTest, MessageTakesTheOldestMatchingReceive) {
  PostedQueue q;
  q.Post(Recv(1, 5));
  q.Post(Recv(2, 7));
  q.Post(Recv(3, 7));
  PostedRecv out;
  ASSERT_TRUE(q.TakeMatch(Peer(1), 7, &out));
  EXPECT_EQ(Id(out), 2);
  ASSERT_TRUE(q.TakeMatch(Peer(1), 7, &out));
  EXPECT_EQ(Id(out), 3);
  EXPECT_FALSE(q.TakeMatch(Peer(1), 7, &out));
  EXPECT_EQ(q.size(), 1u);
}

TEST(PostedQueueTest, CancelRemovesByContextAndKeepsTheOrder) {
  PostedQueue q;
  for (int i = 1; i <= 4; ++i) q.Post(Recv(i));
  PostedRecv out;
  ASSERT_TRUE(q.TakeByContext(reinterpret_cast<void*>(uintptr_t{3}), &out));
  EXPECT_FALSE(q.TakeByContext(reinterpret_cast<void*>(uintptr_t{3}), &out));
  std::string order;
  while (q.TakeMatch(Peer(1), 0, &out)) order += std::to_string(Id(out));
  EXPECT_EQ(order, "124");
}

TEST(PostedQueueTest, KeepsFifoOrderAcrossGrowthAndWrap) {
  PostedQueue q;
  PostedRecv out;
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7; ++i) q.Post(Recv(next_in++));
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(q.TakeMatch(Peer(1), 0, &out));
      ASSERT_EQ(Id(out), next_out++);
    }
  }
  EXPECT_EQ(q.size(), 100u);
}

TEST(UnexpectedQueueTest, ReceiveTakesTheOldestMatchingMessage) {
  UnexpectedQueue q;
  q.Push(Msg(Peer(1), 1, 10));
  q.Push(Msg(Peer(2), 2, 20));
  q.Push(Msg(Peer(3), 2, 30));
  EXPECT_EQ(q.bytes(), 60u);
  UnexpectedMsg out;
  ASSERT_TRUE(q.TakeMatch(Spec(2), &out));
  EXPECT_EQ(out.peer, Peer(2));
  EXPECT_EQ(q.bytes(), 40u);
  ASSERT_TRUE(q.TakeMatch(Spec(0, ~0ull, Peer(1)), &out));
  EXPECT_EQ(out.header.tag, 1u);
  EXPECT_FALSE(q.TakeMatch(Spec(0, ~0ull, Peer(1)), &out));
  EXPECT_EQ(q.size(), 1u);
}

TEST(UnexpectedQueueTest, PeekLeavesTheMessageAndTakeAllEmpties) {
  UnexpectedQueue q;
  q.Push(Msg(Peer(1), 9, 4));
  const UnexpectedMsg* m = q.Peek(Spec(9));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->payload_bytes(), 4u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.Peek(Spec(8)), nullptr);
  EXPECT_EQ(q.TakeAll().size(), 1u);
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.bytes(), 0u);
}

}  // namespace
}  // namespace braid::libfabric

// UC semantics of braid0: connected QPs that carry SEND and RDMA WRITE
// (with and without immediate) but no READ or atomics, and whose responder
// drops what RC would NAK (no receive posted, bad key) while the requester
// completes the work request as sent. braid still carries UC messages
// reliably, so a UC completion means delivered unless the responder
// dropped the message.
#include <infiniband/verbs.h>

#include <cstring>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

PairOptions Uc() {
  PairOptions o;
  o.type = IBV_QPT_UC;
  o.qp_access = IBV_ACCESS_REMOTE_WRITE;
  return o;
}

TEST(UcTest, SendAndWriteWithAndWithoutImmediateAreByteExact) {
  Pair p(Uc());
  ASSERT_TRUE(p.ok());
  ibv_qp_attr qa;
  ibv_qp_init_attr qia;
  ASSERT_EQ(ibv_query_qp(p.a.qp, &qa, IBV_QP_STATE, &qia), 0);
  EXPECT_EQ(qia.qp_type, IBV_QPT_UC);
  EXPECT_EQ(qa.qp_state, IBV_QPS_RTS);
  Fill(p.a.buf, 0, 200000, 3);
  ASSERT_EQ(PostRecv(p.b, 1, 300000, 70000), 0);
  ASSERT_EQ(PostRecv(p.b, 2, 400000, 100), 0);
  ASSERT_EQ(PostRecv(p.b, 3, 0, 0), 0);
  ASSERT_EQ(PostSend(p.a, 11, IBV_WR_SEND, 0, 65536), 0);
  ASSERT_EQ(PostSend(p.a, 12, IBV_WR_SEND_WITH_IMM, 65536, 100, 0, 0,
                     IBV_SEND_SIGNALED, htonl(77)),
            0);
  ASSERT_EQ(PostSend(p.a, 13, IBV_WR_RDMA_WRITE, 70000, 100000,
                     p.b.addr(500000), p.b.mr->rkey),
            0);
  ASSERT_EQ(
      PostSend(p.a, 14, IBV_WR_RDMA_WRITE_WITH_IMM, 170000, 30000,
               p.b.addr(700000), p.b.mr->rkey, IBV_SEND_SIGNALED, htonl(78)),
      0);
  std::vector<ibv_wc> sends = PollMany(p.a.scq, 4);
  ASSERT_EQ(sends.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(sends[i].status, IBV_WC_SUCCESS) << i;
    EXPECT_EQ(sends[i].wr_id, 11 + i);
  }
  std::vector<ibv_wc> recvs = PollMany(p.b.rcq, 3);
  ASSERT_EQ(recvs.size(), 3u);
  EXPECT_EQ(recvs[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(recvs[0].byte_len, 65536u);
  EXPECT_EQ(recvs[1].wc_flags & IBV_WC_WITH_IMM, IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(recvs[1].imm_data), 77u);
  EXPECT_EQ(recvs[2].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(ntohl(recvs[2].imm_data), 78u);
  EXPECT_EQ(std::memcmp(&p.b.buf[300000], &p.a.buf[0], 65536), 0);
  EXPECT_EQ(std::memcmp(&p.b.buf[400000], &p.a.buf[65536], 100), 0);
  EXPECT_EQ(std::memcmp(&p.b.buf[500000], &p.a.buf[70000], 100000), 0);
  EXPECT_EQ(std::memcmp(&p.b.buf[700000], &p.a.buf[170000], 30000), 0);
}

TEST(UcTest, ReadAndAtomicsAreRefusedAtPost) {
  Pair p(Uc());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(PostSend(p.a, 1, IBV_WR_RDMA_READ, 0, 8, p.b.addr(0), p.b.mr->rkey),
            EINVAL);
  EXPECT_EQ(PostSend(p.a, 2, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, p.b.addr(0),
                     p.b.mr->rkey),
            EINVAL);
  EXPECT_TRUE(StaysEmpty(p.a.scq));
}

// RC would wait out RNR or fail with a remote access error; UC drops the
// message at the responder, completes the request as sent, and both QPs
// carry on.
TEST(UcTest, WhatRcWouldNakIsDroppedAndTheQpsCarryOn) {
  Pair p(Uc());
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 4096, 9);
  // No receive posted.
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 1000), 0);
  ibv_wc wc{};
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  // A WRITE with a bad key touches nothing.
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_RDMA_WRITE, 0, 2000, p.b.addr(0),
                     p.b.mr->rkey ^ 0x100),
            0);
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(AllZero(p.b.buf));
  EXPECT_TRUE(StaysEmpty(p.b.rcq));
  // The next SEND finds its receive: the dropped one never shows up.
  ASSERT_EQ(PostRecv(p.b, 7, 0, 4096), 0);
  ASSERT_EQ(PostSend(p.a, 3, IBV_WR_SEND, 1000, 300), 0);
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.wr_id, 7u);
  EXPECT_EQ(wc.byte_len, 300u);
  EXPECT_EQ(std::memcmp(&p.b.buf[0], &p.a.buf[1000], 300), 0);
  ibv_qp_attr qa;
  ibv_qp_init_attr qia;
  ASSERT_EQ(ibv_query_qp(p.b.qp, &qa, IBV_QP_STATE, &qia), 0);
  EXPECT_EQ(qa.qp_state, IBV_QPS_RTS);
}

}  // namespace
}  // namespace braid::verbs_compat::testing

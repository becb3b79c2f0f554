// The post path of braid0 (qp_post.cc), driven through libibverbs like an
// application: IBV_SEND_FENCE, and chained posts that fail part-way.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

ibv_qp_cap CapOf(ibv_qp* qp) {
  ibv_qp_attr at{};
  ibv_qp_init_attr init{};
  EXPECT_EQ(ibv_query_qp(qp, &at, IBV_QP_CAP, &init), 0);
  return init.cap;
}

// Links wrs[i].next to wrs[i + 1].
void Chain(std::vector<ibv_send_wr>& wrs) {
  for (size_t i = 0; i + 1 < wrs.size(); ++i) wrs[i].next = &wrs[i + 1];
}

void ChainRecv(std::vector<ibv_recv_wr>& wrs) {
  for (size_t i = 0; i + 1 < wrs.size(); ++i) wrs[i].next = &wrs[i + 1];
}

// READ of the peer's bytes into local L, then a SEND of L posted with
// IBV_SEND_FENCE in the same chain: the SEND must carry what the READ
// brought. `len` 64 is gathered (copied), 16384 goes zero-copy.
class FenceSizeTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(FenceSizeTest, FencedSendCarriesTheBytesAnEarlierReadBrought) {
  const uint32_t len = GetParam();
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.b.buf, 100000, len, 21);  // R, read by a into L = a's 0
  ASSERT_EQ(PostRecv(p.b, 7, 300000, len), 0);
  ibv_sge read_sge = p.a.Sge(0, len);
  ibv_sge send_sge = p.a.Sge(0, len);
  std::vector<ibv_send_wr> wrs(2);
  wrs[0].wr_id = 1;
  wrs[0].opcode = IBV_WR_RDMA_READ;
  wrs[0].sg_list = &read_sge;
  wrs[0].num_sge = 1;
  wrs[0].send_flags = IBV_SEND_SIGNALED;
  wrs[0].wr.rdma.remote_addr = p.b.addr(100000);
  wrs[0].wr.rdma.rkey = p.b.mr->rkey;
  wrs[1].wr_id = 2;
  wrs[1].opcode = IBV_WR_SEND;
  wrs[1].sg_list = &send_sge;
  wrs[1].num_sge = 1;
  wrs[1].send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
  Chain(wrs);
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(p.a.qp, wrs.data(), &bad), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(wcs[1].status, IBV_WC_SUCCESS);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, len);
  EXPECT_EQ(std::memcmp(&p.b.buf[300000], &p.b.buf[100000], len), 0)
      << "the fenced SEND carried stale bytes";
}

INSTANTIATE_TEST_SUITE_P(GatheredAndZeroCopy, FenceSizeTest,
                         ::testing::Values(64u, 16384u));

TEST(FenceTest, FencedSendCarriesTheValueAnEarlierFetchAddReturned) {
  Pair p;
  ASSERT_TRUE(p.ok());
  const uint64_t before = 0x1122334455667788ull;
  std::memcpy(&p.b.buf[64], &before, 8);
  ASSERT_EQ(PostRecv(p.b, 7, 4096, 8), 0);
  ibv_sge atomic_sge = p.a.Sge(0, 8);
  ibv_sge send_sge = p.a.Sge(0, 8);
  std::vector<ibv_send_wr> wrs(2);
  wrs[0].wr_id = 1;
  wrs[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  wrs[0].sg_list = &atomic_sge;
  wrs[0].num_sge = 1;
  wrs[0].send_flags = IBV_SEND_SIGNALED;
  wrs[0].wr.atomic.remote_addr = p.b.addr(64);
  wrs[0].wr.atomic.rkey = p.b.mr->rkey;
  wrs[0].wr.atomic.compare_add = 1;
  wrs[1].wr_id = 2;
  wrs[1].opcode = IBV_WR_SEND;
  wrs[1].sg_list = &send_sge;
  wrs[1].num_sge = 1;
  wrs[1].send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
  Chain(wrs);
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(p.a.qp, wrs.data(), &bad), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[1].status, IBV_WC_SUCCESS);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  uint64_t got = 0;
  std::memcpy(&got, &p.b.buf[4096], 8);
  EXPECT_EQ(got, before);
}

TEST(FenceTest, WrApiFenceFlagWaitsForTheRead) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ibv_qp_ex* qpx = ibv_qp_to_qp_ex(p.a.qp);
  ASSERT_NE(qpx, nullptr);
  Fill(p.b.buf, 100000, 256, 22);
  ASSERT_EQ(PostRecv(p.b, 7, 300000, 256), 0);
  ibv_wr_start(qpx);
  qpx->wr_id = 1;
  qpx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_read(qpx, p.b.mr->rkey, p.b.addr(100000));
  ibv_wr_set_sge(qpx, p.a.mr->lkey, p.a.addr(0), 256);
  qpx->wr_id = 2;
  qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
  ibv_wr_send(qpx);
  ibv_wr_set_sge(qpx, p.a.mr->lkey, p.a.addr(0), 256);
  ASSERT_EQ(ibv_wr_complete(qpx), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(std::memcmp(&p.b.buf[300000], &p.b.buf[100000], 256), 0);
}

TEST(FenceTest, WrsAfterAFencedOneKeepPostOrder) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.b.buf, 100000, 512, 23);
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(PostRecv(p.b, i, 300000 + i * 512, 512), 0);
  // READ, fenced SEND of what it read, then unfenced SENDs and a WRITE:
  // nothing may overtake the fenced SEND, completions stay in post order.
  std::vector<ibv_sge> sges(6);
  std::vector<ibv_send_wr> wrs(6);
  for (int i = 0; i < 6; ++i) {
    sges[i] = p.a.Sge(i == 1 ? 0 : 4096 * i, 512);
    wrs[i].wr_id = i;
    wrs[i].sg_list = &sges[i];
    wrs[i].num_sge = 1;
    wrs[i].send_flags = IBV_SEND_SIGNALED;
    wrs[i].opcode = IBV_WR_SEND;
  }
  wrs[0].opcode = IBV_WR_RDMA_READ;
  sges[0] = p.a.Sge(0, 512);
  wrs[0].wr.rdma.remote_addr = p.b.addr(100000);
  wrs[0].wr.rdma.rkey = p.b.mr->rkey;
  wrs[1].send_flags |= IBV_SEND_FENCE;
  wrs[5].opcode = IBV_WR_RDMA_WRITE;
  wrs[5].wr.rdma.remote_addr = p.b.addr(500000);
  wrs[5].wr.rdma.rkey = p.b.mr->rkey;
  Chain(wrs);
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(p.a.qp, wrs.data(), &bad), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 6);
  ASSERT_EQ(wcs.size(), 6u);
  for (size_t i = 0; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].wr_id, i);
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS);
  }
  std::vector<ibv_wc> rwcs = PollMany(p.b.rcq, 4);
  ASSERT_EQ(rwcs.size(), 4u);
  EXPECT_EQ(rwcs[0].wr_id, 0u);  // the fenced SEND arrived first
  EXPECT_EQ(std::memcmp(&p.b.buf[300000], &p.b.buf[100000], 512), 0);
}

// A chain of `good` signalled 64-byte SENDs followed by `bad_wr`: the post
// fails at `bad_wr`, and the WRs before it are sent and complete.
void ExpectPrefixSentDespite(ibv_send_wr bad_wr, int expected_err) {
  Pair p;
  ASSERT_TRUE(p.ok());
  constexpr int kGood = 3;
  Fill(p.a.buf, 0, 64 * kGood, 31);
  for (int i = 0; i < kGood; ++i) {
    ASSERT_EQ(PostRecv(p.b, i, 100000 + 64 * i, 64), 0);
  }
  std::vector<ibv_sge> sges(kGood);
  std::vector<ibv_send_wr> wrs(kGood + 1);
  for (int i = 0; i < kGood; ++i) {
    sges[i] = p.a.Sge(64 * i, 64);
    wrs[i].wr_id = i;
    wrs[i].opcode = IBV_WR_SEND;
    wrs[i].sg_list = &sges[i];
    wrs[i].num_sge = 1;
    wrs[i].send_flags = IBV_SEND_SIGNALED;
  }
  wrs[kGood] = bad_wr;
  wrs[kGood].wr_id = 99;
  Chain(wrs);
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(p.a.qp, wrs.data(), &bad), expected_err);
  EXPECT_EQ(bad, &wrs[kGood]);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, kGood, 3000);
  ASSERT_EQ(wcs.size(), static_cast<size_t>(kGood))
      << "the WRs before bad_wr were never sent";
  for (int i = 0; i < kGood; ++i) {
    EXPECT_EQ(wcs[i].wr_id, static_cast<uint64_t>(i));
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS);
  }
  EXPECT_TRUE(StaysEmpty(p.a.scq));  // nothing for the bad WR
  EXPECT_EQ(PollMany(p.b.rcq, kGood).size(), static_cast<size_t>(kGood));
  EXPECT_EQ(std::memcmp(&p.b.buf[100000], p.a.buf.data(), 64 * kGood), 0);
}

TEST(PostSendChainTest, BadOpcodeMidChainStillSendsTheWrsBeforeIt) {
  ibv_send_wr w{};
  w.opcode = static_cast<ibv_wr_opcode>(0x7f);
  ExpectPrefixSentDespite(w, EINVAL);
}

TEST(PostSendChainTest, TooManySgesMidChainStillSendsTheWrsBeforeIt) {
  static ibv_sge sges[64] = {};
  ibv_send_wr w{};
  w.opcode = IBV_WR_SEND;
  w.sg_list = sges;
  w.num_sge = 64;
  ExpectPrefixSentDespite(w, EINVAL);
}

TEST(PostSendChainTest, InlineTooLargeMidChainStillSendsTheWrsBeforeIt) {
  static uint8_t data[4096] = {};
  static ibv_sge sge = {reinterpret_cast<uintptr_t>(data), sizeof(data), 0};
  ibv_send_wr w{};
  w.opcode = IBV_WR_SEND;
  w.sg_list = &sge;
  w.num_sge = 1;
  w.send_flags = IBV_SEND_INLINE;
  ExpectPrefixSentDespite(w, EINVAL);
}

TEST(PostSendChainTest, OverflowingTheSendQueueSendsTheWrsThatFit) {
  Pair p;
  ASSERT_TRUE(p.ok());
  const uint32_t depth = CapOf(p.a.qp).max_send_wr;
  ASSERT_GT(depth, 0u);
  ASSERT_LT(depth, 256u);  // the send CQ holds them all
  Fill(p.a.buf, 0, 8 * (depth + 1), 32);
  std::vector<ibv_sge> sges(depth + 1);
  std::vector<ibv_send_wr> wrs(depth + 1);
  for (uint32_t i = 0; i <= depth; ++i) {
    sges[i] = p.a.Sge(8 * i, 8);
    wrs[i].wr_id = i;
    wrs[i].opcode = IBV_WR_RDMA_WRITE;
    wrs[i].sg_list = &sges[i];
    wrs[i].num_sge = 1;
    wrs[i].send_flags = IBV_SEND_SIGNALED;
    wrs[i].wr.rdma.remote_addr = p.b.addr(8 * i);
    wrs[i].wr.rdma.rkey = p.b.mr->rkey;
  }
  Chain(wrs);
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(p.a.qp, wrs.data(), &bad), ENOMEM);
  EXPECT_EQ(bad, &wrs[depth]);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, depth, 5000);
  ASSERT_EQ(wcs.size(), depth);
  for (uint32_t i = 0; i < depth; ++i) {
    EXPECT_EQ(wcs[i].wr_id, i);
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS);
  }
  EXPECT_EQ(std::memcmp(p.b.buf.data(), p.a.buf.data(), 8 * depth), 0);
  EXPECT_TRUE(AllZero(std::vector<uint8_t>(p.b.buf.begin() + 8 * depth,
                                           p.b.buf.begin() + 8 * depth + 8)));
}

TEST(PostSendChainTest, WrCompleteThatFailsMidwayStillSendsTheWrsBeforeIt) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ibv_qp_ex* qpx = ibv_qp_to_qp_ex(p.a.qp);
  ASSERT_NE(qpx, nullptr);
  Fill(p.a.buf, 0, 128, 33);
  ASSERT_EQ(PostRecv(p.b, 1, 100000, 64), 0);
  ASSERT_EQ(PostRecv(p.b, 2, 100064, 64), 0);
  std::vector<ibv_sge> many(64, p.a.Sge(0, 1));
  ibv_wr_start(qpx);
  qpx->wr_flags = IBV_SEND_SIGNALED;
  qpx->wr_id = 1;
  ibv_wr_send(qpx);
  ibv_wr_set_sge(qpx, p.a.mr->lkey, p.a.addr(0), 64);
  qpx->wr_id = 2;
  ibv_wr_send(qpx);
  ibv_wr_set_sge(qpx, p.a.mr->lkey, p.a.addr(64), 64);
  qpx->wr_id = 3;
  ibv_wr_send(qpx);
  ibv_wr_set_sge_list(qpx, many.size(), many.data());  // too many SGEs
  EXPECT_EQ(ibv_wr_complete(qpx), EINVAL);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2, 3000);
  ASSERT_EQ(wcs.size(), 2u) << "the WRs before the bad one were never sent";
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(PollMany(p.b.rcq, 2).size(), 2u);
  EXPECT_EQ(std::memcmp(&p.b.buf[100000], p.a.buf.data(), 128), 0);
}

TEST(PostRecvChainTest, ReceivesBeforeTheBadOneAreFlushedInErr) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(p.b.qp, &at, IBV_QP_STATE), 0);
  std::vector<ibv_sge> sges(64, p.b.Sge(0, 1));
  std::vector<ibv_recv_wr> wrs(3);
  for (int i = 0; i < 3; ++i) {
    wrs[i].wr_id = i;
    wrs[i].sg_list = sges.data();
    wrs[i].num_sge = 1;
  }
  wrs[2].num_sge = 64;  // more than max_recv_sge
  ChainRecv(wrs);
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_recv(p.b.qp, wrs.data(), &bad), EINVAL);
  EXPECT_EQ(bad, &wrs[2]);
  std::vector<ibv_wc> wcs = PollMany(p.b.rcq, 2, 1000);
  ASSERT_EQ(wcs.size(), 2u) << "receives posted in ERR were not flushed";
  EXPECT_EQ(wcs[0].wr_id, 0u);
  EXPECT_EQ(wcs[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wcs[1].wr_id, 1u);
  EXPECT_TRUE(StaysEmpty(p.b.rcq));
}

TEST(PostRecvChainTest, SrqReceivesBeforeTheBadOneAreUsable) {
  PairOptions o;
  o.use_srq = true;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  std::vector<ibv_sge> sges(64, p.b.Sge(100000, 64));
  std::vector<ibv_recv_wr> wrs(2);
  wrs[0].wr_id = 5;
  wrs[0].sg_list = sges.data();
  wrs[0].num_sge = 1;
  wrs[1].sg_list = sges.data();
  wrs[1].num_sge = 64;  // more than the SRQ's max_sge
  ChainRecv(wrs);
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_srq_recv(p.b.srq, wrs.data(), &bad), EINVAL);
  EXPECT_EQ(bad, &wrs[1]);
  Fill(p.a.buf, 0, 64, 34);
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 64), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.wr_id, 5u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(&p.b.buf[100000], p.a.buf.data(), 64), 0);
}

}  // namespace
}  // namespace braid::verbs_compat::testing

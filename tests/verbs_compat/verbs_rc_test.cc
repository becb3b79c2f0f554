// RC semantics of braid0, driven through libibverbs like an application:
// two connected QPs on two contexts (two endpoints) over loopback.
#include <infiniband/verbs.h>
#include <poll.h>

#include <cstring>
#include <thread>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

TEST(Braid0DeviceTest, IsListedLastAndReportsAnActiveEthernetPort) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_NE(list, nullptr);
  ASSERT_GE(n, 1);
  EXPECT_STREQ(ibv_get_device_name(list[n - 1]), "braid0");
  EXPECT_EQ(list[n], nullptr);
  ibv_context* ctx = ibv_open_device(list[n - 1]);
  ibv_free_device_list(list);
  ASSERT_NE(ctx, nullptr);
  ibv_port_attr pa;
  ASSERT_EQ(ibv_query_port(ctx, 1, &pa), 0);
  EXPECT_EQ(pa.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(pa.active_mtu, IBV_MTU_4096);
  ibv_device_attr da;
  ASSERT_EQ(ibv_query_device(ctx, &da), 0);
  EXPECT_EQ(da.vendor_id, 0xFFFFFFu);
  EXPECT_EQ(da.phys_port_cnt, 1);
  ibv_device_attr_ex dax;
  ASSERT_EQ(ibv_query_device_ex(ctx, nullptr, &dax), 0);
  EXPECT_EQ(dax.orig_attr.max_qp_wr, da.max_qp_wr);
  ibv_gid_entry ge;
  ASSERT_EQ(ibv_query_gid_ex(ctx, 1, 0, &ge, 0), 0);
  EXPECT_EQ(ge.gid_type, IBV_GID_TYPE_ROCE_V2);
  EXPECT_EQ(ibv_close_device(ctx), 0);
}

TEST(Braid0DeviceTest, TwoContextsHaveDistinctGidsAndLids) {
  ibv_context* a = OpenBraid0();
  ibv_context* b = OpenBraid0();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ibv_gid ga, gb;
  ASSERT_EQ(ibv_query_gid(a, 1, 0, &ga), 0);
  ASSERT_EQ(ibv_query_gid(b, 1, 0, &gb), 0);
  EXPECT_NE(std::memcmp(ga.raw, gb.raw, 16), 0);
  ibv_port_attr pa, pb;
  ibv_query_port(a, 1, &pa);
  ibv_query_port(b, 1, &pb);
  EXPECT_NE(pa.lid, pb.lid);
  EXPECT_EQ(ibv_query_gid(a, 1, 1, &ga), -1);  // one GID per port
  ibv_close_device(a);
  ibv_close_device(b);
}

TEST(RcTest, SendDeliversBytesExactlyAcrossScatterGatherLists) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 3000, 1);
  // Receive into two SGEs (1000 + 4000 bytes), send from three.
  ibv_sge rs[2] = {p.b.Sge(100, 1000), p.b.Sge(8192, 4000)};
  ibv_recv_wr rwr{};
  rwr.wr_id = 77;
  rwr.sg_list = rs;
  rwr.num_sge = 2;
  ibv_recv_wr* rbad;
  ASSERT_EQ(ibv_post_recv(p.b.qp, &rwr, &rbad), 0);
  ibv_sge ss[3] = {p.a.Sge(0, 500), p.a.Sge(500, 1500), p.a.Sge(2000, 1000)};
  ibv_send_wr swr{};
  swr.wr_id = 5;
  swr.opcode = IBV_WR_SEND;
  swr.sg_list = ss;
  swr.num_sge = 3;
  swr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* sbad;
  ASSERT_EQ(ibv_post_send(p.a.qp, &swr, &sbad), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_EQ(wc.wr_id, 77u);
  EXPECT_EQ(wc.byte_len, 3000u);
  EXPECT_EQ(wc.qp_num, p.b.qp->qp_num);
  EXPECT_EQ(wc.src_qp, p.a.qp->qp_num);
  EXPECT_FALSE(wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(std::memcmp(&p.b.buf[100], &p.a.buf[0], 1000), 0);
  EXPECT_EQ(std::memcmp(&p.b.buf[8192], &p.a.buf[1000], 2000), 0);
  EXPECT_EQ(p.b.buf[8192 + 2000], 0);  // nothing past the message
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  EXPECT_EQ(wc.wr_id, 5u);
}

TEST(RcTest, SendWithImmediateDeliversTheImmediate) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 64, 2);
  ASSERT_EQ(PostRecv(p.b, 1, 0, 64), 0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_SEND_WITH_IMM, 0, 64, 0, 0,
                     IBV_SEND_SIGNALED, htonl(0xdeadbeef)),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(ntohl(wc.imm_data), 0xdeadbeefu);
  EXPECT_EQ(std::memcmp(p.b.buf.data(), p.a.buf.data(), 64), 0);
}

TEST(RcTest, RdmaWriteLandsAtTheRemoteOffsetWithoutAReceive) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 100000, 3);
  ASSERT_EQ(PostSend(p.a, 9, IBV_WR_RDMA_WRITE, 0, 100000, p.b.addr(4096),
                     p.b.mr->rkey),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(std::memcmp(&p.b.buf[4096], &p.a.buf[0], 100000), 0);
  EXPECT_EQ(p.b.buf[4095], 0);
  EXPECT_EQ(p.b.buf[4096 + 100000], 0);
  EXPECT_TRUE(StaysEmpty(p.b.rcq));
}

TEST(RcTest, WriteWithImmediateConsumesAReceiveAndReportsLength) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 5000, 4);
  ASSERT_EQ(PostRecv(p.b, 31, 0, 0), 0);
  ASSERT_EQ(
      PostSend(p.a, 32, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 5000, p.b.addr(65536),
               p.b.mr->rkey, IBV_SEND_SIGNALED, htonl(42)),
      0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(wc.wr_id, 31u);
  EXPECT_EQ(wc.byte_len, 5000u);
  EXPECT_EQ(ntohl(wc.imm_data), 42u);
  EXPECT_EQ(std::memcmp(&p.b.buf[65536], &p.a.buf[0], 5000), 0);
}

TEST(RcTest, RdmaReadReturnsTheRemoteBytes) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.b.buf, 200000, 70000, 5);
  ASSERT_EQ(PostSend(p.a, 11, IBV_WR_RDMA_READ, 1000, 70000, p.b.addr(200000),
                     p.b.mr->rkey),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(wc.byte_len, 70000u);
  EXPECT_EQ(std::memcmp(&p.a.buf[1000], &p.b.buf[200000], 70000), 0);
}

uint64_t Load64(const std::vector<uint8_t>& v, size_t off) {
  uint64_t x;
  std::memcpy(&x, &v[off], 8);
  return x;
}
void Store64(std::vector<uint8_t>& v, size_t off, uint64_t x) {
  std::memcpy(&v[off], &x, 8);
}

TEST(RcTest, FetchAddReturnsTheOriginalValueAndAdds) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Store64(p.b.buf, 64, 1000);
  ASSERT_EQ(PostAtomic(p.a, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, p.b.addr(64),
                       p.b.mr->rkey, 23, 0),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_FETCH_ADD);
  EXPECT_EQ(Load64(p.a.buf, 0), 1000u);
  EXPECT_EQ(Load64(p.b.buf, 64), 1023u);
}

TEST(RcTest, CompareSwapSwapsOnlyWhenTheValueMatches) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Store64(p.b.buf, 128, 7);
  ASSERT_EQ(PostAtomic(p.a, 1, IBV_WR_ATOMIC_CMP_AND_SWP, 0, p.b.addr(128),
                       p.b.mr->rkey, 8, 99),
            0);  // no match
  ASSERT_EQ(PostAtomic(p.a, 2, IBV_WR_ATOMIC_CMP_AND_SWP, 8, p.b.addr(128),
                       p.b.mr->rkey, 7, 55),
            0);  // match
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].opcode, IBV_WC_COMP_SWAP);
  EXPECT_EQ(wcs[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(Load64(p.a.buf, 0), 7u);
  EXPECT_EQ(Load64(p.a.buf, 8), 7u);
  EXPECT_EQ(Load64(p.b.buf, 128), 55u);
}

TEST(RcTest, CompletionsFollowPostOrderAcrossOpcodes) {
  Pair p;
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(PostRecv(p.b, 100 + i, i * 1024, 1024), 0);
  Store64(p.b.buf, 500000, 0);
  // A slow READ first, then quick ops whose acks could overtake it.
  ASSERT_EQ(PostSend(p.a, 0, IBV_WR_RDMA_READ, 600000, 300000, p.b.addr(100000),
                     p.b.mr->rkey),
            0);
  for (int i = 1; i < 20; ++i) {
    const ibv_wr_opcode op = i % 3 == 0   ? IBV_WR_SEND
                             : i % 3 == 1 ? IBV_WR_RDMA_WRITE
                                          : IBV_WR_RDMA_READ;
    if (op == IBV_WR_SEND && i / 3 >= 8) continue;
    ASSERT_EQ(PostSend(p.a, i, op, 1024 * i, 512, p.b.addr(300000 + 512 * i),
                       p.b.mr->rkey),
              0);
  }
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 20);
  ASSERT_EQ(wcs.size(), 20u);
  for (size_t i = 1; i < wcs.size(); ++i) {
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS);
    EXPECT_LT(wcs[i - 1].wr_id, wcs[i].wr_id) << "completion out of order";
  }
}

TEST(RcTest, UnsignaledWorkRequestsCompleteSilently) {
  Pair p;
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 9; ++i) {
    ASSERT_EQ(PostSend(p.a, i, IBV_WR_RDMA_WRITE, 0, 100, p.b.addr(0),
                       p.b.mr->rkey, 0),
              0);
  }
  ASSERT_EQ(PostSend(p.a, 9, IBV_WR_RDMA_WRITE, 0, 100, p.b.addr(0),
                     p.b.mr->rkey, IBV_SEND_SIGNALED),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.wr_id, 9u);
  EXPECT_TRUE(StaysEmpty(p.a.scq));
}

TEST(RcTest, InlineSendCopiesTheDataAtPostTime) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(PostRecv(p.b, 1, 0, 128), 0);
  std::memset(p.a.buf.data(), 0xab, 100);
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 100, 0, 0,
                     IBV_SEND_SIGNALED | IBV_SEND_INLINE),
            0);
  std::memset(p.a.buf.data(), 0xcd, 100);  // reuse the buffer at once
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.byte_len, 100u);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(p.b.buf[i], 0xab);
}

TEST(RcTest, InlineLargerThanTheQpAllowsIsRejected) {
  Pair p;
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 4000, 0, 0,
                     IBV_SEND_SIGNALED | IBV_SEND_INLINE),
            EINVAL);
}

// braid0's deliberate departure from RC (docs/verbs.md): a remote access
// error fails its WR alone; neither QP goes to ERR.
TEST(RcTest, BadRkeyIsRemoteAccessErrorTouchesNothingAndFailsOnlyItsWr) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 4096, 6);
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 4096, p.b.addr(0),
                     p.b.mr->rkey + 0x100),
            0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_RDMA_WRITE, 0, 16, p.b.addr(8192),
                     p.b.mr->rkey, 0),
            0);
  ASSERT_EQ(PostRecv(p.b, 4, 16384, 16), 0);
  ASSERT_EQ(PostSend(p.a, 3, IBV_WR_SEND, 0, 16), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(wcs[1].wr_id, 3u);  // 2 is unsignaled and succeeded
  EXPECT_EQ(wcs[1].status, IBV_WC_SUCCESS);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.wr_id, 4u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(p.b.buf[i], 0) << i;
  EXPECT_EQ(std::memcmp(&p.b.buf[8192], &p.a.buf[0], 16), 0);
  EXPECT_EQ(StateOf(p.a.qp), IBV_QPS_RTS);
  EXPECT_EQ(StateOf(p.b.qp), IBV_QPS_RTS);
  // No asynchronous event on either side.
  pollfd pfd{p.b.ctx->async_fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 50), 0);
  pfd.fd = p.a.ctx->async_fd;
  EXPECT_EQ(poll(&pfd, 1, 50), 0);
}

// Any other remote error keeps RC's rule: the QP goes to ERR and every
// later WR (send and receive, signaled or not) is flushed.
TEST(RcTest, AnInvalidRequestFlushesTheRestAndAWrPostedInErr) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 4096, 6);
  ASSERT_EQ(PostAtomic(p.a, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, p.b.addr(4),
                       p.b.mr->rkey, 1, 0),  // misaligned
            0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_RDMA_WRITE, 0, 4096, p.b.addr(8192),
                     p.b.mr->rkey, 0),
            0);
  ASSERT_EQ(PostSend(p.a, 3, IBV_WR_SEND, 0, 16), 0);
  ASSERT_EQ(PostRecv(p.a, 4, 0, 16), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 3);
  ASSERT_EQ(wcs.size(), 3u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_INV_REQ_ERR);
  EXPECT_EQ(wcs[1].wr_id, 2u);  // unsignaled, but flushed WRs complete
  EXPECT_EQ(wcs[1].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wcs[2].status, IBV_WC_WR_FLUSH_ERR);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.rcq, &wc));
  EXPECT_EQ(wc.wr_id, 4u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(StateOf(p.a.qp), IBV_QPS_ERR);
  // A WR posted in ERR is flushed too.
  ASSERT_EQ(PostSend(p.a, 5, IBV_WR_SEND, 0, 16, 0, 0, 0), 0);
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.wr_id, 5u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
}

TEST(RcTest, OutOfBoundsWriteIsRemoteAccessError) {
  Pair p;
  ASSERT_TRUE(p.ok());
  const size_t size = p.b.buf.size();
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 200, p.b.addr(size - 100),
                     p.b.mr->rkey),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
  for (size_t i = size - 100; i < size; ++i) ASSERT_EQ(p.b.buf[i], 0);
}

TEST(RcTest, ReadOfARegionWithoutRemoteReadIsRemoteAccessError) {
  PairOptions o;
  o.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  std::memset(p.a.buf.data(), 0x5a, 64);
  ASSERT_EQ(
      PostSend(p.a, 1, IBV_WR_RDMA_READ, 0, 64, p.b.addr(0), p.b.mr->rkey), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(p.a.buf[i], 0x5a);
}

TEST(RcTest, AtomicWithoutQpAtomicAccessIsRemoteAccessError) {
  PairOptions o;
  o.qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  Store64(p.b.buf, 0, 5);
  ASSERT_EQ(PostAtomic(p.a, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, p.b.addr(0),
                       p.b.mr->rkey, 1, 0),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(Load64(p.b.buf, 0), 5u);
}

TEST(RcTest, SendWaitsOutRnrUntilAReceiveIsPosted) {
  PairOptions o;
  o.min_rnr_timer = 1;  // 10 us between retries
  o.rnr_retry = 7;      // infinite
  Pair p(o);
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 256, 7);
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 256), 0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_SEND, 256, 256), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(p.a.scq, 1, &wc), 0);  // nothing completes yet
  ASSERT_EQ(PostRecv(p.b, 10, 0, 256), 0);
  ASSERT_EQ(PostRecv(p.b, 11, 256, 256), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wcs[1].status, IBV_WC_SUCCESS);
  std::vector<ibv_wc> r = PollMany(p.b.rcq, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].wr_id, 10u);
  EXPECT_EQ(r[1].wr_id, 11u);
  EXPECT_EQ(std::memcmp(p.b.buf.data(), p.a.buf.data(), 512), 0);
}

TEST(RcTest, RnrRetriesExhaustedIsRnrRetryExceeded) {
  PairOptions o;
  o.rnr_retry = 2;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 64), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_RNR_RETRY_EXC_ERR);
}

TEST(RcTest, SendLongerThanTheReceiveIsInvalidRequestOnBothSides) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(PostRecv(p.b, 1, 0, 100), 0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_SEND, 0, 101), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
}

TEST(RcTest, BadLocalKeyIsLocalProtectionError) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ibv_sge sge{p.a.addr(0), 64, p.a.mr->lkey ^ 0x4400};
  ASSERT_EQ(PostSendSgl(p.a, 3, IBV_WR_RDMA_WRITE, &sge, 1, p.b.addr(0),
                        p.b.mr->rkey),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
}

TEST(RcTest, ManySmallMessagesArriveInOrder) {
  Pair p;
  ASSERT_TRUE(p.ok());
  constexpr int kN = 100;
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(PostRecv(p.b, i, 8 * i, 8), 0);
    Store64(p.a.buf, 8 * i, 0x1000 + i);
  }
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(PostSend(p.a, i, IBV_WR_SEND, 8 * i, 8, 0, 0,
                       i == kN - 1 ? IBV_SEND_SIGNALED : 0),
              0);
  }
  std::vector<ibv_wc> r = PollMany(p.b.rcq, kN);
  ASSERT_EQ(r.size(), static_cast<size_t>(kN));
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(r[i].wr_id, static_cast<uint64_t>(i));
    EXPECT_EQ(Load64(p.b.buf, 8 * i), 0x1000u + i);
  }
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.wr_id, static_cast<uint64_t>(kN - 1));
}

}  // namespace
}  // namespace braid::verbs_compat::testing

// braid0 objects beyond the RC data path: the QP state machine as a real
// device enforces it, SRQs, UD with GRH, completion channels with a real
// fd, the extended (ibv_wr_*) API, and resource ownership rules.
#include <infiniband/verbs.h>
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

struct Bare {
  Bare() {
    ctx = OpenBraid0();
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, 16, nullptr, nullptr, 0);
    ibv_qp_init_attr qa{};
    qa.send_cq = cq;
    qa.recv_cq = cq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = 4;
    qa.cap.max_recv_wr = 4;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    qp = ibv_create_qp(pd, &qa);
  }
  ~Bare() {
    ibv_destroy_qp(qp);
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
  }
  ibv_context* ctx;
  ibv_pd* pd;
  ibv_cq* cq;
  ibv_qp* qp;
};

TEST(QpStateTest, ResetToInitNeedsPkeyPortAndAccess) {
  Bare b;
  ASSERT_NE(b.qp, nullptr);
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  EXPECT_EQ(ibv_modify_qp(b.qp, &at, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
  EXPECT_EQ(ibv_modify_qp(b.qp, &at,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS),
            0);
  EXPECT_EQ(b.qp->state, IBV_QPS_INIT);
}

TEST(QpStateTest, SkippingAStateIsRejected) {
  Bare b;
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_RTS;
  EXPECT_EQ(ibv_modify_qp(b.qp, &at, IBV_QP_STATE), EINVAL);
  at.qp_state = IBV_QPS_RTR;
  EXPECT_EQ(ibv_modify_qp(b.qp, &at, IBV_QP_STATE), EINVAL);
}

TEST(QpStateTest, AnAttributeTheTransitionDoesNotAllowIsRejected) {
  Bare b;
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.sq_psn = 5;  // SQ_PSN belongs to RTR->RTS
  EXPECT_EQ(ibv_modify_qp(b.qp, &at,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS | IBV_QP_SQ_PSN),
            EINVAL);
  EXPECT_EQ(b.qp->state, IBV_QPS_RESET);
}

TEST(QpStateTest, InitToRtrWithoutAnAddressVectorIsRejected) {
  Bare b;
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  ASSERT_EQ(ibv_modify_qp(b.qp, &at,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS),
            0);
  at = {};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = IBV_MTU_1024;
  at.dest_qp_num = 0x100;
  at.min_rnr_timer = 12;
  EXPECT_EQ(ibv_modify_qp(b.qp, &at,
                          IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                              IBV_QP_MIN_RNR_TIMER),
            EINVAL);
  // An AV naming nothing braid can reach is rejected too.
  at.ah_attr.is_global = 0;
  at.ah_attr.dlid = 0;
  EXPECT_EQ(ibv_modify_qp(b.qp, &at,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                              IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
            EINVAL);
}

TEST(QpStateTest, PostingSendsBeforeRtsIsRejectedAndReceivesInInitAreNot) {
  Bare b;
  std::vector<uint8_t> buf(64);
  ibv_mr* mr = ibv_reg_mr(b.pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  ibv_sge sge{reinterpret_cast<uintptr_t>(buf.data()), 64, mr->lkey};
  ibv_recv_wr rwr{};
  rwr.sg_list = &sge;
  rwr.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  EXPECT_EQ(ibv_post_recv(b.qp, &rwr, &rbad), EINVAL);  // RESET
  EXPECT_EQ(rbad, &rwr);
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  ASSERT_EQ(ibv_modify_qp(b.qp, &at,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                              IBV_QP_ACCESS_FLAGS),
            0);
  EXPECT_EQ(ibv_post_recv(b.qp, &rwr, &rbad), 0);
  ibv_send_wr swr{};
  swr.opcode = IBV_WR_SEND;
  swr.sg_list = &sge;
  swr.num_sge = 1;
  ibv_send_wr* sbad = nullptr;
  EXPECT_EQ(ibv_post_send(b.qp, &swr, &sbad), EINVAL);
  // Moving to RESET discards the posted receive without a completion.
  at.qp_state = IBV_QPS_RESET;
  EXPECT_EQ(ibv_modify_qp(b.qp, &at, IBV_QP_STATE), 0);
  EXPECT_TRUE(StaysEmpty(b.cq, 10));
  ibv_dereg_mr(mr);
}

TEST(QpStateTest, QueryReportsTheAttributesSet) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ibv_qp_attr at;
  ibv_qp_init_attr ia;
  ASSERT_EQ(ibv_query_qp(p.a.qp, &at, IBV_QP_STATE | IBV_QP_DEST_QPN, &ia), 0);
  EXPECT_EQ(at.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(at.dest_qp_num, p.b.qp->qp_num);
  EXPECT_EQ(at.path_mtu, IBV_MTU_4096);
  EXPECT_EQ(ia.qp_type, IBV_QPT_RC);
  EXPECT_EQ(ia.cap.max_send_wr, 128u);
}

TEST(QpStateTest, SendsPostedInSqdWaitUntilBackInRts) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_SQD;
  at.en_sqd_async_notify = 1;
  ASSERT_EQ(
      ibv_modify_qp(p.a.qp, &at, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
  ibv_async_event ev;
  ASSERT_EQ(ibv_get_async_event(p.a.ctx, &ev), 0);  // queue already empty
  EXPECT_EQ(ev.event_type, IBV_EVENT_SQ_DRAINED);
  ibv_ack_async_event(&ev);
  ASSERT_EQ(
      PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 64, p.b.addr(0), p.b.mr->rkey), 0);
  EXPECT_TRUE(StaysEmpty(p.a.scq, 30));
  at.qp_state = IBV_QPS_RTS;
  ASSERT_EQ(ibv_modify_qp(p.a.qp, &at, IBV_QP_STATE), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

TEST(ResourceTest, PdInUseCannotBeDeallocated) {
  ibv_context* ctx = OpenBraid0();
  ibv_pd* pd = ibv_alloc_pd(ctx);
  std::vector<uint8_t> buf(64);
  ibv_mr* mr = ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
  ibv_close_device(ctx);
}

TEST(ResourceTest, RemoteWriteWithoutLocalWriteIsRejected) {
  ibv_context* ctx = OpenBraid0();
  ibv_pd* pd = ibv_alloc_pd(ctx);
  std::vector<uint8_t> buf(64);
  errno = 0;
  EXPECT_EQ(ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_REMOTE_WRITE),
            nullptr);
  EXPECT_EQ(errno, EINVAL);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
}

TEST(ResourceTest, UnsupportedQpTypeIsRefused) {
  Bare b;
  ibv_qp_init_attr qa{};
  qa.send_cq = b.cq;
  qa.recv_cq = b.cq;
  qa.qp_type = IBV_QPT_RAW_PACKET;
  qa.cap.max_send_wr = 1;
  qa.cap.max_recv_wr = 1;
  errno = 0;
  EXPECT_EQ(ibv_create_qp(b.pd, &qa), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST(SrqTest, OneSharedReceiveQueueFeedsTheQp) {
  PairOptions o;
  o.use_srq = true;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 4; ++i) ASSERT_EQ(PostRecv(p.b, 50 + i, 256 * i, 256), 0);
  // Posting to the QP's own RQ is an error when it has an SRQ.
  ibv_sge sge = p.b.Sge(0, 8);
  ibv_recv_wr rwr{};
  rwr.sg_list = &sge;
  rwr.num_sge = 1;
  ibv_recv_wr* rbad;
  EXPECT_EQ(ibv_post_recv(p.b.qp, &rwr, &rbad), EINVAL);
  Fill(p.a.buf, 0, 1024, 9);
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(PostSend(p.a, i, IBV_WR_SEND, 256 * i, 256), 0);
  }
  std::vector<ibv_wc> r = PollMany(p.b.rcq, 4);
  ASSERT_EQ(r.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r[i].wr_id, 50u + i);
    EXPECT_EQ(r[i].status, IBV_WC_SUCCESS);
  }
  EXPECT_EQ(std::memcmp(p.b.buf.data(), p.a.buf.data(), 1024), 0);
  ibv_srq_attr sa;
  ASSERT_EQ(ibv_query_srq(p.b.srq, &sa), 0);
  EXPECT_EQ(sa.max_wr, 128u);
}

TEST(UdTest, DatagramArrivesBehindA40ByteGrh) {
  PairOptions o;
  o.type = IBV_QPT_UD;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  ibv_ah_attr aa{};
  aa.is_global = 1;
  aa.grh.dgid = p.b.gid;
  aa.port_num = 1;
  ibv_ah* ah = ibv_create_ah(p.a.pd, &aa);
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(PostRecv(p.b, 7, 0, 40 + 1000), 0);
  Fill(p.a.buf, 0, 1000, 10);
  ibv_sge sge = p.a.Sge(0, 1000);
  ibv_send_wr wr{};
  wr.wr_id = 3;
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htonl(99);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = p.b.qp->qp_num;
  wr.wr.ud.remote_qkey = o.qkey;
  ibv_send_wr* bad;
  ASSERT_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, 1040u);
  EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
  EXPECT_EQ(ntohl(wc.imm_data), 99u);
  EXPECT_EQ(wc.src_qp, p.a.qp->qp_num);
  EXPECT_EQ(std::memcmp(&p.b.buf[40], p.a.buf.data(), 1000), 0);
  // The GRH's source GID names the sender; an AH built from it reaches it.
  auto* grh = reinterpret_cast<ibv_grh*>(p.b.buf.data());
  EXPECT_EQ(std::memcmp(grh->sgid.raw, p.a.gid.raw, 16), 0);
  ibv_ah* back = ibv_create_ah_from_wc(p.b.pd, &wc, grh, 1);
  EXPECT_NE(back, nullptr);
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  ibv_destroy_ah(back);
  ibv_destroy_ah(ah);
}

TEST(UdTest, WrongQkeyIsDropped) {
  PairOptions o;
  o.type = IBV_QPT_UD;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  ibv_ah_attr aa{};
  aa.dlid = p.b.lid;  // no GRH: the LID names the endpoint's port
  aa.port_num = 1;
  ibv_ah* ah = ibv_create_ah(p.a.pd, &aa);
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(PostRecv(p.b, 7, 0, 100), 0);
  ibv_sge sge = p.a.Sge(0, 10);
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = p.b.qp->qp_num;
  wr.wr.ud.remote_qkey = o.qkey + 1;
  ibv_send_wr* bad;
  ASSERT_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);
  EXPECT_TRUE(StaysEmpty(p.b.rcq, 100));
  wr.wr.ud.remote_qkey = o.qkey;
  ASSERT_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.byte_len, 50u);
  ibv_destroy_ah(ah);
}

TEST(CompChannelTest, FdBecomesReadableAndDeliversTheArmedCq) {
  PairOptions o;
  o.with_channel = true;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(ibv_req_notify_cq(p.b.rcq, 0), 0);
  ASSERT_EQ(PostRecv(p.b, 1, 0, 64), 0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_SEND, 0, 64), 0);
  pollfd pfd{p.b.channel->fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 5000), 1);  // the progress thread raised it
  ibv_cq* cq = nullptr;
  void* cq_ctx = nullptr;
  ASSERT_EQ(ibv_get_cq_event(p.b.channel, &cq, &cq_ctx), 0);
  EXPECT_EQ(cq, p.b.rcq);
  ibv_ack_cq_events(cq, 1);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.wr_id, 1u);
  // Not re-armed: no further event.
  pfd.revents = 0;
  EXPECT_EQ(poll(&pfd, 1, 20), 0);
}

// A CQ without a channel may be armed (devices accept it; nothing is ever
// delivered) and keeps working.
TEST(CompChannelTest, ArmingACqWithoutAChannelSucceeds) {
  Pair p;
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(ibv_req_notify_cq(p.b.rcq, 0), 0);
  EXPECT_EQ(ibv_req_notify_cq(p.b.rcq, 1), 0);
  ASSERT_EQ(PostRecv(p.b, 1, 0, 64), 0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_SEND, 0, 64), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

// Thread CPU time, in seconds.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Threads blocked in ibv_get_cq_event on one context, each on its own
// channel (as in a server with a thread per connection), while traffic
// flows into the context: one of them drives progress, the others sleep.
// They used to poll the endpoint's fd too and, finding the lock taken,
// spin on it while it stayed readable.
TEST(CompChannelTest, WaitersBesidesTheOneDrivingProgressDoNotSpin) {
  Pair p;
  ASSERT_TRUE(p.ok());
  constexpr int kWaiters = 3;
  struct Waiter {
    ibv_comp_channel* channel = nullptr;
    ibv_cq* cq = nullptr;
    ibv_qp* qp = nullptr;
    double cpu_s = 0;
    int rc = -1;
  };
  Waiter w[kWaiters];
  for (Waiter& x : w) {
    x.channel = ibv_create_comp_channel(p.b.ctx);
    ASSERT_NE(x.channel, nullptr);
    x.cq = ibv_create_cq(p.b.ctx, 8, nullptr, x.channel, 0);
    ASSERT_NE(x.cq, nullptr);
    ibv_qp_init_attr qa{};
    qa.send_cq = x.cq;
    qa.recv_cq = x.cq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = 1;
    qa.cap.max_recv_wr = 1;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    x.qp = ibv_create_qp(p.b.pd, &qa);
    ASSERT_NE(x.qp, nullptr);
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    ASSERT_EQ(ibv_modify_qp(x.qp, &at,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                IBV_QP_ACCESS_FLAGS),
              0);
    // Its flush (the QP moved to ERR below) ends the wait.
    ibv_sge sge = p.b.Sge(0, 64);
    ibv_recv_wr rwr{};
    rwr.sg_list = &sge;
    rwr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_recv(x.qp, &rwr, &bad), 0);
    ASSERT_EQ(ibv_req_notify_cq(x.cq, 0), 0);
  }
  Watchdog dog(std::chrono::seconds(60), "a waiter never got its event");
  std::vector<std::thread> threads;
  for (Waiter& x : w) {
    threads.emplace_back([&x] {
      const double t0 = ThreadCpuSeconds();
      ibv_cq* cq = nullptr;
      void* cq_ctx = nullptr;
      x.rc = ibv_get_cq_event(x.channel, &cq, &cq_ctx);
      x.cpu_s = ThreadCpuSeconds() - t0;
      if (x.rc == 0) ibv_ack_cq_events(cq, 1);
    });
  }
  // RDMA WRITEs into b (a passive target: the waiters drive its endpoint).
  const auto start = std::chrono::steady_clock::now();
  int writes = 0;
  while (std::chrono::steady_clock::now() - start <
         std::chrono::milliseconds(500)) {
    ASSERT_EQ(PostSend(p.a, writes, IBV_WR_RDMA_WRITE, 0, 4096, p.b.addr(8192),
                       p.b.mr->rkey),
              0);
    ibv_wc wc;
    ASSERT_TRUE(PollOne(p.a.scq, &wc));
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
    ++writes;
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  for (Waiter& x : w) {
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_ERR;
    ASSERT_EQ(ibv_modify_qp(x.qp, &at, IBV_QP_STATE), 0);
  }
  for (std::thread& t : threads) t.join();
  double total = 0;
  double most = 0;
  for (Waiter& x : w) {
    EXPECT_EQ(x.rc, 0);
    total += x.cpu_s;
    most = std::max(most, x.cpu_s);
  }
  // The driver's CPU is the progress work; the others' should be ~0 (a
  // backstop wake-up every few ms). Spinning, they took ~1/3 each.
  const double idle_waiters_cpu = total - most;
  std::printf(
      "%d writes in %.3f s; waiters' CPU: driver %.3f s, others %.3f s\n",
      writes, wall_s, most, idle_waiters_cpu);
  EXPECT_GT(writes, 0);
  EXPECT_LT(idle_waiters_cpu, 0.05 * wall_s);
  for (Waiter& x : w) {
    ibv_destroy_qp(x.qp);
    ibv_destroy_cq(x.cq);
    ibv_destroy_comp_channel(x.channel);
  }
}

TEST(QpExTest, WrApiPostsASendAndAWrite) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ibv_qp_ex* qpx = ibv_qp_to_qp_ex(p.a.qp);
  ASSERT_NE(qpx, nullptr);
  Fill(p.a.buf, 0, 2000, 11);
  ASSERT_EQ(PostRecv(p.b, 1, 0, 1000), 0);
  ibv_wr_start(qpx);
  qpx->wr_id = 10;
  qpx->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send(qpx);
  ibv_wr_set_sge(qpx, p.a.mr->lkey, p.a.addr(0), 1000);
  qpx->wr_id = 11;
  ibv_wr_rdma_write(qpx, p.b.mr->rkey, p.b.addr(5000));
  ibv_wr_set_sge(qpx, p.a.mr->lkey, p.a.addr(1000), 1000);
  ASSERT_EQ(ibv_wr_complete(qpx), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 10u);
  EXPECT_EQ(wcs[1].wr_id, 11u);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(std::memcmp(p.b.buf.data(), p.a.buf.data(), 1000), 0);
  EXPECT_EQ(std::memcmp(&p.b.buf[5000], &p.a.buf[1000], 1000), 0);
}

TEST(QpExTest, CreateQpExWithSendOpsFlags) {
  ibv_context* ctx = OpenBraid0();
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_cq_init_attr_ex ca{};
  ca.cqe = 16;
  ibv_cq_ex* cqx = ibv_create_cq_ex(ctx, &ca);
  ASSERT_NE(cqx, nullptr);
  ibv_qp_init_attr_ex qa{};
  qa.send_cq = ibv_cq_ex_to_cq(cqx);
  qa.recv_cq = ibv_cq_ex_to_cq(cqx);
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = 8;
  qa.cap.max_recv_wr = 8;
  qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  qa.pd = pd;
  qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
  ibv_qp* qp = ibv_create_qp_ex(ctx, &qa);
  ASSERT_NE(qp, nullptr);
  EXPECT_NE(ibv_qp_to_qp_ex(qp), nullptr);
  ibv_poll_cq_attr pa{};
  EXPECT_EQ(ibv_start_poll(cqx, &pa), ENOENT);  // empty
  ibv_destroy_qp(qp);
  ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
}

// ibv_rc_pingpong -t posts its next receive and send from inside the
// ibv_start_poll..ibv_end_poll batch; the man page allows any verb there.
TEST(CqExTest, PostingBetweenStartPollAndEndPollNeitherBlocksNorMovesTheEntry) {
  PairOptions o;
  o.cq_ex = true;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  // A post that blocks on the context lock never returns: end the test.
  Watchdog dog(std::chrono::seconds(20),
               "a post between ibv_start_poll and ibv_end_poll deadlocked");
  for (uint64_t i = 0; i < 2; ++i) {
    ASSERT_EQ(PostRecv(p.a, 100 + i, 4096 * (i + 1), 256), 0);
    ASSERT_EQ(PostRecv(p.b, i, 4096 * (i + 1), 256), 0);
  }
  ASSERT_EQ(PostSend(p.a, 10, IBV_WR_SEND, 0, 40), 0);
  ASSERT_EQ(PostSend(p.a, 11, IBV_WR_SEND, 0, 60), 0);
  ibv_cq_ex* cqx = p.b.rcqx;
  std::vector<uint64_t> ids;
  std::vector<uint32_t> lens;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (ids.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    ibv_poll_cq_attr pa{};
    if (ibv_start_poll(cqx, &pa) != 0) continue;
    do {
      ASSERT_EQ(cqx->status, IBV_WC_SUCCESS);
      const uint32_t len = ibv_wc_read_byte_len(cqx);
      ids.push_back(cqx->wr_id);
      lens.push_back(len);
      // The reply, from inside the batch, as rc_pingpong -t does.
      const uint64_t n = ids.size();
      ASSERT_EQ(PostRecv(p.b, 10 + n, 4096 * (n + 4), 256), 0);
      ASSERT_EQ(PostSend(p.b, 20 + n, IBV_WR_SEND, 0, 30 + n), 0);
      // The accessors still report the entry the batch is on.
      EXPECT_EQ(ibv_wc_read_byte_len(cqx), len);
      EXPECT_EQ(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
      EXPECT_EQ(ibv_wc_read_qp_num(cqx), p.b.qp->qp_num);
    } while (ids.size() < 2 && ibv_next_poll(cqx) == 0);
    ibv_end_poll(cqx);
  }
  ASSERT_EQ(ids, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(lens, (std::vector<uint32_t>{40, 60}));
  // The replies posted in the batch arrive.
  const std::vector<ibv_wc> replies = PollMany(p.a.rcq, 2);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].byte_len, 31u);
  EXPECT_EQ(replies[1].byte_len, 32u);
  // The same CQ through ibv_poll_cq after the batch (polls serialised).
  ASSERT_EQ(PostSend(p.a, 12, IBV_WR_SEND, 0, 70), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.wr_id, 11u);
  EXPECT_EQ(wc.byte_len, 70u);
}

}  // namespace
}  // namespace braid::verbs_compat::testing

// Asynchronous events of braid0 (ibv_get_async_event), driven through
// libibverbs like an application: which event an error raises (as mlx5
// and rxe raise them), IBV_EVENT_QP_LAST_WQE_REACHED for a QP of an SRQ,
// and the life of an event whose QP, CQ or SRQ is destroyed.
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

// Takes the next async event of `ctx` without acking it (waits up to
// `ms`). False if none comes.
bool TakeEvent(ibv_context* ctx, ibv_async_event* ev, int ms = 2000) {
  pollfd pfd{ctx->async_fd, POLLIN, 0};
  if (poll(&pfd, 1, ms) != 1) return false;
  return ibv_get_async_event(ctx, ev) == 0;
}

// True if `ctx` has no async event pending for `ms`.
bool NoEvent(ibv_context* ctx, int ms = 100) {
  pollfd pfd{ctx->async_fd, POLLIN, 0};
  return poll(&pfd, 1, ms) == 0;
}

// a sends b a misaligned atomic; returns once a has its completion (by
// then b has refused the request, entered ERR and raised its event).
void InvalidAtomic(Pair& p) {
  ibv_sge sge = p.a.Sge(0, 8);
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = p.b.addr(4);  // not 8-byte aligned
  wr.wr.atomic.rkey = p.b.mr->rkey;
  wr.wr.atomic.compare_add = 1;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
}

// braid0 departs from RC here (docs/verbs.md): a remote access violation
// fails its WR and leaves both QPs as they were, so there is no event.
TEST(QpErrorEventTest, RemoteAccessErrorRaisesNoEventOnEitherSide) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 64, p.b.addr(0),
                     p.b.mr->rkey + 0x100),
            0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_TRUE(NoEvent(p.b.ctx));
  EXPECT_TRUE(NoEvent(p.a.ctx));
}

TEST(QpErrorEventTest, InvalidRequestIsReqErrAtTheResponderOnly) {
  Pair p;
  ASSERT_TRUE(p.ok());
  InvalidAtomic(p);
  ibv_async_event ev;
  ASSERT_TRUE(TakeEvent(p.b.ctx, &ev));
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_REQ_ERR);
  EXPECT_EQ(ev.element.qp, p.b.qp);
  ibv_ack_async_event(&ev);
  EXPECT_TRUE(NoEvent(p.a.ctx));
}

TEST(QpErrorEventTest, SendLongerThanTheReceiveIsReportedByCompletionsOnly) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(PostRecv(p.b, 10, 0, 16), 0);
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 64), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
  EXPECT_TRUE(NoEvent(p.a.ctx));
  EXPECT_TRUE(NoEvent(p.b.ctx));
}

TEST(QpErrorEventTest, RnrRetriesExceededIsReportedByTheCompletionOnly) {
  PairOptions o;
  o.rnr_retry = 0;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 64), 0);  // no receive posted
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_RNR_RETRY_EXC_ERR);
  EXPECT_TRUE(NoEvent(p.a.ctx));
  EXPECT_TRUE(NoEvent(p.b.ctx));
}

TEST(QpErrorEventTest, PeerGoneIsReportedByTheRetryExceededCompletionOnly) {
  Pair p;
  ASSERT_TRUE(p.ok());
  const ibv_gid gid = p.b.gid;  // 127.0.0.1 and b's port (see gid.h)
  p.CloseSide(p.b);
  // Hold b's port, silently: another process's braid0 context (tests run
  // in parallel) would take it and answer.
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  std::memcpy(&sa.sin_port, &gid.raw[8], 2);
  std::memcpy(&sa.sin_addr, &gid.raw[12], 4);
  const int squat = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(squat, 0);
  ASSERT_EQ(bind(squat, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_SEND, 0, 64), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc, 10000));  // braid's peer_timeout, 2 s
  EXPECT_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_TRUE(NoEvent(p.a.ctx));
  close(squat);
}

TEST(LastWqeReachedTest, ModifyToErrOfAQpWithAnSrqRaisesIt) {
  PairOptions o;
  o.use_srq = true;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(p.b.qp, &at, IBV_QP_STATE), 0);
  ibv_async_event ev;
  ASSERT_TRUE(TakeEvent(p.b.ctx, &ev));
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
  EXPECT_EQ(ev.element.qp, p.b.qp);
  ibv_ack_async_event(&ev);
  // Once: a second modify to ERR changes nothing.
  ASSERT_EQ(ibv_modify_qp(p.b.qp, &at, IBV_QP_STATE), 0);
  EXPECT_TRUE(NoEvent(p.b.ctx));
}

TEST(LastWqeReachedTest, AnErrorOfAQpWithAnSrqRaisesItAfterTheErrorEvent) {
  PairOptions o;
  o.use_srq = true;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  InvalidAtomic(p);
  ibv_async_event ev;
  ASSERT_TRUE(TakeEvent(p.b.ctx, &ev));
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_REQ_ERR);
  ibv_ack_async_event(&ev);
  ASSERT_TRUE(TakeEvent(p.b.ctx, &ev));
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
  EXPECT_EQ(ev.element.qp, p.b.qp);
  ibv_ack_async_event(&ev);
  // The requester has an SRQ too: its error raises only this one.
  ASSERT_TRUE(TakeEvent(p.a.ctx, &ev));
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
  EXPECT_EQ(ev.element.qp, p.a.qp);
  ibv_ack_async_event(&ev);
}

TEST(LastWqeReachedTest, AQpWithoutAnSrqDoesNotRaiseIt) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(p.b.qp, &at, IBV_QP_STATE), 0);
  EXPECT_TRUE(NoEvent(p.b.ctx));
}

TEST(AsyncLifetimeTest, DestroyingAQpDropsItsEventsNotYetTaken) {
  Pair p;
  ASSERT_TRUE(p.ok());
  InvalidAtomic(p);
  pollfd pfd{p.b.ctx->async_fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 2000), 1);  // b's QP has an event queued
  ASSERT_EQ(ibv_destroy_qp(p.b.qp), 0);
  p.b.qp = nullptr;
  // No event names the freed QP, and the fd is not readable for it.
  EXPECT_TRUE(NoEvent(p.b.ctx));
}

TEST(AsyncLifetimeTest, DestroyingAQpWaitsForTheAckOfAnEventTaken) {
  Pair p;
  ASSERT_TRUE(p.ok());
  InvalidAtomic(p);
  ibv_async_event ev;
  ASSERT_TRUE(TakeEvent(p.b.ctx, &ev));
  ASSERT_EQ(ev.element.qp, p.b.qp);
  std::atomic<bool> destroyed{false};
  std::thread destroyer([&] {
    EXPECT_EQ(ibv_destroy_qp(p.b.qp), 0);
    destroyed.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // As libibverbs: the QP (which the event points at) lives until acked.
  EXPECT_FALSE(destroyed.load());
  EXPECT_EQ(ev.element.qp->qp_num, p.b.qp->qp_num);
  ibv_ack_async_event(&ev);
  destroyer.join();
  EXPECT_TRUE(destroyed.load());
  p.b.qp = nullptr;
}

TEST(AsyncLifetimeTest, DestroyingACqDropsItsCqErrNotYetTaken) {
  PairOptions o;
  o.cq_depth = 2;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(
        PostSend(p.a, i, IBV_WR_RDMA_WRITE, 0, 64, p.b.addr(0), p.b.mr->rkey),
        0);
  }
  pollfd pfd{p.a.ctx->async_fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 2000), 1);  // CQ_ERR (then the QP's QP_FATAL)
  ASSERT_EQ(ibv_destroy_qp(p.a.qp), 0);
  p.a.qp = nullptr;
  ASSERT_EQ(ibv_destroy_cq(p.a.scq), 0);
  p.a.scq = nullptr;
  EXPECT_TRUE(NoEvent(p.a.ctx));
}

}  // namespace
}  // namespace braid::verbs_compat::testing

// Limits a real RC device enforces and braid0 now honours too: the local
// ACK timeout (ibv_modify_qp timeout / retry_cnt) and CQ overrun.
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdlib.h>

#include <chrono>
#include <cstring>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Set before braid0 is first listed (the configuration is read once): no
// floor under the ACK timeout, so these tests see exactly the QP's value.
const int kNoFloor = [] {
  setenv("BRAID_VERBS_MIN_ACK_TIMEOUT_MS", "0", 1);
  return 0;
}();

// Takes the next async event of `ctx` (waits up to 2 s).
bool NextAsync(ibv_context* ctx, ibv_async_event* ev) {
  pollfd pfd{ctx->async_fd, POLLIN, 0};
  if (poll(&pfd, 1, 2000) != 1) return false;
  if (ibv_get_async_event(ctx, ev) != 0) return false;
  ibv_ack_async_event(ev);
  return true;
}

// Moves b's QP to ERR: b's endpoint still acknowledges a's packets (the
// transport delivers), but no verbs ACK comes back, as from a responder
// that died. Only the requester's ACK timeout can end the wait.
void SilenceResponder(Pair& p) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(p.b.qp, &at, IBV_QP_STATE), 0);
}

TEST(AckTimeoutTest, UnansweredRequestFailsWithRetryExceededAfterTheTimeout) {
  ASSERT_EQ(kNoFloor, 0);
  PairOptions o;
  o.timeout = 12;   // 4.096 us x 4096 = 16.8 ms
  o.retry_cnt = 2;  // x 3 = 50.3 ms in all
  Pair p(o);
  ASSERT_TRUE(p.ok());
  SilenceResponder(p);
  const auto start = Clock::now();
  ASSERT_EQ(
      PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 1000, p.b.addr(0), p.b.mr->rkey),
      0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_SEND, 0, 10), 0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2, 5000);
  const auto waited = Clock::now() - start;
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(wcs[1].status, IBV_WC_WR_FLUSH_ERR);
  // Never before the timeout (the upper bound is the 5 s poll above; the
  // braid peer_timeout would never fire: the transport is fine).
  EXPECT_GE(waited, std::chrono::microseconds(4096 * 4096 * 3 / 1000));
  ibv_qp_attr at;
  ibv_qp_init_attr ia;
  ASSERT_EQ(ibv_query_qp(p.a.qp, &at, IBV_QP_STATE, &ia), 0);
  EXPECT_EQ(at.qp_state, IBV_QPS_ERR);
  // The completion reports it: no async event, as on a device.
  pollfd pfd{p.a.ctx->async_fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 50), 0);
}

TEST(AckTimeoutTest, TimeoutZeroWaitsForever) {
  PairOptions o;
  o.timeout = 0;  // infinite, per the IB spec
  o.retry_cnt = 0;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  SilenceResponder(p);
  ASSERT_EQ(
      PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 1000, p.b.addr(0), p.b.mr->rkey),
      0);
  EXPECT_TRUE(StaysEmpty(p.a.scq, 300));
}

TEST(AckTimeoutTest, AnsweredRequestsNeverTimeOut) {
  PairOptions o;
  // 268 ms, once: far below what 200 round trips take together, far above
  // one round trip even on this loaded 2-core machine.
  o.timeout = 16;
  o.retry_cnt = 0;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(PostSend(p.a, i, IBV_WR_RDMA_WRITE, 0, 2000, p.b.addr(4096),
                       p.b.mr->rkey),
              0);
    ibv_wc wc;
    ASSERT_TRUE(PollOne(p.a.scq, &wc));
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << i;
  }
}

// Moves `bytes` with one WRITE (a to b) or READ (b to a) on a QP whose ACK
// timeout is T = 4.096 us x 2^timeout x (retry_cnt + 1); the op must
// succeed, byte-exact. Returns how long it took.
std::chrono::nanoseconds LargeOp(ibv_wr_opcode op, size_t bytes,
                                 uint8_t timeout, uint8_t retry_cnt) {
  PairOptions o;
  o.timeout = timeout;
  o.retry_cnt = retry_cnt;
  o.buf_bytes = bytes + (1 << 20);
  Pair p(o);
  EXPECT_TRUE(p.ok());
  if (!p.ok()) return {};
  Side& src = op == IBV_WR_RDMA_READ ? p.b : p.a;
  Side& dst = op == IBV_WR_RDMA_READ ? p.a : p.b;
  Fill(src.buf, 0, bytes, 9);
  const auto start = Clock::now();
  EXPECT_EQ(PostSend(p.a, 1, op, 0, static_cast<uint32_t>(bytes), p.b.addr(0),
                     p.b.mr->rkey),
            0);
  ibv_wc wc;
  EXPECT_TRUE(PollOne(p.a.scq, &wc, 60000));
  const auto took = Clock::now() - start;
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(std::memcmp(dst.buf.data(), src.buf.data(), bytes), 0);
  return took;
}

// The timeout code of ALargeWrite...: T = 2.1 ms; under ThreadSanitizer,
// where the op takes seconds and a scheduling stall of a few ms between the
// request's delivery and its ACK failed it with retry-exceeded, 67 ms;
// under AddressSanitizer, where the op took 60 ms (so 67 ms was not
// outlasted), 16.8 ms.
#if defined(__SANITIZE_THREAD__)
constexpr uint8_t kLargeWriteTimeout = 14;
#elif defined(__SANITIZE_ADDRESS__)
constexpr uint8_t kLargeWriteTimeout = 12;
#else
constexpr uint8_t kLargeWriteTimeout = 9;
#endif

TEST(AckTimeoutTest, ALargeWriteSlowerThanTheTimeoutDoesNotTimeOut) {
  // T = 2.1 ms, less than 32 MiB (the largest message) take here: 8 MiB
  // once took only 3.2 ms on a fast phase of this VM, and 32 MiB in 2.1 ms
  // would be 16 GB/s through user-space copies. The timer runs only once
  // the transport has delivered the request. The op really outlasted T
  // (else this test proves nothing).
  EXPECT_GT(
      LargeOp(IBV_WR_RDMA_WRITE, 32 << 20, kLargeWriteTimeout, 0),
      std::chrono::nanoseconds(4096) * (int64_t{1} << kLargeWriteTimeout));
}

// The timeout code of ALargeRead...: T = 537 ms (perftest's default), or
// 4.3 s in a sanitized build, whose copies run several times slower:
// under ThreadSanitizer on a loaded host the responder's copy of the
// response alone outlasted 537 ms, and the READ failed before its first
// response packet.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr uint8_t kLargeReadTimeout = 19;
#else
constexpr uint8_t kLargeReadTimeout = 16;
#endif

TEST(AckTimeoutTest, ALargeReadDoesNotTimeOutWhileItsResponseFlows) {
  // The responder copies the 32 MiB into its response before the first
  // packet leaves; the wait restarts while response packets arrive.
  // Whether the READ outlasts T depends on the machine (1-2.5 s here under
  // load), so only success is asserted; a smaller T is not robust against
  // this host's scheduling stalls.
  LargeOp(IBV_WR_RDMA_READ, 32 << 20, kLargeReadTimeout, 1);
}

TEST(CqOverrunTest, MoreCompletionsThanTheDepthIsACqError) {
  PairOptions o;
  o.cq_depth = 4;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(
        PostSend(p.a, i, IBV_WR_RDMA_WRITE, 0, 100, p.b.addr(0), p.b.mr->rkey),
        0);
  }
  // Nobody polls until all eight had time to complete.
  ibv_async_event ev;
  ASSERT_TRUE(NextAsync(p.a.ctx, &ev));
  EXPECT_EQ(ev.event_type, IBV_EVENT_CQ_ERR);
  EXPECT_EQ(ev.element.cq, p.a.scq);
  ASSERT_TRUE(NextAsync(p.a.ctx, &ev));
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
  EXPECT_EQ(ev.element.qp, p.a.qp);
  // The CQ kept the four that fit, and nothing after the overrun.
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 8, 300);
  ASSERT_EQ(wcs.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(wcs[i].wr_id, static_cast<uint64_t>(i));
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS);
  }
  ibv_qp_attr at;
  ibv_qp_init_attr ia;
  ASSERT_EQ(ibv_query_qp(p.a.qp, &at, IBV_QP_STATE, &ia), 0);
  EXPECT_EQ(at.qp_state, IBV_QPS_ERR);
}

TEST(CqOverrunTest, ACqPolledInTimeNeverOverruns) {
  PairOptions o;
  o.cq_depth = 4;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(
        PostSend(p.a, i, IBV_WR_RDMA_WRITE, 0, 100, p.b.addr(0), p.b.mr->rkey),
        0);
    ibv_wc wc;
    ASSERT_TRUE(PollOne(p.a.scq, &wc));
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
  }
  pollfd pfd{p.a.ctx->async_fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 0), 0);  // no event
}

}  // namespace
}  // namespace braid::verbs_compat::testing

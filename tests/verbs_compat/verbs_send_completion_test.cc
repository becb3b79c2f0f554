// When braid0 reports a send's completion (docs/verbs.md, "When a send
// completes"): only once the responder has the data (its ACK came back),
// and without the requester or the responder's application having to do
// anything more for that ACK to come: no piggy-backed ACK is waited for.
// Two contexts of this process over loopback, driven through libibverbs.
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <cstring>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

constexpr uint32_t kLen = 64;
constexpr size_t kDst = 4096;  // where b receives

// Whether b's buffer holds, at kDst, the kLen bytes a sent from offset 0.
bool ReceiverHasTheData(const Pair& p) {
  return std::memcmp(p.a.buf.data(), p.b.buf.data() + kDst, kLen) == 0;
}

// Polls a's send CQ for the completion of WR `wr_id` (a sends nothing
// else meanwhile) and checks that, by then, b has the data.
void ExpectSendCompletedWithDataAtReceiver(Pair& p, uint64_t wr_id) {
  ibv_wc wc{};
  ASSERT_TRUE(PollOne(p.a.scq, &wc, 10000));
  EXPECT_EQ(wc.wr_id, wr_id);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(ReceiverHasTheData(p));
}

// A pair whose receiver b is event-driven as gloo's device thread is: b's
// channel fd is non-blocking (b waits for it in its own poll()), b's
// receive CQ is armed on it, and a receive is posted.
struct EventDrivenPair {
  EventDrivenPair() : p(WithChannel()) {
    const int fd = p.ok() ? p.b.channel->fd : -1;
    ok = p.ok() && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 &&
         ibv_req_notify_cq(p.b.rcq, 0) == 0 &&
         PostRecv(p.b, 1, kDst, kLen) == 0;
  }
  static PairOptions WithChannel() {
    PairOptions o;
    o.with_channel = true;
    return o;
  }
  Pair p;
  bool ok = false;
};

TEST(SendCompletionTest, ASignalledSendCompletesOnlyOnceTheReceiverHasTheData) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, kLen, 1);
  ASSERT_EQ(PostSend(p.a, 7, IBV_WR_SEND, 0, kLen), 0);
  // No receive posted at b: the responder cannot take the data (RNR), so
  // the send must not complete, however long the requester polls.
  EXPECT_TRUE(StaysEmpty(p.a.scq, 100));
  EXPECT_TRUE(AllZero(std::vector<uint8_t>(p.b.buf.begin() + kDst,
                                           p.b.buf.begin() + kDst + kLen)));
  ASSERT_EQ(PostRecv(p.b, 1, kDst, kLen), 0);
  // Checked at the moment the requester sees its completion, before b's
  // application has polled anything.
  ExpectSendCompletedWithDataAtReceiver(p, 7);
  ibv_wc wc{};
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.byte_len, kLen);
}

// The receiver arms its CQ, drains it, and would then sleep in poll() on
// the channel fd. Its ACK must not wait for a reply it will never post,
// nor for its next verbs call.
TEST(SendCompletionTest, AnEventDrivenReceiverAcksBeforeItSleeps) {
  EventDrivenPair e;
  ASSERT_TRUE(e.ok);
  Pair& p = e.p;
  Fill(p.a.buf, 0, kLen, 2);
  const uint64_t acks_before = Stats(p.b).acks_sent;
  ASSERT_EQ(PostSend(p.a, 7, IBV_WR_SEND, 0, kLen), 0);
  ibv_wc wc{};
  ASSERT_TRUE(PollOne(p.b.rcq, &wc, 10000));  // the drain of an armed CQ
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  // The poll that handed over the receive has sent its ACK (nothing was
  // held for a reply); b's application makes no verbs call from here on.
  EXPECT_GT(Stats(p.b).acks_sent, acks_before);
  // The requester only polls: it sends nothing that could carry an ACK.
  ExpectSendCompletedWithDataAtReceiver(p, 7);
}

// The receiver sleeps on its channel and the progress thread takes the
// message: the completion event comes after the step's ACK has left.
TEST(SendCompletionTest, TheReceiversEventComesAfterItsAckLeft) {
  EventDrivenPair e;
  ASSERT_TRUE(e.ok);
  Pair& p = e.p;
  Fill(p.a.buf, 0, kLen, 3);
  const uint64_t acks_before = Stats(p.b).acks_sent;
  ASSERT_EQ(PostSend(p.a, 7, IBV_WR_SEND, 0, kLen), 0);
  pollfd pfd{p.b.channel->fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 10000), 1);  // b's application never polled
  EXPECT_GT(Stats(p.b).acks_sent, acks_before);
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  ASSERT_EQ(ibv_get_cq_event(p.b.channel, &cq, &cq_context), 0);  // ready
  ibv_ack_cq_events(cq, 1);
  ExpectSendCompletedWithDataAtReceiver(p, 7);
}

// A busy-polling receiver's ACK is held for the reply it may post; one that
// then stops calling still gets it out (its progress thread takes over),
// so the requester's completion comes without any reply.
TEST(SendCompletionTest, AReceiverThatStopsCallingStillAcks) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(PostRecv(p.b, 1, kDst, kLen), 0);
  Fill(p.a.buf, 0, kLen, 4);
  ASSERT_EQ(PostSend(p.a, 7, IBV_WR_SEND, 0, kLen), 0);
  ibv_wc wc{};
  ASSERT_TRUE(PollOne(p.b.rcq, &wc, 10000));
  ExpectSendCompletedWithDataAtReceiver(p, 7);
}

// An RDMA WRITE to a responder whose application never calls verbs (the
// passive side): the completion still means the bytes are there.
TEST(SendCompletionTest, AWriteCompletesOnlyOnceTheBytesAreInTheTargetRegion) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, kLen, 5);
  ASSERT_EQ(PostSend(p.a, 9, IBV_WR_RDMA_WRITE, 0, kLen, p.b.addr(kDst),
                     p.b.mr->rkey),
            0);
  ExpectSendCompletedWithDataAtReceiver(p, 9);
}

}  // namespace
}  // namespace braid::verbs_compat::testing

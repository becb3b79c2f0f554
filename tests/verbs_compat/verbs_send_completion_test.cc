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
class EventDrivenReceiverTest : public ::testing::Test {
 protected:
  EventDrivenReceiverTest() : p_(WithChannel()) {}

  void SetUp() override {
    ASSERT_TRUE(p_.ok());
    const int fd = p_.b.channel->fd;
    ASSERT_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
    ASSERT_EQ(ibv_req_notify_cq(p_.b.rcq, 0), 0);
    ASSERT_EQ(PostRecv(p_.b, 1, kDst, kLen), 0);
  }

  // a sends b kLen bytes filled from `fill` (a SEND, WR 7), after noting
  // b's ACK count in acks_before_. Returns what posting it returned.
  int SendToB(uint32_t fill) {
    Fill(p_.a.buf, 0, kLen, fill);
    acks_before_ = Stats(p_.b).acks_sent;
    return PostSend(p_.a, 7, IBV_WR_SEND, 0, kLen);
  }

  static PairOptions WithChannel() {
    PairOptions o;
    o.with_channel = true;
    return o;
  }

  Pair p_;
  uint64_t acks_before_ = 0;
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
TEST_F(EventDrivenReceiverTest, AnEventDrivenReceiverAcksBeforeItSleeps) {
  ASSERT_EQ(SendToB(2), 0);
  ibv_wc wc{};
  ASSERT_TRUE(PollOne(p_.b.rcq, &wc, 10000));  // the drain of an armed CQ
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  // The poll that handed over the receive has sent its ACK (nothing was
  // held for a reply); b's application makes no verbs call from here on.
  EXPECT_GT(Stats(p_.b).acks_sent, acks_before_);
  // The requester only polls: it sends nothing that could carry an ACK.
  ExpectSendCompletedWithDataAtReceiver(p_, 7);
}

// The receiver sleeps on its channel and the progress thread takes the
// message: the completion event comes after the step's ACK has left.
TEST_F(EventDrivenReceiverTest, TheReceiversEventComesAfterItsAckLeft) {
  ASSERT_EQ(SendToB(3), 0);
  pollfd pfd{p_.b.channel->fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 10000), 1);  // b's application never polled
  EXPECT_GT(Stats(p_.b).acks_sent, acks_before_);
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  ASSERT_EQ(ibv_get_cq_event(p_.b.channel, &cq, &cq_context), 0);  // ready
  ibv_ack_cq_events(cq, 1);
  ExpectSendCompletedWithDataAtReceiver(p_, 7);
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

// DriveLoop: two cores, each driven by its own loop over an in-memory pipe
// (PipeBackend) on a manual clock, exactly as Endpoint drives them.
#include "endpoint/drive_loop.h"

#include <memory>
#include <vector>

#include "base/clock.h"
#include "gtest/gtest.h"
#include "tests/endpoint/pipe_backend.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

using testing::PipeBackend;

// What one datagram carries.
struct Content {
  int data = 0;
  int acks = 0;
};
Content Inspect(absl::Span<const uint8_t> datagram) {
  Content c;
  wire::ParseError e;
  if (wire::ParsePreamble(datagram, &e) == 0) return c;
  wire::FrameReader r(datagram.subspan(wire::kPreambleSize));
  wire::Frame f;
  while (r.Next(&f)) {
    if (f.type == wire::FrameType::kData) ++c.data;
    if (f.type == wire::FrameType::kAck) ++c.acks;
  }
  return c;
}
int AckOnly(const std::vector<std::vector<uint8_t>>& datagrams) {
  int n = 0;
  for (const auto& d : datagrams) {
    const Content c = Inspect(d);
    if (c.data == 0 && c.acks > 0) ++n;
  }
  return n;
}

// One side: a core, its pipe end and the loop that drives them.
struct Side {
  Side(NetAddr addr, uint64_t incarnation, const ProtocolOptions& proto,
       Clock* clock, const DriveLoopOptions& lo)
      : addr(addr), backend(addr) {
    CoreConfig c;
    c.proto = proto;
    c.incarnation = incarnation;
    c.seed = incarnation;
    c.max_datagram = backend.MaxDatagram();
    c.entropy_count = backend.EntropyCount();
    c.local_port = addr.port;
    core = std::make_unique<EndpointCore>(c);
    loop = std::make_unique<DriveLoop>(&backend, core.get(), clock, lo);
    backend.set_log(true);
  }
  size_t Poll() {
    done.clear();
    return loop->Poll(&done, SIZE_MAX);
  }
  absl::Status Send(const NetAddr& to, uint32_t len) {
    std::vector<uint8_t> bytes(len, 0x5a);
    return loop->Send(to, OutMessage::Copy(bytes.data(), len));
  }
  size_t Received() const {
    size_t n = 0;
    for (const Completion& c : done) n += c.type == CompletionType::kRecv;
    return n;
  }

  NetAddr addr;
  PipeBackend backend;
  std::unique_ptr<EndpointCore> core;
  std::unique_ptr<DriveLoop> loop;
  std::vector<Completion> done;
};

class DriveLoopTest : public ::testing::Test {
 protected:
  void Make(const ProtocolOptions& proto = Acking(),
            const DriveLoopOptions& lo = {}) {
    a_ = std::make_unique<Side>(NetAddr::Ipv4(0x0a000001, 7000), 0x1111, proto,
                                &clock_, lo);
    b_ = std::make_unique<Side>(NetAddr::Ipv4(0x0a000002, 7000), 0x2222, proto,
                                &clock_, lo);
    PipeBackend::Connect(&a_->backend, &b_->backend);
  }
  // Every data packet is acked at once: an ack is due in every Poll that
  // receives data, so whether it waits shows.
  static ProtocolOptions Acking() {
    ProtocolOptions p;
    p.ack_every_packets = 1;
    return p;
  }
  // One ping (A -> B) and its pong (B -> A), B answering `answer` after the
  // Poll that handed it the ping.
  void PingPong(DurationNs answer = DurationNs::Zero()) {
    ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
    clock_.Advance(DurationNs::Micros(2));
    b_->Poll();
    ASSERT_EQ(b_->Received(), 1u);
    clock_.Advance(answer);
    ASSERT_TRUE(b_->Send(a_->addr, 64).ok());
    clock_.Advance(DurationNs::Micros(2));
    a_->Poll();
    ASSERT_EQ(a_->Received(), 1u);
  }

  ManualClock clock_{TimeNs(1000000)};
  std::unique_ptr<Side> a_, b_;
};

TEST_F(DriveLoopTest,
       AnAckIsHeldWhileTheApplicationHasMessagesAndRidesOnTheReply) {
  Make();
  PingPong();  // the loop learns that B answers at once
  b_->backend.clear_sent();
  ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
  clock_.Advance(DurationNs::Micros(2));
  b_->Poll();
  ASSERT_EQ(b_->Received(), 1u);
  EXPECT_TRUE(b_->backend.sent().empty()) << "the ack did not wait";
  ASSERT_TRUE(b_->Send(a_->addr, 64).ok());
  ASSERT_EQ(b_->backend.sent().size(), 1u);
  const Content reply = Inspect(b_->backend.sent()[0]);
  EXPECT_EQ(reply.data, 1);
  EXPECT_EQ(reply.acks, 1);
}

TEST_F(DriveLoopTest, WithoutAnAnswerTheHeldAckLeavesAtFlush) {
  Make();
  PingPong();
  b_->backend.clear_sent();
  ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
  clock_.Advance(DurationNs::Micros(2));
  b_->Poll();
  EXPECT_TRUE(b_->backend.sent().empty());
  b_->loop->Flush();  // B goes to sleep without answering
  EXPECT_EQ(AckOnly(b_->backend.sent()), 1);
}

// UCX's pattern: the application polls its other queues (Polls that find
// nothing) between the message and its answer.
TEST_F(DriveLoopTest, TheHeldAckWaitsThroughEmptyPollsForTheAnswer) {
  Make();
  // Four answers in time: holds may go on through Polls.
  for (int i = 0; i < 4; ++i) PingPong(DurationNs::Micros(3));
  b_->backend.clear_sent();
  ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
  clock_.Advance(DurationNs::Micros(2));
  b_->Poll();
  ASSERT_EQ(b_->Received(), 1u);
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(DurationNs::Nanos(500));
    b_->Poll();
  }
  EXPECT_TRUE(b_->backend.sent().empty()) << "the ack left before the answer";
  ASSERT_TRUE(b_->Send(a_->addr, 64).ok());
  ASSERT_EQ(b_->backend.sent().size(), 1u);
  const Content reply = Inspect(b_->backend.sent()[0]);
  EXPECT_EQ(reply.data, 1);
  EXPECT_EQ(reply.acks, 1);
}

TEST_F(DriveLoopTest, TheHeldAckLeavesAloneAtTheAckDelay) {
  Make();  // ack_delay 10 us
  for (int i = 0; i < 4; ++i) PingPong(DurationNs::Micros(3));
  b_->backend.clear_sent();
  ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
  clock_.Advance(DurationNs::Micros(2));
  b_->Poll();
  for (int i = 0; i < 9; ++i) {
    clock_.Advance(DurationNs::Micros(1));
    b_->Poll();
  }
  EXPECT_TRUE(b_->backend.sent().empty());
  clock_.Advance(DurationNs::Micros(2));
  b_->Poll();  // 11 us after the hand-off: no answer, the ack goes alone
  EXPECT_EQ(AckOnly(b_->backend.sent()), 1);
}

TEST_F(DriveLoopTest, AReceiverThatNeverAnswersAcksByItsNextPoll) {
  Make();
  for (int i = 0; i < 8; ++i) {
    b_->backend.clear_sent();
    ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
    clock_.Advance(DurationNs::Micros(2));
    b_->Poll();
    ASSERT_EQ(b_->Received(), 1u);
    clock_.Advance(DurationNs::Micros(1));
    b_->Poll();  // nothing new: whatever was held goes now
    EXPECT_EQ(AckOnly(b_->backend.sent()), 1) << "message " << i;
    a_->Poll();
  }
}

TEST_F(DriveLoopTest, NoAckIsHeldBeforeTheFirstAnswerIsTimed) {
  Make();
  ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
  b_->Poll();
  ASSERT_EQ(b_->Received(), 1u);
  EXPECT_EQ(AckOnly(b_->backend.sent()), 1);
}

TEST_F(DriveLoopTest, ACallerThatBlocksNeverHasAcksHeld) {
  Make();
  PingPong();
  b_->loop->set_caller_blocks();
  b_->backend.clear_sent();
  ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
  b_->Poll();
  ASSERT_EQ(b_->Received(), 1u);
  EXPECT_EQ(AckOnly(b_->backend.sent()), 1);
}

TEST_F(DriveLoopTest, TheFirstSendAfterAPollLeavesAtOnceAndLaterOnesAtFlush) {
  Make();
  a_->Poll();
  ASSERT_TRUE(a_->Send(b_->addr, 100).ok());
  EXPECT_EQ(a_->backend.sent().size(), 1u);
  ASSERT_TRUE(a_->Send(b_->addr, 100).ok());
  ASSERT_TRUE(a_->Send(b_->addr, 100).ok());
  EXPECT_EQ(a_->backend.sent().size(), 1u) << "a batched send left early";
  a_->loop->Flush();
  // The two batched messages share one datagram.
  ASSERT_EQ(a_->backend.sent().size(), 2u);
  EXPECT_EQ(Inspect(a_->backend.sent()[1]).data, 2);
  b_->Poll();
  EXPECT_EQ(b_->Received(), 3u);
}

// The datagrams A sends for one 20-datagram message, with the backend
// refusing all but `accept` of them on the first try.
std::vector<std::vector<uint8_t>> SendUnderBackPressure(size_t accept,
                                                        uint64_t* pressure) {
  ManualClock clock(TimeNs(1000000));
  Side a(NetAddr::Ipv4(0x0a000001, 7000), 0x1111, {}, &clock, {});
  Side b(NetAddr::Ipv4(0x0a000002, 7000), 0x2222, {}, &clock, {});
  PipeBackend::Connect(&a.backend, &b.backend);
  a.Poll();
  a.backend.AcceptOnly(accept);
  EXPECT_TRUE(a.Send(b.addr, 20 * (a.core->mss() - 64)).ok());
  if (accept != SIZE_MAX) {
    EXPECT_EQ(a.backend.sent().size(), accept);
  }
  a.backend.AcceptAll();
  a.Poll();
  b.Poll();
  EXPECT_EQ(b.Received(), 1u);
  *pressure = a.loop->tx_backpressure();
  return a.backend.sent();
}

TEST(DriveLoopBackPressureTest, RefusedDatagramsAreKeptAndGoFirstNextTime) {
  uint64_t pressure = 0;
  const std::vector<std::vector<uint8_t>> free_run =
      SendUnderBackPressure(SIZE_MAX, &pressure);
  EXPECT_EQ(pressure, 0u);
  ASSERT_GT(free_run.size(), 3u);
  // Refused datagrams were neither lost nor rebuilt: the same datagrams
  // left, in the same order, as without back-pressure.
  EXPECT_EQ(SendUnderBackPressure(3, &pressure), free_run);
  EXPECT_EQ(pressure, 1u);
}

TEST_F(DriveLoopTest,
       AFloodOfReceivedBurstsIsBoundedPerPollSoTransmitGetsATurn) {
  DriveLoopOptions lo;
  lo.burst = 4;
  lo.max_rx_bursts = 2;  // 8 datagrams per Poll
  Make(Acking(), lo);
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
    a_->loop->Flush();  // one datagram each
  }
  ASSERT_EQ(b_->backend.pending(), 30u);
  b_->Poll();
  EXPECT_EQ(b_->backend.pending(), 22u);
  EXPECT_TRUE(b_->loop->rx_backlog());
  EXPECT_FALSE(b_->backend.sent().empty()) << "no transmit in a flooded Poll";
  while (b_->loop->rx_backlog()) b_->Poll();
  EXPECT_EQ(b_->backend.pending(), 0u);
}

TEST_F(DriveLoopTest, CloseFailsPendingSendsAndStopsIo) {
  Make();
  a_->backend.AcceptOnly(0);
  ASSERT_TRUE(a_->Send(b_->addr, 64).ok());
  a_->loop->Close();
  EXPECT_TRUE(a_->loop->closed());
  a_->backend.AcceptAll();
  a_->Poll();
  EXPECT_TRUE(a_->backend.sent().empty());
  ASSERT_EQ(a_->done.size(), 1u);
  EXPECT_EQ(a_->done[0].type, CompletionType::kSendFailed);
}

TEST_F(DriveLoopTest, NextWakeIsTheCoresTimerWhenTheBackendHasNoDeadline) {
  Make();
  EXPECT_TRUE(a_->loop->NextWake().IsInfinite());
  ASSERT_TRUE(a_->Send(b_->addr, 64).ok());  // starts the retransmit timer
  EXPECT_EQ(a_->loop->NextWake(), a_->core->NextWake());
  EXPECT_FALSE(a_->loop->NextWake().IsInfinite());
}

}  // namespace
}  // namespace braid::endpoint

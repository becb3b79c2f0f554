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

// A clock that counts its readings.
class CountingClock final : public Clock {
 public:
  TimeNs Now() override {
    ++reads;
    return now;
  }
  TimeNs now = TimeNs(1000000);
  int reads = 0;
};

TEST(DriveLoopClockTest, BatchedSendsToABusyPeerReadNoClock) {
  CountingClock clock;
  Side a(NetAddr::Ipv4(0x0a000001, 7000), 0x1111, {}, &clock, {});
  Side b(NetAddr::Ipv4(0x0a000002, 7000), 0x2222, {}, &clock, {});
  Side c(NetAddr::Ipv4(0x0a000003, 7000), 0x3333, {}, &clock, {});
  PipeBackend::Connect(&a.backend, &b.backend);
  a.Poll();
  ASSERT_TRUE(a.Send(b.addr, 100).ok());  // leaves at once: reads the clock
  const int after_first = clock.reads;
  EXPECT_GT(after_first, 0);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(a.Send(b.addr, 100).ok());
  EXPECT_EQ(clock.reads, after_first) << "a batched send to a busy peer";
  // A new peer needs the time (its entry, its silence deadline): one read.
  ASSERT_TRUE(a.Send(c.addr, 100).ok());
  EXPECT_EQ(clock.reads, after_first + 1);
  ASSERT_TRUE(a.Send(c.addr, 100).ok());
  EXPECT_EQ(clock.reads, after_first + 1);
  a.loop->Flush();
  b.Poll();
  EXPECT_EQ(b.Received(), 11u);
}

TEST(DriveLoopClockTest, ABatchedSendToAnIdlePeerStartsItsDeadlineNow) {
  CountingClock clock;
  ProtocolOptions p;
  p.peer_timeout = DurationNs::Millis(50);
  Side a(NetAddr::Ipv4(0x0a000001, 7000), 0x1111, p, &clock, {});
  Side b(NetAddr::Ipv4(0x0a000002, 7000), 0x2222, p, &clock, {});
  Side c(NetAddr::Ipv4(0x0a000003, 7000), 0x3333, p, &clock, {});
  PipeBackend::Connect(&a.backend, &b.backend);
  // A talks to B until B is idle again: its send acked and completed.
  a.Poll();
  ASSERT_TRUE(a.Send(b.addr, 100).ok());
  bool first_done = false;
  for (int i = 0; i < 4; ++i) {
    clock.now = clock.now + DurationNs::Micros(10);
    b.Poll();
    b.loop->Flush();
    a.Poll();
    for (const Completion& x : a.done) {
      first_done |= x.type == CompletionType::kSendDone;
    }
  }
  ASSERT_TRUE(first_done);
  // Later, a batch whose first message goes to C (unconnected: it stays in
  // flight) and whose second goes to the idle B after the application
  // worked for longer than the peer timeout.
  clock.now = clock.now + DurationNs::Millis(20);
  a.Poll();
  ASSERT_TRUE(a.Send(c.addr, 100).ok());
  const int reads = clock.reads;
  clock.now = clock.now + DurationNs::Millis(60);
  ASSERT_TRUE(a.Send(b.addr, 100).ok());
  EXPECT_EQ(clock.reads, reads + 1) << "the idle peer's send read the clock";
  // B's silence deadline counts from that send, not from the batch's first
  // (60 ms before, past the 50 ms timeout): A's next Poll runs its timers
  // before B can answer, and B's send stands; then B's ack completes it.
  bool b_failed = false, b_done = false;
  const auto scan = [&] {
    for (const Completion& x : a.done) {
      b_failed |= x.type == CompletionType::kSendFailed && x.peer == b.addr;
      b_done |= x.type == CompletionType::kSendDone && x.peer == b.addr;
    }
  };
  clock.now = clock.now + DurationNs::Millis(1);
  a.Poll();
  scan();
  b.Poll();
  EXPECT_EQ(b.Received(), 1u);
  b.loop->Flush();
  clock.now = clock.now + DurationNs::Millis(1);
  a.Poll();
  scan();
  EXPECT_FALSE(b_failed) << "B's deadline started at a stale time";
  EXPECT_TRUE(b_done);
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

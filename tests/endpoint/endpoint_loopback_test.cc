// The Endpoint over real kernel UDP sockets on loopback.
#include <poll.h>

#include <chrono>
#include <thread>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "tests/endpoint/pair_driver.h"

namespace braid {
namespace {

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 31 + i * 7);
  return v;
}

using testing::OpenOrDie;
using testing::PollBothUntil;

TEST(EndpointLoopbackTest, MessagesOfManySizesArriveExactlyOnceAndByteExact) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  const std::vector<size_t> sizes = {0,    1,    100,   1400,
                                     1500, 4000, 65536, 1 << 20};
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto m = Pattern(sizes[i], static_cast<uint32_t>(i));
    ASSERT_TRUE(a->Send(b->local_address(), m, {.cookie = i}).ok());
  }
  std::vector<Completion> ca, cb;
  PollBothUntil(*a, *b, &ca, &cb, [&] {
    return ca.size() == sizes.size() && cb.size() == sizes.size();
  });
  ASSERT_EQ(ca.size(), sizes.size());
  ASSERT_EQ(cb.size(), sizes.size());
  for (const Completion& c : ca) EXPECT_EQ(c.type, CompletionType::kSendDone);
  std::vector<int> seen(sizes.size(), 0);
  for (const Completion& c : cb) {
    ASSERT_EQ(c.type, CompletionType::kRecv);
    EXPECT_EQ(c.peer, a->local_address());
    size_t idx = 0;
    while (idx < sizes.size() && (sizes[idx] != c.data.size() || seen[idx]))
      ++idx;
    ASSERT_LT(idx, sizes.size());
    EXPECT_EQ(c.data, Pattern(sizes[idx], static_cast<uint32_t>(idx)));
    ++seen[idx];
  }
}

// Poll with max 0 is a progress call: the receiver takes the datagrams in
// and acks them (the sender's send completes) while no completion leaves;
// the message waits for a later Poll, whole.
TEST(EndpointLoopbackTest, PollWithMaxZeroMakesProgressAndKeepsCompletions) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  const auto m = Pattern(1 << 20, 9);
  ASSERT_TRUE(a->Send(b->local_address(), m, {.cookie = 7}).ok());
  std::vector<Completion> ca, cb;
  size_t appended = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ca.empty() && std::chrono::steady_clock::now() < deadline) {
    a->Poll(&ca);
    appended += b->Poll(&cb, 0);
  }
  ASSERT_EQ(ca.size(), 1u);
  EXPECT_EQ(ca[0].type, CompletionType::kSendDone);
  EXPECT_EQ(ca[0].cookie, 7u);
  EXPECT_EQ(appended, 0u);
  EXPECT_TRUE(cb.empty());
  EXPECT_EQ(b->stats().messages_received, 1u);
  for (int i = 0; i < 100 && cb.empty(); ++i) b->Poll(&cb);
  ASSERT_EQ(cb.size(), 1u);
  EXPECT_EQ(cb[0].type, CompletionType::kRecv);
  EXPECT_EQ(cb[0].data, m);
}

// Endpoints configured with different MTUs still talk, both ways: the one
// with the smaller MTU takes the larger datagrams (and counts them).
TEST(EndpointLoopbackTest, PeersWithDifferentMtusExchangeMessagesBothWays) {
  EndpointOptions small, large;
  small.mtu = 1500;
  large.mtu = 9000;
  auto a = OpenOrDie(small);
  auto b = OpenOrDie(large);
  ASSERT_TRUE(a && b);
  const auto m = Pattern(100000, 5);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(a->Send(b->local_address(), m).ok());
    ASSERT_TRUE(b->Send(a->local_address(), m).ok());
  }
  std::vector<Completion> ca, cb;
  size_t ra = 0, rb = 0;
  PollBothUntil(*a, *b, &ca, &cb, [&] {
    ra = rb = 0;
    for (const Completion& c : ca) ra += c.type == CompletionType::kRecv;
    for (const Completion& c : cb) rb += c.type == CompletionType::kRecv;
    return ca.size() == 8 && cb.size() == 8;
  });
  ASSERT_EQ(ra, 4u);
  ASSERT_EQ(rb, 4u);
  for (const auto* v : {&ca, &cb}) {
    for (const Completion& c : *v) {
      if (c.type == CompletionType::kRecv) {
        EXPECT_EQ(c.data, m);
      } else {
        EXPECT_EQ(c.type, CompletionType::kSendDone);
      }
    }
  }
  EXPECT_GT(a->stats().rx_over_mtu, 0u);
  EXPECT_EQ(b->stats().rx_over_mtu, 0u);
}

// Sends 5 messages a -> b, both busy-polling; returns how many kernel
// receive timestamps b has read so far.
uint64_t TimestampsAfterExchange(Endpoint& a, Endpoint& b) {
  const auto m = Pattern(100, 9);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(a.Send(b.local_address(), m).ok());
  std::vector<Completion> ca, cb;
  PollBothUntil(a, b, &ca, &cb,
                [&] { return ca.size() == 5 && cb.size() == 5; });
  EXPECT_EQ(cb.size(), 5u);
  return b.stats().rx_timestamps;
}

// wait_fd()'s contract: Wait(Zero) right before blocking on it. A protocol
// timer that is already due when that Wait(Zero) runs must still wake the
// caller: Wait(Zero) may consume the timer's expiry, but must leave the fd
// readable until a Poll has acted on it. (braid0's ibv_get_cq_event, which
// blocks this way, otherwise slept through the timer that re-sends a lost
// packet.)
// Wait(timeout) on an endpoint with nothing to do sleeps for the timeout:
// sub-millisecond timeouts were truncated to 0 ms, so a caller's wait loop
// spun instead of sleeping.
TEST(EndpointLoopbackTest, IdleWaitSleepsForSubMillisecondTimeouts) {
  auto a = OpenOrDie();
  for (int64_t us : {200, 999, 1500}) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) a->Wait(DurationNs::Micros(us));
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(took, std::chrono::microseconds(5 * us)) << us << " us";
  }
}

// fd()'s contract: readable while work is left, and completions that a
// Poll with a small `max` left behind are work. Wait returns at once for
// them. (Before, the fd went quiet after the first Poll(&out, 1) and a
// caller blocking on it slept with nine messages waiting.)
TEST(EndpointLoopbackTest, CompletionsLeftByPollKeepTheFdReadable) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  const int fd = b->fd();
  const auto m = Pattern(100, 3);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(a->Send(b->local_address(), m).ok());
  std::vector<Completion> ca, cb;
  // Until all ten arrived, taking none of them.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (b->stats().messages_received < 10 &&
         std::chrono::steady_clock::now() < deadline) {
    a->Poll(&ca);
    b->Poll(&cb, 0);
  }
  ASSERT_EQ(b->stats().messages_received, 10u);
  size_t taken = 0;
  for (int i = 0; i < 10; ++i) {
    pollfd p{fd, POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 1000), 1) << "fd quiet with completions left, " << i;
    cb.clear();
    taken += b->Poll(&cb, 1);
  }
  EXPECT_EQ(taken, 10u);
  // The same through Wait, on another batch.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(a->Send(b->local_address(), m).ok());
  while (b->stats().messages_received < 20 &&
         std::chrono::steady_clock::now() < deadline) {
    a->Poll(&ca);
    b->Poll(&cb, 0);
  }
  taken = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) {
    b->Wait(DurationNs::Seconds(2));
    cb.clear();
    taken += b->Poll(&cb, 1);
  }
  EXPECT_EQ(taken, 10u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2))
      << "Wait slept with completions waiting";
}

TEST(EndpointLoopbackTest, WaitZeroLeavesADueTimerVisibleOnWaitFd) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();  // never polled: nothing is acked, a's timer runs
  ASSERT_TRUE(a && b);
  const std::vector<uint8_t> msg = Pattern(1000, 1);
  ASSERT_TRUE(a->Send(b->local_address(), msg, {}).ok());
  std::vector<Completion> done;
  a->Poll(&done);
  const int fd = a->wait_fd();
  a->Wait(DurationNs::Zero());  // arms the timer (RTO / tail probe)
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // now due
  a->Wait(DurationNs::Zero());
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 1) << "a due timer left the fd quiet";
  // Once a Poll has acted on it, the fd quiets down (no busy loop).
  a->Poll(&done);
  a->Wait(DurationNs::Zero());
  EXPECT_EQ(poll(&p, 1, 0), 0);
}

// The ack for a received message waits for the application's answer (and
// rides on it) only while the application answers within the ack delay: not
// before its first answer was timed, and not after a slow one, so a peer's
// tail-probe timer is not left waiting on the application's work.
TEST(EndpointLoopbackTest, AcksWaitForTheAnswerOnlyWhileAnswersAreQuick) {
  // "Quick" is within B's ack delay. 50 ms instead of the default 10 us,
  // so the immediate answers below count as quick also in a sanitizer build
  // on a loaded machine (with 10 us they failed there in up to 9 of 10
  // runs, with 1 ms in a CI run whose sanitizer build ran alongside); the
  // slow answer comes 4 times that later.
  EndpointOptions ob;
  ob.protocol.ack_delay = DurationNs::Millis(50);
  auto a = OpenOrDie();
  auto b = OpenOrDie(ob);
  ASSERT_TRUE(a && b);
  const std::vector<uint8_t> msg(64, 0x42);
  std::vector<Completion> ca, cb;
  // A sends; B polls until the message is handed over. Returns how many
  // datagrams B sent in the Poll that handed it over (its ack, or nothing
  // if the ack waits for the answer).
  auto deliver = [&]() -> int {
    EXPECT_TRUE(a->Send(b->local_address(), msg).ok());
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      const uint64_t before = b->stats().datagrams_sent;
      cb.clear();
      b->Poll(&cb);
      for (const Completion& c : cb) {
        if (c.type == CompletionType::kRecv) {
          return static_cast<int>(b->stats().datagrams_sent - before);
        }
      }
    }
    ADD_FAILURE() << "message not delivered";
    return -1;
  };
  // B answers, then A takes the answer (and the ack riding on it).
  auto answer = [&] {
    ASSERT_TRUE(b->Send(a->local_address(), msg).ok());
    PollBothUntil(*a, *b, &ca, &cb, [&] {
      for (const Completion& c : ca) {
        if (c.type == CompletionType::kRecv) return true;
      }
      return false;
    });
    ca.clear();
    cb.clear();
  };
  EXPECT_EQ(deliver(), 1) << "no answer timed yet: the ack goes at once";
  answer();  // at once
  EXPECT_EQ(deliver(), 0) << "quick answers: the ack waits for the answer";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  answer();  // 200 ms later, far past the 50 ms ack delay
  EXPECT_EQ(deliver(), 1) << "after a slow answer the ack goes at once";
  answer();
}

TEST(EndpointLoopbackTest, AutoRxTimestampsStartWhenTheApplicationBlocks) {
  EndpointOptions o;
  // No Poll gap turns them on here, however loaded the machine.
  o.udp.rx_timestamps_poll_gap = DurationNs::Seconds(100);
  auto a = OpenOrDie();
  auto b = OpenOrDie(o);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(TimestampsAfterExchange(*a, *b), 0u);  // busy-polling only
  b->Wait(DurationNs::Zero());
  EXPECT_GT(TimestampsAfterExchange(*a, *b), 0u);
}

TEST(EndpointLoopbackTest, AutoRxTimestampsStartAfterALatePoll) {
  EndpointOptions o;
  o.udp.rx_timestamps_poll_gap = DurationNs::Millis(1);
  o.udp.rx_timestamps_linger = DurationNs::Seconds(100);  // never off here
  auto a = OpenOrDie();
  auto b = OpenOrDie(o);
  ASSERT_TRUE(a && b);
  std::vector<Completion> done;
  b->Poll(&done);
  // Longer than the gap: b was "descheduled" between two Polls.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  b->Poll(&done);
  EXPECT_GT(TimestampsAfterExchange(*a, *b), 0u);
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(b->stats().rx_timestamp_switches, 1u);
}

// A busy poller that was late once goes back to reading without kernel
// timestamps (they make every receive dearer) once its Polls have been
// prompt for rx_timestamps_linger; a later late Poll turns them on again.
TEST(EndpointLoopbackTest, AutoRxTimestampsStopWhenPollsArePromptAgain) {
  EndpointOptions o;
  // 50 ms between Polls of the loops below counts as prompt even on a
  // loaded machine running sanitizer builds.
  o.udp.rx_timestamps_poll_gap = DurationNs::Millis(50);
  o.udp.rx_timestamps_linger = DurationNs::Millis(30);
  auto a = OpenOrDie();
  auto b = OpenOrDie(o);
  ASSERT_TRUE(a && b);
  std::vector<Completion> done;
  auto late_poll = [&] {
    b->Poll(&done);
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    b->Poll(&done);
  };
  // Polls b, never more than ~1 ms apart, until the linger has passed.
  auto prompt_polls = [&] {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(90);
    while (std::chrono::steady_clock::now() < until) {
      b->Poll(&done);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  };
  late_poll();
  const uint64_t on = TimestampsAfterExchange(*a, *b);
  EXPECT_GT(on, 0u) << "a late Poll turns them on";
  prompt_polls();
  EXPECT_EQ(TimestampsAfterExchange(*a, *b), on) << "prompt Polls: off again";
  late_poll();
  EXPECT_GT(TimestampsAfterExchange(*a, *b), on) << "late again: on again";
  EXPECT_EQ(b->stats().rx_timestamp_switches, 3u);
  // From a Wait on they stay on, however prompt the Polls.
  b->Wait(DurationNs::Zero());
  const uint64_t blocking = TimestampsAfterExchange(*a, *b);
  prompt_polls();
  EXPECT_GT(TimestampsAfterExchange(*a, *b), blocking);
  EXPECT_EQ(b->stats().rx_timestamp_switches, 3u);
}

TEST(EndpointLoopbackTest, RxTimestampsAlwaysOrNeverWhateverTheWaiting) {
  EndpointOptions always, never;
  always.udp.rx_timestamps = RxTimestamps::kAlways;
  never.udp.rx_timestamps = RxTimestamps::kNever;
  auto a = OpenOrDie();
  auto b = OpenOrDie(always);
  auto c = OpenOrDie(never);
  ASSERT_TRUE(a && b && c);
  EXPECT_GT(TimestampsAfterExchange(*a, *b), 0u);
  c->Wait(DurationNs::Zero());
  (void)c->fd();
  EXPECT_EQ(TimestampsAfterExchange(*a, *c), 0u);
}

}  // namespace
}  // namespace braid

// What the steady-state data path costs over kernel UDP on loopback, counted
// (not timed): datagrams and syscalls per ping-pong round trip, and heap
// allocations per message (this binary counts operator new calls, see
// tools/braid_perf/alloc_counter.cc).
#include <poll.h>

#include <chrono>
#include <iostream>
#include <vector>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "tools/braid_perf/alloc_counter.h"

namespace braid {
namespace {

std::unique_ptr<Endpoint> OpenOrDie() {
  EndpointOptions o;
  o.bind = "127.0.0.1:0";
  auto ep = Endpoint::Open(o);
  EXPECT_TRUE(ep.ok()) << ep.status();
  return ep.ok() ? std::move(*ep) : nullptr;
}

// Busy-polled ping-pong of `rounds` 64-byte messages: a sends, b answers each
// message it receives with one of its own. Returns false on a hang (a
// generous wall-clock bound, not a timing assertion).
bool PingPong(Endpoint& a, Endpoint& b, int rounds) {
  const std::vector<uint8_t> msg(64, 0x42);
  std::vector<Completion> ca, cb;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int pongs = 0;
  if (!a.Send(b.local_address(), msg).ok()) return false;
  while (pongs < rounds) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    cb.clear();
    b.Poll(&cb);
    for (const Completion& c : cb) {
      if (c.type == CompletionType::kRecv &&
          !b.Send(a.local_address(), msg).ok()) {
        return false;
      }
    }
    ca.clear();
    a.Poll(&ca);
    for (const Completion& c : ca) {
      if (c.type != CompletionType::kRecv) continue;
      if (++pongs < rounds && !a.Send(b.local_address(), msg).ok()) {
        return false;
      }
    }
  }
  return true;
}

// Acks ride on the replies: about one datagram per message each way (a few
// more for acks of the last message and the occasional tail probe when the
// host deschedules a process), where an ack per message would double it.
// Busy-polling callers that never ask for fd() pay no timer syscalls.
TEST(EndpointDatapathCostTest, PingPongSendsAboutOneDatagramPerMessage) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(PingPong(*a, *b, 100));  // warm-up: session set up
  const EndpointStats a0 = a->stats(), b0 = b->stats();
  constexpr int kRounds = 2000;
  ASSERT_TRUE(PingPong(*a, *b, kRounds));
  const EndpointStats a1 = a->stats(), b1 = b->stats();
  const uint64_t sent = (a1.datagrams_sent - a0.datagrams_sent) +
                        (b1.datagrams_sent - b0.datagrams_sent);
  const uint64_t retransmits =
      (a1.reliability.retransmits - a0.reliability.retransmits) +
      (b1.reliability.retransmits - b0.reliability.retransmits);
  EXPECT_LE(sent - retransmits, 2u * kRounds + kRounds / 10)
      << "acks were not piggybacked on the replies";
  EXPECT_EQ(a1.timer_syscalls, 0u);
  EXPECT_EQ(b1.timer_syscalls, 0u);
  EXPECT_EQ(a1.wait_syscalls, 0u);
  // One sendmmsg per datagram at most (no separate ack sends).
  EXPECT_LE(
      (a1.tx_syscalls - a0.tx_syscalls) + (b1.tx_syscalls - b0.tx_syscalls),
      sent);
}

// Once a caller took fd() (it may block on it itself), every protocol timer
// is armed on it and no ack is held back; the ping-pong still completes.
TEST(EndpointDatapathCostTest, CallersOfFdStillGetTimersAndAcks) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  (void)a->fd();
  (void)b->fd();
  ASSERT_TRUE(PingPong(*a, *b, 200));
  EXPECT_GT(a->stats().timer_syscalls, 0u);
}

// wait_fd() hands out the descriptor without fd()'s switch: a busy-polled
// ping-pong still piggybacks acks and arms no timer, and the descriptor
// still becomes readable when a message arrives.
TEST(EndpointDatapathCostTest, WaitFdKeepsAcksOnRepliesAndSignalsArrivals) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  const int b_fd = b->wait_fd();
  ASSERT_GE(b_fd, 0);
  (void)a->wait_fd();
  ASSERT_TRUE(PingPong(*a, *b, 100));
  const EndpointStats before = b->stats();
  constexpr int kRounds = 1000;
  ASSERT_TRUE(PingPong(*a, *b, kRounds));
  const EndpointStats after = b->stats();
  // b answers each message: one datagram per reply, its acks riding on
  // them (an ack per message would double it).
  EXPECT_LE(
      after.datagrams_sent - before.datagrams_sent -
          (after.reliability.retransmits - before.reliability.retransmits),
      kRounds + kRounds / 10u);
  EXPECT_EQ(after.timer_syscalls, 0u);
  EXPECT_EQ(a->stats().timer_syscalls, 0u);

  std::vector<Completion> cb;
  b->Poll(&cb);
  b->Wait(DurationNs::Zero());  // what a caller does before blocking
  ASSERT_TRUE(a->Send(b->local_address(), std::vector<uint8_t>(64, 1)).ok());
  pollfd pfd{.fd = b_fd, .events = POLLIN, .revents = 0};
  EXPECT_EQ(poll(&pfd, 1, /*timeout ms=*/10000), 1);
}

// Small messages sent back to back between two Polls share datagrams: the
// first goes at once (a reply must not wait), the rest leave together at
// the next Poll, not as one datagram and one syscall per Send.
TEST(EndpointDatapathCostTest, BurstOfSmallSendsSharesDatagrams) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(PingPong(*a, *b, 10));  // session set up
  std::vector<Completion> ca, cb;
  a->Poll(&ca);
  const EndpointStats s0 = a->stats();
  const std::vector<uint8_t> msg(64, 7);
  constexpr int kBurst = 200;
  for (int i = 0; i < kBurst; ++i) {
    ASSERT_TRUE(a->Send(b->local_address(), msg).ok());
  }
  const EndpointStats s1 = a->stats();
  EXPECT_EQ(s1.datagrams_sent - s0.datagrams_sent, 1u);
  a->Poll(&ca);
  const EndpointStats s2 = a->stats();
  // 199 messages of 64 B + 48 B of header each fit ~12 to a datagram.
  EXPECT_LE(s2.datagrams_sent - s1.datagrams_sent, 20u);
  EXPECT_LE(s2.tx_syscalls - s0.tx_syscalls, 4u);
  int received = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (received < kBurst && std::chrono::steady_clock::now() < deadline) {
    cb.clear();
    b->Poll(&cb);
    for (const Completion& c : cb) received += c.type == CompletionType::kRecv;
    a->Poll(&ca);
  }
  EXPECT_EQ(received, kBurst);
}

// Set while the sender's calls are counted (a debugger can break on
// allocations while it is set).
volatile bool g_counting = false;

// Allocations made inside `fn`.
template <typename Fn>
uint64_t AllocationsIn(Fn fn) {
  const uint64_t before = perf::AllocationCount();
  fn();
  return perf::AllocationCount() - before;
}

// A copying Send refused because the send queue is full hands its copy back
// to the pool: a caller retrying until the queue drains allocates nothing
// per attempt (each refused attempt freed a 64 KiB copy, and the next one
// allocated it again).
TEST(EndpointDatapathCostTest, RefusedCopyingSendsAllocateNothingOnRetry) {
  EndpointOptions o;
  o.bind = "127.0.0.1:0";
  o.protocol.max_pending_sends = 1;
  auto a = Endpoint::Open(o);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = OpenOrDie();
  std::vector<uint8_t> msg(65536, 3);
  // Warm the pool: one accepted, completed copying send leaves its copy.
  ASSERT_TRUE((*a)->Send(b->local_address(), msg).ok());
  std::vector<Completion> ca, cb;
  ca.reserve(64);
  cb.reserve(64);
  for (int i = 0; i < 100000 && ca.empty(); ++i) {
    (*a)->Poll(&ca);
    b->Poll(&cb);
  }
  ASSERT_EQ(ca.size(), 1u);
  ASSERT_TRUE((*a)->Send(b->local_address(), msg).ok());  // fills the queue
  // The error status itself allocates (its message); a refused zero-copy
  // send makes no copy, so it is the baseline.
  int refused = 0;
  const uint64_t zero_copy = AllocationsIn([&] {
    for (int i = 0; i < 100; ++i) {
      refused += absl::IsResourceExhausted(
          (*a)->SendZeroCopy(b->local_address(), msg));
    }
  });
  const uint64_t copying = AllocationsIn([&] {
    for (int i = 0; i < 100; ++i) {
      refused += absl::IsResourceExhausted((*a)->Send(b->local_address(), msg));
    }
  });
  EXPECT_EQ(refused, 200);
  EXPECT_LE(copying, zero_copy + 2)
      << "100 refused copying sends: " << copying
      << " allocations; 100 refused zero-copy sends: " << zero_copy;
}

// The sender's steady state allocates nothing per message: zero-copy and
// copying sends of small and 64 KiB messages, with acks and completions
// flowing. Only the sender's calls are counted (the receiver hands out one
// std::vector per message by API design, see Completion::data). What may
// remain is amortised growth: a per-path transmit log in retransmit/
// doubles when a path's unresolved packets outgrow it (a retransmission
// burst after the host descheduled us); that is a handful per run, where
// std::deque send queues made ~0.45 allocations per message.
TEST(EndpointDatapathCostTest, SenderAllocatesNothingPerMessage) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> small(64, 1), large(65536, 2);
  std::vector<Completion> ca, cb;
  ca.reserve(1024);
  cb.reserve(1024);
  uint64_t a_allocs = 0;
  int done = 0, received = 0;
  // Keeps `window` messages outstanding until `total` completed.
  auto run = [&](const std::vector<uint8_t>& msg, bool copy, int total,
                 int window, bool count) {
    done = received = 0;
    int sent = 0;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (done < total && std::chrono::steady_clock::now() < deadline) {
      g_counting = count;
      const uint64_t n = AllocationsIn([&] {
        while (sent < total && sent - done < window) {
          absl::Status s = copy ? a->Send(b->local_address(), msg)
                                : a->SendZeroCopy(b->local_address(), msg);
          if (!s.ok()) break;
          ++sent;
        }
        ca.clear();
        a->Poll(&ca);
      });
      g_counting = false;
      if (count) a_allocs += n;
      for (const Completion& c : ca)
        done += c.type == CompletionType::kSendDone;
      cb.clear();
      b->Poll(&cb);
      received += static_cast<int>(cb.size());
    }
  };
  // Warm-up grows the queues, pools and tables to their working size; then
  // `total` messages are counted. At most one allocation per `per` messages.
  auto measure = [&](const std::vector<uint8_t>& msg, bool copy, int total,
                     int window, int per) {
    run(msg, copy, total * 3 / 5, window, false);
    a_allocs = 0;
    run(msg, copy, total, window, true);
    EXPECT_EQ(done, total);
    EXPECT_LE(a_allocs, static_cast<uint64_t>(total / per))
        << msg.size() << " B, copy=" << copy;
    std::cout << msg.size() << " B messages, copy=" << copy << ": " << a_allocs
              << " sender allocations in " << total << " messages\n";
  };
  for (bool copy : {false, true}) {
    measure(small, copy, 5000, 256, 50);
    measure(large, copy, 500, 16, 10);
  }
}

// Runs `total` messages of `msg` from a to b, keeping `window` outstanding,
// both endpoints polled on this thread. `recycle`: both sides hand their
// completions back with Endpoint::Recycle (else they clear them). Returns
// the process's allocations during the run (both sides and this driver),
// or UINT64_MAX on a hang.
uint64_t OneWayAllocations(Endpoint& a, Endpoint& b,
                           const std::vector<uint8_t>& msg, int total,
                           int window, bool recycle) {
  std::vector<Completion> ca, cb;
  ca.reserve(1024);
  cb.reserve(1024);
  int sent = 0, done = 0, received = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const uint64_t before = perf::AllocationCount();
  while (done < total || received < total) {
    if (std::chrono::steady_clock::now() > deadline) return UINT64_MAX;
    while (sent < total && sent - done < window &&
           a.Send(b.local_address(), msg).ok()) {
      ++sent;
    }
    a.Poll(&ca);
    for (const Completion& c : ca) done += c.type == CompletionType::kSendDone;
    b.Poll(&cb);
    for (const Completion& c : cb) {
      if (c.type == CompletionType::kRecv && c.data.size() == msg.size()) {
        ++received;
      }
    }
    if (recycle) {
      a.Recycle(&ca);
      b.Recycle(&cb);
    } else {
      ca.clear();
      cb.clear();
    }
  }
  return perf::AllocationCount() - before;
}

// Ping-pong of `rounds` messages of `msg` (both sides copy, receive and
// recycle). Returns the process's allocations, or UINT64_MAX on a hang.
uint64_t PingPongAllocations(Endpoint& a, Endpoint& b,
                             const std::vector<uint8_t>& msg, int rounds) {
  std::vector<Completion> ca, cb;
  ca.reserve(256);
  cb.reserve(256);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const uint64_t before = perf::AllocationCount();
  int pongs = 0;
  if (!a.Send(b.local_address(), msg).ok()) return UINT64_MAX;
  while (pongs < rounds) {
    if (std::chrono::steady_clock::now() > deadline) return UINT64_MAX;
    b.Poll(&cb);
    for (const Completion& c : cb) {
      if (c.type == CompletionType::kRecv &&
          !b.Send(a.local_address(), c.data).ok()) {
        return UINT64_MAX;
      }
    }
    b.Recycle(&cb);
    a.Poll(&ca);
    for (const Completion& c : ca) {
      if (c.type == CompletionType::kRecv && ++pongs < rounds &&
          !a.Send(b.local_address(), c.data).ok()) {
        return UINT64_MAX;
      }
    }
    a.Recycle(&ca);
  }
  return perf::AllocationCount() - before;
}

// With Endpoint::Recycle, neither side allocates per message in the steady
// state: 64 B messages (a window of 256, so many share a datagram and many
// complete per Poll) and 64 KiB messages (45 fragments each), one way and
// ping-pong. Everything in the process is counted: sender, receiver and
// this driver. Without Recycle the same run allocates about one buffer per
// received message (the caller keeps them), which shows the count sees it.
TEST(EndpointDatapathCostTest, RecyclingReceiverAllocatesNothingPerMessage) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  const std::vector<uint8_t> small(64, 3), large(65536, 4);
  struct Case {
    const std::vector<uint8_t>* msg;
    int total, window, per;  // at most total/per allocations
  };
  for (const Case& k :
       {Case{&small, 20000, 256, 50}, Case{&large, 1000, 16, 20}}) {
    const size_t size = k.msg->size();
    // Warm-up: pools, queues and tables grow to their working size.
    ASSERT_NE(OneWayAllocations(*a, *b, *k.msg, k.total / 2, k.window, true),
              UINT64_MAX);
    const uint64_t n =
        OneWayAllocations(*a, *b, *k.msg, k.total, k.window, true);
    ASSERT_NE(n, UINT64_MAX) << size << " B: hung";
    std::cout << size << " B one way, recycled: " << n << " allocations in "
              << k.total << " messages\n";
    EXPECT_LE(n, static_cast<uint64_t>(k.total / k.per)) << size << " B";

    const uint64_t kept =
        OneWayAllocations(*a, *b, *k.msg, k.total, k.window, false);
    ASSERT_NE(kept, UINT64_MAX) << size << " B: hung";
    std::cout << size << " B one way, not recycled: " << kept
              << " allocations in " << k.total << " messages\n";
    EXPECT_GE(kept, static_cast<uint64_t>(k.total) * 9 / 10) << size << " B";

    ASSERT_NE(PingPongAllocations(*a, *b, *k.msg, 200), UINT64_MAX);
    const int rounds = k.total / 10;
    const uint64_t pp = PingPongAllocations(*a, *b, *k.msg, rounds);
    ASSERT_NE(pp, UINT64_MAX) << size << " B ping-pong: hung";
    std::cout << size << " B ping-pong, recycled: " << pp << " allocations in "
              << 2 * rounds << " messages\n";
    EXPECT_LE(pp, static_cast<uint64_t>(2 * rounds / k.per)) << size << " B";
  }
}

}  // namespace
}  // namespace braid

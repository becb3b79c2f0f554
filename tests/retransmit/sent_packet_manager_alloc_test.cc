// Steady state allocates nothing: after a warm-up that grows the rings and
// heaps, a long run of sends, acks (with losses, re-sends and timers) makes
// no heap allocation. Counts calls to the global operator new.
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "gtest/gtest.h"
#include "retransmit/sent_packet_manager.h"

// Our replacement operator new/delete pair up through malloc/free; GCC cannot
// see that across the replacement and warns.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocs{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) ++g_allocs;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace braid::retransmit {
namespace {

using wire::PathId;
using wire::PathSeq;
using wire::Psn;

// Same FIFO model as the benchmark: transmissions arrive in send order; one
// first transmission in `loss_every` is dropped.
struct Loop {
  explicit Loop(int paths) : seq(paths, 0), fifo(4096) {}

  void Transmit(Psn psn, bool first) {
    const PathId p = static_cast<PathId>(rr++ % seq.size());
    const PathSeq s(seq[p]++);
    if (first) {
      m.OnFirstSent(psn.value(), 1000, p, s, now);
    } else {
      m.OnRetransmitted(psn, p, s, now);
    }
    fifo[tail++ % fifo.size()] = {psn, p, s, !(first && psn.value() % 97 == 5)};
  }
  void Step() {
    now += DurationNs::Nanos(200);
    const Tx t = head < tail ? fifo[head++ % fifo.size()] : Tx{};
    if (t.arrives) {
      received[t.psn.value() % received.size()] = t.psn.value() + 1;
      while (received[cum % received.size()] == cum + 1) ++cum;
      for (uint64_t& w : words) w = 0;
      for (uint32_t off = 0; off < 256; ++off) {
        const uint32_t p = cum + 1 + off;
        if (received[p % received.size()] == p + 1) {
          words[off / 64] |= uint64_t{1} << (off % 64);
        }
      }
      AckInfo a;
      a.cum = Psn(cum);
      a.sack = absl::MakeConstSpan(words, 4);
      a.echo_path = t.path;
      a.echo_path_seq = t.seq;
      m.OnAck(a, now, &out);
    }
    Psn psn;
    uint64_t tag;
    uint32_t bytes;
    PathId last;
    while (m.PopRetransmit(&psn, &tag, &bytes, &last)) Transmit(psn, false);
    if (tail - head < 128) Transmit(m.next_psn(), true);
    if (m.NextTimerTime() <= now) m.OnTimer(now, &out);
  }

  struct Tx {
    Psn psn;
    PathId path;
    PathSeq seq;
    bool arrives = false;
  };
  SentPacketManager m{RetransmitOptions{}};
  SenderOutcome out;
  std::vector<uint32_t> seq;
  std::vector<Tx> fifo;
  std::vector<uint32_t> received = std::vector<uint32_t>(8192, 0);
  uint64_t words[4] = {0, 0, 0, 0};
  uint32_t cum = 0;
  size_t head = 0, tail = 0;
  uint64_t rr = 0;
  TimeNs now = TimeNs::Zero();
};

TEST(SentPacketManagerAllocTest, SteadyStateWithLossAllocatesNothing) {
  Loop loop(32);
  for (int i = 0; i < 20000; ++i) loop.Step();  // warm-up: rings grow
  // The counter counts (explicit calls cannot be elided).
  g_allocs = 0;
  g_counting = true;
  ::operator delete(::operator new(16));
  g_counting = false;
  ASSERT_EQ(g_allocs.load(), 1u);
  g_allocs = 0;
  g_counting = true;
  for (int i = 0; i < 200000; ++i) loop.Step();
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0u);
  EXPECT_GT(loop.m.counters().packets_lost, 1000u);
  EXPECT_EQ(loop.m.counters().rtos, 0u);
}

}  // namespace
}  // namespace braid::retransmit

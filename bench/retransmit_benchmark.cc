// Per-packet cost of the sender's reliability bookkeeping in steady state:
// OnFirstSent plus one OnAck (ack every packet, echoing it), with a window of
// packets in flight sprayed over N paths, with and without loss.
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "retransmit/sent_packet_manager.h"

namespace braid::retransmit {
namespace {

using wire::PathId;
using wire::PathSeq;
using wire::Psn;

// Receiver state as it would be acked: cum plus a 256-bit SACK bitmap,
// updated incrementally (O(1) amortized per arrival).
struct RecvBitmap {
  uint32_t cum = 0;
  uint64_t w[4] = {0, 0, 0, 0};

  void ShiftRightOne() {
    w[0] = (w[0] >> 1) | (w[1] << 63);
    w[1] = (w[1] >> 1) | (w[2] << 63);
    w[2] = (w[2] >> 1) | (w[3] << 63);
    w[3] >>= 1;
  }
  void Arrive(uint32_t psn) {
    if (static_cast<int32_t>(psn - cum) < 0) return;  // duplicate
    if (psn == cum) {
      bool next;
      do {
        ++cum;
        next = (w[0] & 1) != 0;
        ShiftRightOne();
      } while (next);
      return;
    }
    const uint32_t off = psn - cum - 1;
    if (off < 256) w[off / 64] |= uint64_t{1} << (off % 64);
  }
};

struct Tx {
  Psn psn;
  PathId path;
  PathSeq seq;
  bool dropped;
};

// range(0): paths; range(1): packets in flight; range(2): drop 1 in N first
// transmissions (0: no loss). Transmissions arrive in send order (FIFO per
// path); each arrival is acked at once.
void BM_SendAndAck(benchmark::State& state) {
  const int paths = static_cast<int>(state.range(0));
  const uint32_t window = static_cast<uint32_t>(state.range(1));
  const uint32_t loss_every = static_cast<uint32_t>(state.range(2));
  SentPacketManager m{RetransmitOptions{}};
  SenderOutcome out;
  std::vector<uint32_t> seq(paths, 0);
  std::vector<Tx> fifo(window * 8);  // transmissions on the wire
  const size_t fmask = fifo.size() - 1;
  size_t head = 0, tail = 0;
  RecvBitmap rx;
  TimeNs now = TimeNs::Zero();
  uint64_t rr = 0;

  auto transmit = [&](Psn psn, bool first) {
    const PathId p = static_cast<PathId>(rr++ % paths);
    const PathSeq s(seq[p]++);
    if (first) {
      m.OnFirstSent(psn.value(), 4096, p, s, now);
    } else {
      m.OnRetransmitted(psn, p, s, now);
    }
    const bool drop =
        first && loss_every != 0 && psn.value() % loss_every == loss_every / 2;
    fifo[tail++ & fmask] = Tx{psn, p, s, drop};
  };
  for (uint32_t i = 0; i < window; ++i) transmit(m.next_psn(), true);

  uint64_t packets = 0;
  for (auto _ : state) {
    now += DurationNs::Nanos(100);
    const Tx t = fifo[head++ & fmask];
    if (!t.dropped) {
      rx.Arrive(t.psn.value());
      AckInfo a;
      a.cum = Psn(rx.cum);
      a.sack = absl::MakeConstSpan(rx.w, 4);
      a.echo_path = t.path;
      a.echo_path_seq = t.seq;
      m.OnAck(a, now, &out);
    }
    Psn psn;
    uint64_t tag;
    uint32_t bytes;
    PathId last;
    while (m.PopRetransmit(&psn, &tag, &bytes, &last)) transmit(psn, false);
    if (tail - head < window) transmit(m.next_psn(), true);
    if (m.NextTimerTime() <= now) m.OnTimer(now, &out);
    ++packets;
  }
  state.SetItemsProcessed(static_cast<int64_t>(packets));
  state.counters["lost_per_pkt"] =
      benchmark::Counter(static_cast<double>(m.counters().packets_lost) /
                         static_cast<double>(m.counters().packets_sent));
  state.counters["rtos"] = static_cast<double>(m.counters().rtos);
}
BENCHMARK(BM_SendAndAck)
    ->Args({1, 64, 0})
    ->Args({16, 256, 0})
    ->Args({64, 256, 0})
    ->Args({256, 1024, 0})
    ->Args({16, 128, 100});  // PSN span stays within the 256-bit bitmap

}  // namespace
}  // namespace braid::retransmit

BENCHMARK_MAIN();

// PathSet per-packet cost: Pick + OnSent + OnAcked (+ RTT sample), the work
// the endpoint does for every data packet.
#include <benchmark/benchmark.h>

#include <deque>

#include "multipath/path_set.h"

namespace braid::multipath {
namespace {

void BM_PickSendAck(benchmark::State& state) {
  PathSetOptions o;
  o.num_paths = static_cast<uint16_t>(state.range(0));
  PathSet ps(o, 1);
  TimeNs now(1000);
  // Keep ~64 packets in flight, acked in FIFO order.
  std::deque<wire::PathId> inflight;
  for (auto _ : state) {
    const wire::PathId p = ps.Pick(now);
    benchmark::DoNotOptimize(ps.OnSent(p, 4096, now));
    inflight.push_back(p);
    if (inflight.size() > 64) {
      const wire::PathId q = inflight.front();
      inflight.pop_front();
      ps.OnAcked(q, 4096, now);
      ps.OnRttSample(q, DurationNs::Micros(10));
    }
    now += DurationNs::Nanos(10);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PickSendAck)->Arg(1)->Arg(16)->Arg(64)->Arg(256);

void BM_PickWithMostPathsPenalised(benchmark::State& state) {
  PathSetOptions o;
  o.num_paths = 64;
  o.recycle_after = 0;
  o.penalty_time = DurationNs::Seconds(100);
  PathSet ps(o, 1);
  TimeNs now(1000);
  for (wire::PathId p = 0; p < 60; ++p) {  // 4 of 64 left healthy
    for (int i = 0; i < 3; ++i) ps.OnSent(p, 100, now);
    for (int i = 0; i < 3; ++i) ps.OnLoss(p, now);
  }
  for (auto _ : state) {
    const wire::PathId p = ps.Pick(now);
    ps.OnSent(p, 4096, now);
    ps.OnAcked(p, 4096, now);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PickWithMostPathsPenalised);

}  // namespace
}  // namespace braid::multipath

BENCHMARK_MAIN();

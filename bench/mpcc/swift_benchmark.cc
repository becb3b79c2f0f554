// Swift's cost per ACK batch (one virtual call per batch).
#include <benchmark/benchmark.h>

#include "cc/congestion_control.h"

namespace braid::cc {
namespace {

void BM_SwiftOnAck(benchmark::State& state) {
  auto cc = MakeCongestionControl(CcOptions{});
  AckEvent e;
  e.now = TimeNs(1000);
  e.bytes_acked = 8 * 4096;
  e.packets_acked = 8;
  e.min_rtt = DurationNs::Micros(10);
  e.srtt = DurationNs::Micros(20);
  int64_t i = 0;
  for (auto _ : state) {
    e.now += DurationNs::Nanos(300);
    // Alternate below / above target so both branches run.
    e.rtt = DurationNs::Micros((++i & 1) ? 20 : 60);
    cc->OnAck(e);
    benchmark::DoNotOptimize(cc->cwnd_bytes());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SwiftOnAck);

}  // namespace
}  // namespace braid::cc

BENCHMARK_MAIN();

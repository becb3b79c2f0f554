// Hot paths of the receiver: PSN window insert/advance, SACK building,
// fragment placement and ordered release.
#include <algorithm>
#include <array>
#include <numeric>
#include <vector>

#include "base/rng.h"
#include "benchmark/benchmark.h"
#include "reorder/ordered_release.h"
#include "reorder/reassembler.h"
#include "reorder/receive_window.h"

namespace braid::reorder {
namespace {

// PSNs 0..n-1, shuffled within blocks of `spread` (cross-path disorder).
std::vector<uint32_t> Arrivals(uint32_t n, uint32_t spread, uint64_t seed) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  Rng rng(seed);
  for (uint32_t b = 0; b + spread <= n; b += spread) {
    for (uint32_t i = spread - 1; i > 0; --i) {
      std::swap(v[b + i], v[b + rng.Uniform(i + 1)]);
    }
  }
  return v;
}

void BM_WindowOnPacket(benchmark::State& state) {
  const uint32_t spread = static_cast<uint32_t>(state.range(0));
  const auto psns = Arrivals(1 << 16, spread, 1);
  ReceiveWindow w(65536);
  uint32_t base = 0;
  for (auto _ : state) {
    w.Reset(wire::Psn(base));
    for (uint32_t p : psns)
      benchmark::DoNotOptimize(w.OnPacket(wire::Psn(base + p)));
    base += 1 << 16;
  }
  state.SetItemsProcessed(state.iterations() * psns.size());
}
BENCHMARK(BM_WindowOnPacket)->Arg(1)->Arg(16)->Arg(256);

void BM_WindowFillSack(benchmark::State& state) {
  ReceiveWindow w(65536);
  Rng rng(2);
  for (uint32_t p = 1; p < 4096; ++p) {
    if (!rng.Bernoulli(0.05)) w.OnPacket(wire::Psn(p));
  }
  std::array<uint64_t, 32> out{};
  for (auto _ : state) {
    benchmark::DoNotOptimize(w.FillSack(absl::MakeSpan(out)));
  }
}
BENCHMARK(BM_WindowFillSack);

void BM_ReassembleMessage(benchmark::State& state) {
  const uint32_t frags = static_cast<uint32_t>(state.range(0));
  constexpr uint32_t kMss = 1024;
  std::vector<uint8_t> data(size_t{frags} * kMss, 0x5a);
  const auto order = Arrivals(frags, std::min<uint32_t>(frags, 16), 3);
  Reassembler r;
  CompletedMessage out;
  uint32_t msg = 0;
  for (auto _ : state) {
    for (uint32_t i : order) {
      Fragment f;
      f.msg = wire::MsgSeq(msg);
      f.msg_len = static_cast<uint32_t>(data.size());
      f.offset = i * kMss;
      f.payload = absl::MakeConstSpan(data.data() + f.offset, kMss);
      benchmark::DoNotOptimize(r.OnFragment(f, &out));
    }
    ++msg;
  }
  state.SetItemsProcessed(state.iterations() * frags);
  state.SetBytesProcessed(state.iterations() * data.size());
}
BENCHMARK(BM_ReassembleMessage)->Arg(1)->Arg(16)->Arg(64);

void BM_OrderedRelease(benchmark::State& state) {
  const auto order = Arrivals(4096, 32, 4);
  OrderedRelease o;
  std::vector<CompletedMessage> released;
  released.reserve(4096);
  for (auto _ : state) {
    o.Reset();
    for (uint32_t s : order) {
      CompletedMessage m;
      m.stream_id = 1;
      m.stream_seq = s;
      released.clear();
      o.Push(std::move(m), &released);
    }
  }
  state.SetItemsProcessed(state.iterations() * order.size());
}
BENCHMARK(BM_OrderedRelease);

}  // namespace
}  // namespace braid::reorder

BENCHMARK_MAIN();

// The DPDK backend's send cost on net_null (a port that frees every frame at
// once): framing, checksum and TxBurst per datagram, with the payload tail
// copied into the frame or attached by reference (zero-copy). Counters show
// what a steady-state send costs besides time: heap allocations, payload
// bytes copied by the backend, system calls (the datapath makes none).
//
//   bench/dpdk_backend_benchmark --benchmark_repetitions=5
#include <rte_ethdev.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/dpdk/dpdk_backend.h"
#include "backend/dpdk/eal.h"
#include "benchmark/benchmark.h"
#include "tools/braid_perf/alloc_counter.h"

namespace braid::backend::dpdk {
namespace {

std::string Prefix() { return absl::StrCat("braid_bench_", getpid()); }

void RemoveRunDir() {
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path("/var/run/dpdk") / Prefix(),
                              ec);
}

DpdkBackend* NullBackend() {
  static DpdkBackend* be = [] {
    const std::string prefix = Prefix();
    std::atexit(RemoveRunDir);
    absl::Status s = EnsureEal(
        absl::StrCat("--no-huge -m 512 --no-pci --no-shconf --no-telemetry "
                     "--log-level=*:error --vdev=net_null0 --file-prefix=",
                     prefix));
    if (!s.ok()) return static_cast<DpdkBackend*>(nullptr);
    DpdkOptions o;
    o.port.name = "net_null0";
    o.bind = *NetAddr::Parse("10.9.0.1:7000");
    o.next_hop_mac = MacAddr{2, 0, 0, 0, 0, 2};
    absl::StatusOr<std::unique_ptr<DpdkBackend>> b = DpdkBackend::Open(o);
    return b.ok() ? b->release() : nullptr;
  }();
  return be;
}

// Bursts of 32 datagrams of 1472 bytes: a 40-byte braid header in `data`,
// the 1432-byte payload as the tail. by_reference: the tail carries a hold
// (as the core gives one to every message when the backend keeps tails);
// net_null chains no segments, so it copies either way (zero_copy_per_pkt
// says which happened). The memif test shows sends by reference.
void BM_TxBurst(benchmark::State& state) {
  DpdkBackend* be = NullBackend();
  if (be == nullptr) {
    state.SkipWithError("DPDK EAL / net_null0 not available");
    return;
  }
  const bool by_reference = state.range(0) != 0;
  std::vector<uint8_t> head(40, 1), payload(1432, 2);
  TxHold hold;
  std::vector<TxPacket> burst(32);
  for (size_t i = 0; i < burst.size(); ++i) {
    TxPacket& p = burst[i];
    p.dst = *NetAddr::Parse("10.9.0.2:7000");
    p.entropy = static_cast<wire::Entropy>(i % be->EntropyCount());
    p.ect = true;
    p.data = head.data();
    p.len = static_cast<uint32_t>(head.size());
    p.tail = payload.data();
    p.tail_len = static_cast<uint32_t>(payload.size());
    p.hold = by_reference ? &hold : nullptr;
  }
  const BackendCounters before = be->counters();
  const uint64_t allocs_before = perf::AllocationCount();
  uint64_t sent = 0;
  for (auto _ : state) {
    sent += be->TxBurst(burst);
  }
  const BackendCounters after = be->counters();
  state.SetItemsProcessed(static_cast<int64_t>(sent));
  state.SetBytesProcessed(static_cast<int64_t>(sent * 1472));
  const double n = sent > 0 ? static_cast<double>(sent) : 1.0;
  state.counters["allocs_per_pkt"] =
      static_cast<double>(perf::AllocationCount() - allocs_before) / n;
  state.counters["copied_bytes_per_pkt"] =
      static_cast<double>(after.frames.tx_copied_bytes -
                          before.frames.tx_copied_bytes) /
      n;
  state.counters["zero_copy_per_pkt"] =
      static_cast<double>(after.frames.tx_zero_copy_frames -
                          before.frames.tx_zero_copy_frames) /
      n;
  state.counters["holds_left"] = static_cast<double>(hold.refs.load());
}
BENCHMARK(BM_TxBurst)->Arg(0)->Arg(1)->ArgNames({"by_reference"});

}  // namespace
}  // namespace braid::backend::dpdk

BENCHMARK_MAIN();

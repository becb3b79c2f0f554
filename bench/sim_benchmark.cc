// Simulator throughput: packets delivered per second of wall time across a
// leaf-spine fabric (host -> leaf -> spine -> leaf -> host: four links, four
// events per packet), through the raw Host API, through the SimBackend, and
// with the protocol core on every host (a whole scenario).
// items_per_second = packets delivered.
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "backend/sim/sim_backend.h"
#include "benchmark/benchmark.h"
#include "sim/leaf_spine.h"
#include "sim/scenario/scenario.h"
#include "sim/simulator.h"

namespace braid::sim {
namespace {

LeafSpineOptions BenchFabric(bool lazy_checksum = false) {
  LeafSpineOptions o;  // 2 leaves x 4 hosts, 4 spines, 100G, 1 us links
  o.host.lazy_checksum = lazy_checksum;
  o.host_link.queue_bytes = 64u << 20;
  o.fabric_link.queue_bytes = 64u << 20;
  return o;
}

// Each iteration: every host on leaf 0 sends `burst` packets to its peer on
// leaf 1, spraying 16 source ports; run to idle; drain the receivers.
void BM_LeafSpineCrossLeaf(benchmark::State& state) {
  const uint32_t payload = static_cast<uint32_t>(state.range(0));
  const bool lazy = state.range(1) != 0;
  const int burst = 64;
  Simulator sim;
  auto net = *LeafSpine::Create(&sim, BenchFabric(lazy));
  uint64_t delivered = 0;
  uint16_t entropy = 0;
  for (auto _ : state) {
    for (int i = 0; i < burst; ++i) {
      for (int h = 0; h < 4; ++h) {
        Host& src = net->host(h);
        Packet* p = sim.pool().Alloc();
        p->src = src.address();
        p->src.port = static_cast<uint16_t>(49152 + (entropy++ & 15));
        p->dst = net->host(h + 4).address();
        p->len = payload;
        p->data[0] = static_cast<uint8_t>(i);  // payload left as is
        src.Send(p);
      }
    }
    sim.RunUntilIdle();
    for (int h = 4; h < 8; ++h) {
      while (Packet* p = net->host(h).PopRx()) {
        ++delivered;
        sim.pool().Free(p);
      }
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(delivered));
  state.counters["events_per_packet"] =
      static_cast<double>(sim.counters().events_run) /
      static_cast<double>(delivered ? delivered : 1);
  if (net->TotalLinkDrops() != 0) state.SkipWithError("unexpected drops");
}
// Args: payload bytes, lazy_checksum (0 = stamp at send + verify at receive).
BENCHMARK(BM_LeafSpineCrossLeaf)
    ->ArgsProduct({{64, 1024, 4096}, {0, 1}})
    ->ArgNames({"payload", "lazy_cksum"});

// The same traffic through the backend burst interface (copy in, copy out).
void BM_SimBackendCrossLeaf(benchmark::State& state) {
  const uint32_t payload = static_cast<uint32_t>(state.range(0));
  const bool lazy = state.range(1) != 0;
  const int burst = 64;
  Simulator sim;
  auto net = *LeafSpine::Create(&sim, BenchFabric(lazy));
  std::vector<std::unique_ptr<backend::SimBackend>> be;
  for (int h = 0; h < 8; ++h) {
    be.push_back(std::make_unique<backend::SimBackend>(&net->host(h)));
  }
  std::vector<uint8_t> data(payload, 0xab);
  std::vector<backend::TxPacket> tx(burst);
  std::array<backend::RxPacket, 64> rx;
  uint64_t delivered = 0;
  for (auto _ : state) {
    for (int h = 0; h < 4; ++h) {
      for (int i = 0; i < burst; ++i) {
        tx[i].dst = be[h + 4]->LocalAddress();
        tx[i].entropy = static_cast<uint16_t>(i & 15);
        tx[i].data = data.data();
        tx[i].len = payload;
      }
      be[h]->TxBurst(tx);
    }
    sim.RunUntilIdle();
    for (int h = 4; h < 8; ++h) {
      size_t n;
      while ((n = be[h]->RxBurst(absl::MakeSpan(rx))) > 0) delivered += n;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(delivered));
}
BENCHMARK(BM_SimBackendCrossLeaf)
    ->ArgsProduct({{64, 1024, 4096}, {0, 1}})
    ->ArgNames({"payload", "lazy_cksum"});

// The bare event loop: schedule and run raw events with a working set of
// `range(0)` pending events.
void BM_EventLoop(benchmark::State& state) {
  Simulator sim;
  const int64_t pending = state.range(0);
  uint64_t sink = 0;
  auto fn = [](void* obj, uint64_t arg) {
    *static_cast<uint64_t*>(obj) += arg;
  };
  Rng rng(1);
  for (int64_t i = 0; i < pending; ++i) {
    sim.ScheduleRaw(TimeNs(i), fn, &sink, 1);
  }
  uint64_t events = 0;
  for (auto _ : state) {
    // Keep the heap at its working size: each run event adds one.
    for (int i = 0; i < 1000; ++i) {
      sim.Step();
      sim.ScheduleRaw(sim.now() + DurationNs(1 + static_cast<int64_t>(
                                                     rng.Uniform(2 * pending))),
                      fn, &sink, 1);
    }
    events += 1000;
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<int64_t>(events));
}
BENCHMARK(BM_EventLoop)->Arg(64)->Arg(4096)->Arg(262144);

// A whole scenario (sim/scenario): the real protocol core on every host,
// each driven by the DriveLoop as Endpoint drives it. items_per_second =
// simulated packets (ScenarioResult::sim_packets) per CPU second, setup and
// checks included (target: >= 1 M per core). Arg payload: 0 = every byte
// carried and checked, 1 = checksum mode (lengths and message headers).
void RunScenarios(benchmark::State& state, ScenarioConfig cfg) {
  cfg.payload =
      state.range(0) != 0 ? PayloadMode::kChecksum : PayloadMode::kBytes;
  uint64_t packets = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    const ScenarioResult r = RunScenario(cfg);
    if (!r.Clean() || r.timed_out) state.SkipWithError("scenario not clean");
    packets += r.sim_packets;
    events += r.sim_events;
  }
  state.SetItemsProcessed(static_cast<int64_t>(packets));
  state.counters["events_per_packet"] =
      static_cast<double>(events) / static_cast<double>(packets ? packets : 1);
}

// 8 hosts in pairs across the leaves, 200 messages of 64 KiB per sender.
void BM_ScenarioPairs(benchmark::State& state) {
  ScenarioConfig cfg;
  cfg.messages_per_sender = 200;
  RunScenarios(state, cfg);
}
BENCHMARK(BM_ScenarioPairs)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("checksum")
    ->Unit(benchmark::kMillisecond);

// As braid-sim --hosts 64 --spines 8 --traffic permutation --messages 200
// (its flag defaults: 16 MiB host queues, 50 ms peer timeout, 200 us RTO).
void BM_ScenarioPermutation64(benchmark::State& state) {
  ScenarioConfig cfg;
  cfg.topology.num_leaves = 2;
  cfg.topology.hosts_per_leaf = 32;
  cfg.topology.num_spines = 8;
  cfg.topology.host_link.queue_bytes = 16u << 20;
  cfg.protocol.peer_timeout = DurationNs::Millis(50);
  cfg.protocol.min_rto = DurationNs::Micros(200);
  cfg.traffic = Traffic::kPermutation;
  cfg.messages_per_sender = 200;
  RunScenarios(state, cfg);
}
BENCHMARK(BM_ScenarioPermutation64)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("checksum")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace braid::sim

BENCHMARK_MAIN();

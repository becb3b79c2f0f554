// What peers cost at scale, with no I/O: one hub EndpointCore that has
// exchanged a message each way with N other cores, each at its own address
// (one short-lived core per address, so N can reach 10^5-10^6 without N
// cores alive at once). Reports:
//   * bytes per idle peer: heap the hub holds per peer once every exchange
//     is acknowledged and peer_timeout has passed (malloc's own count),
//   * CPU time of a first Send to a never-seen address (the peer's
//     creation and its first datagram),
//   * 64 KiB goodput to one active peer while N idle peers exist, against
//     the same with none (run both and compare their rates).
//
//   build/bench/peer_scale_benchmark    (about 4 minutes; the 10^6-peer
//   case needs ~1 GiB and most of that time)
#include <malloc.h>

#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "endpoint/endpoint_core.h"

namespace braid::endpoint {
namespace {

constexpr uint16_t kPort = 7000;

NetAddr SpokeAddr(uint32_t i) { return NetAddr::Ipv4(0x0b000000 + i, kPort); }

CoreConfig Config(uint64_t inc, uint32_t max_peers) {
  CoreConfig c;
  c.local_port = kPort;
  c.incarnation = inc;
  c.seed = inc;
  c.proto.max_peers = max_peers;
  return c;
}

size_t HeapBytes() { return mallinfo2().uordblks; }

// Two cores joined by hand: datagrams move between them until neither has
// anything to send, timers firing as time passes.
class Exchange {
 public:
  Exchange(EndpointCore* a, NetAddr a_addr, EndpointCore* b, NetAddr b_addr,
           TimeNs* now, TxBatch* batch)
      : a_(a),
        a_addr_(a_addr),
        b_(b),
        b_addr_(b_addr),
        now_(now),
        batch_(batch) {}

  // Returns false if it did not settle within `max_rounds`.
  bool Run(int max_rounds) {
    for (int r = 0; r < max_rounds; ++r) {
      const bool moved = Move(a_, a_addr_, b_) | Move(b_, b_addr_, a_);
      *now_ += DurationNs::Micros(2);
      a_->OnTimer(*now_);
      b_->OnTimer(*now_);
      if (!moved && !a_->WantsToSend(*now_) && !b_->WantsToSend(*now_)) {
        return true;
      }
    }
    return false;
  }

 private:
  bool Move(EndpointCore* src, NetAddr src_addr, EndpointCore* dst) {
    bool moved = false;
    for (;;) {
      batch_->clear();
      if (src->PollTx(*now_, batch_) == 0) return moved;
      for (const auto& p : batch_->packets()) {
        bytes_.assign(p.data, p.data + p.len);
        dst->OnDatagram(*now_, src_addr, bytes_, false);
      }
      moved = true;
    }
  }

  EndpointCore* a_;
  NetAddr a_addr_;
  EndpointCore* b_;
  NetAddr b_addr_;
  TimeNs* now_;
  TxBatch* batch_;
  std::vector<uint8_t> bytes_;
};

size_t Drain(EndpointCore* c) {
  std::vector<Completion> v;
  c->PollCompletions(&v, SIZE_MAX);
  return v.size();
}

// A hub that has exchanged one 64-byte message each way with `n` spokes,
// all acknowledged, then waited out peer_timeout.
struct Hub {
  explicit Hub(uint32_t n) : addr(NetAddr::Ipv4(0x0a000001, kPort)) {
    core = std::make_unique<EndpointCore>(Config(1, std::max(n + 1, 1024u)));
    heap_empty = HeapBytes();
    const std::vector<uint8_t> msg(64, 0x5a);
    for (uint32_t i = 0; i < n; ++i) {
      EndpointCore spoke(Config(1000 + i, 4));
      const NetAddr s = SpokeAddr(i);
      ok &= core->Send(now, s, OutMessage::Copy(msg.data(), 64)).ok();
      ok &= spoke.Send(now, addr, OutMessage::Copy(msg.data(), 64)).ok();
      ok &= Exchange(core.get(), addr, &spoke, s, &now, &batch).Run(1000);
      Drain(core.get());
    }
    heap_awake = HeapBytes();
    now += ProtocolOptions{}.peer_timeout + DurationNs::Millis(1);
    while (core->NextWake() <= now) core->OnTimer(now);  // as a driver does
    Drain(core.get());
    heap_idle = HeapBytes();
    const EndpointStats st = core->stats();
    ok &= st.peers == n && st.peers_asleep == n;
  }

  NetAddr addr;
  std::unique_ptr<EndpointCore> core;
  TimeNs now = TimeNs(1000000);
  TxBatch batch{64, 1472};
  size_t heap_empty = 0, heap_awake = 0, heap_idle = 0;
  bool ok = true;
};

void BM_BytesPerIdlePeer(benchmark::State& state) {
  const uint32_t n = static_cast<uint32_t>(state.range(0));
  double per_peer = 0, per_awake = 0;
  for (auto _ : state) {
    Hub hub(n);
    if (!hub.ok) {
      state.SkipWithError("exchange failed");
      return;
    }
    per_peer = (static_cast<double>(hub.heap_idle) -
                static_cast<double>(hub.heap_empty)) /
               n;
    per_awake = (static_cast<double>(hub.heap_awake) -
                 static_cast<double>(hub.heap_empty)) /
                n;
  }
  state.counters["bytes_per_idle_peer"] = per_peer;
  // The same peers before they sleep: all acked, idle for less than
  // peer_timeout.
  state.counters["bytes_per_awake_peer"] = per_awake;
}
BENCHMARK(BM_BytesPerIdlePeer)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// CPU time of Send to a never-seen address plus building its datagram
// (the peer's creation with everything an active peer holds). Batches of
// 1,000 new peers per core, so memory stays bounded (none is acked).
void BM_FirstSend(benchmark::State& state) {
  constexpr uint32_t kBatch = 1000;
  CoreConfig cfg = Config(1, kBatch);
  TimeNs now(1000000);
  TxBatch batch(64, 1472);
  const std::vector<uint8_t> msg(64, 0x5a);
  auto core = std::make_unique<EndpointCore>(cfg);
  uint32_t i = 0;
  for (auto _ : state) {
    if (i == kBatch) {
      state.PauseTiming();
      core = std::make_unique<EndpointCore>(cfg);
      i = 0;
      state.ResumeTiming();
    }
    if (!core->Send(now, SpokeAddr(i++), OutMessage::Copy(msg.data(), 64))
             .ok()) {
      state.SkipWithError("send failed");
      break;
    }
    batch.clear();
    core->PollTx(now, &batch);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FirstSend)->Iterations(20000);

// 64 KiB messages to one peer, 32 outstanding, beside `range(0)` idle peers.
void BM_Goodput64KiBBesideIdlePeers(benchmark::State& state) {
  Hub hub(static_cast<uint32_t>(state.range(0)));
  EndpointCore active(Config(7, 4));
  const NetAddr active_addr = NetAddr::Ipv4(0x0c000001, kPort);
  const std::vector<uint8_t> msg(65536, 0x17);
  Exchange x(hub.core.get(), hub.addr, &active, active_addr, &hub.now,
             &hub.batch);
  uint64_t received = 0;
  for (auto _ : state) {
    for (int k = 0; k < 32; ++k) {
      if (!hub.core
               ->Send(hub.now, active_addr,
                      OutMessage::Borrow(msg.data(), msg.size()))
               .ok()) {
        state.SkipWithError("send failed");
        return;
      }
    }
    if (!x.Run(100000)) {
      state.SkipWithError("did not settle");
      return;
    }
    received += Drain(&active);
    Drain(hub.core.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(received) * 65536);
  state.counters["idle_peers"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_Goodput64KiBBesideIdlePeers)
    ->Arg(0)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace braid::endpoint

BENCHMARK_MAIN();

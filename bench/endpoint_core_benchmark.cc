// The protocol core's own cost, with no I/O: two EndpointCores joined by an
// in-memory wire, driven the way Endpoint drives them. What is left when the
// kernel is taken out of braid-perf's figures — the user-space work per
// ping-pong and per bulk message that the loopback latency and goodput ratios
// pay on top of raw UDP. Compare runs of one machine only; count
// instructions with callgrind for a noise-free figure:
//
//   valgrind --tool=callgrind build/bench/endpoint_core_benchmark
//       --benchmark_filter=PingPong --benchmark_min_time=0.05   (one line)
#include <vector>

#include "benchmark/benchmark.h"
#include "endpoint/endpoint_core.h"
#include "tests/endpoint/core_pair.h"

namespace braid::endpoint {
namespace {

// Protocol options as Endpoint::Open sets them for this datagram size: a
// spray run of one GSO super-datagram per path (endpoint.cc).
ProtocolOptions EndpointDefaults(uint32_t max_datagram) {
  ProtocolOptions p;
  p.spray_run = DefaultSprayRun(max_datagram);
  return p;
}

// The pair of cores (tests/endpoint/core_pair.h builds them) and a driver
// that moves datagrams without allocating.
struct Pair {
  explicit Pair(uint32_t max_datagram = 1472)
      : cores(EndpointDefaults(max_datagram), max_datagram),
        a(cores.a.get()),
        b(cores.b.get()),
        a_addr(cores.a_addr),
        b_addr(cores.b_addr) {}
  // Everything `src` has to send now goes to `dst`; timers due run first.
  // `hold_acks` as Endpoint::Poll sets it when it hands out completions.
  size_t Move(EndpointCore& src, const NetAddr& src_addr, EndpointCore& dst,
              bool hold_acks = false) {
    if (src.NextWake() <= now) src.OnTimer(now);
    size_t n = 0;
    do {  // as Endpoint::Transmit: again only after a full batch
      batch.clear();
      src.PollTx(now, &batch, hold_acks, /*uncopied_payloads=*/true);
      for (const backend::TxPacket& p : batch.packets()) {
        wire.resize(p.size());
        p.CopyTo(wire.data());  // what the kernel does
        dst.OnDatagram(now, src_addr, wire, false);
        ++n;
      }
    } while (batch.full());
    return n;
  }

  testing::CorePair cores;
  EndpointCore* a;
  EndpointCore* b;
  const NetAddr a_addr, b_addr;
  TimeNs now = TimeNs(1000000);
  TxBatch batch{256, 9000};
  std::vector<uint8_t> wire;
  std::vector<Completion> done;
};

// Received payload buffers go back to the core's pool, as Endpoint::Recycle
// does, so the loop allocates nothing in steady state.
void Recycle(EndpointCore& c, std::vector<Completion>* done) {
  for (Completion& x : *done) {
    if (x.type == CompletionType::kRecv) c.RecycleReceived(std::move(x.data));
  }
  done->clear();
}

// One 64-byte ping-pong round trip, both sides as braid-perf --test lat
// drives them: the receiver's ack waits for (and rides on) its reply.
void BM_PingPong64(benchmark::State& state) {
  Pair p;
  const std::vector<uint8_t> msg(64, 0x42);
  for (auto _ : state) {
    if (!p.a->Send(p.now, p.b_addr, OutMessage::Copy(msg.data(), 64)).ok()) {
      state.SkipWithError("send failed");
      break;
    }
    p.Move(*p.a, p.a_addr, *p.b);
    p.now += DurationNs::Micros(4);
    p.done.clear();
    p.b->PollCompletions(&p.done, SIZE_MAX);
    p.Move(*p.b, p.b_addr, *p.a, /*hold_acks=*/true);
    if (!p.b->Send(p.now, p.a_addr, OutMessage::Copy(msg.data(), 64)).ok()) {
      state.SkipWithError("reply failed");
      break;
    }
    p.Move(*p.b, p.b_addr, *p.a);
    p.now += DurationNs::Micros(4);
    Recycle(*p.b, &p.done);
    p.done.clear();
    p.a->PollCompletions(&p.done, SIZE_MAX);
    p.Move(*p.a, p.a_addr, *p.b, /*hold_acks=*/true);
    Recycle(*p.a, &p.done);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PingPong64);

// 64 KiB messages one way, 32 outstanding, at the MTU in the argument:
// the sender's and the receiver's user-space work per message (copies into
// datagrams and out of them included).
void BM_Bulk64KiB(benchmark::State& state) {
  const uint32_t mtu = static_cast<uint32_t>(state.range(0));
  Pair p(mtu - 28);
  const std::vector<uint8_t> msg(65536, 0x17);
  size_t outstanding = 0;
  uint64_t received = 0;
  for (auto _ : state) {
    while (outstanding < 32 &&
           p.a->Send(p.now, p.b_addr, OutMessage::Borrow(msg.data(), 65536))
               .ok()) {
      ++outstanding;
    }
    p.Move(*p.a, p.a_addr, *p.b);
    p.now += DurationNs::Micros(2);
    p.done.clear();
    p.b->PollCompletions(&p.done, SIZE_MAX);
    received += p.done.size();
    Recycle(*p.b, &p.done);
    p.Move(*p.b, p.b_addr, *p.a);
    p.done.clear();
    p.a->PollCompletions(&p.done, SIZE_MAX);
    outstanding -= p.done.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(received) * 65536);
  state.counters["messages"] = static_cast<double>(received);
}
BENCHMARK(BM_Bulk64KiB)->Arg(1500)->Arg(9000);

}  // namespace
}  // namespace braid::endpoint

BENCHMARK_MAIN();

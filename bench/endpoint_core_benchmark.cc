// The protocol core's own cost, with no I/O: two EndpointCores joined by an
// in-memory pipe, each driven by the DriveLoop that drives Endpoint (the
// same receive, timers, transmit, ack-hold and send batching), on a manual
// clock. What is left when the kernel is taken out of braid-perf's figures
// — the user-space work per ping-pong and per bulk message that the
// latency and goodput ratios pay on top of raw UDP. Compare runs of one
// machine only; count instructions with callgrind for a noise-free figure:
//
//   valgrind --tool=callgrind build/bench/endpoint_core_benchmark
//       --benchmark_filter=PingPong --benchmark_min_time=0.05   (one line)
#include <memory>
#include <vector>

#include "base/clock.h"
#include "benchmark/benchmark.h"
#include "endpoint/drive_loop.h"
#include "endpoint/endpoint_core.h"
#include "tests/endpoint/pipe_backend.h"

namespace braid::endpoint {
namespace {

// One side: a core and its loop over one end of the pipe, configured as
// Endpoint::Open configures them for this datagram size (a spray run of one
// GSO super-datagram per path).
struct Side {
  Side(NetAddr a, uint64_t incarnation, uint32_t max_datagram, Clock* clock)
      : addr(a), backend(a, max_datagram) {
    CoreConfig c;
    c.proto.spray_run = DefaultSprayRun(max_datagram);
    c.incarnation = incarnation;
    c.seed = incarnation;
    c.max_datagram = max_datagram;
    c.entropy_count = backend.EntropyCount();
    c.local_port = a.port;
    core = std::make_unique<EndpointCore>(c);
    loop = std::make_unique<DriveLoop>(&backend, core.get(), clock,
                                       DriveLoopOptions{});
  }
  // Poll as an application does; received buffers go back to the core's
  // pool (Endpoint::Recycle), so the loop allocates nothing in steady
  // state. Returns the completions of `type`.
  size_t Poll(CompletionType type) {
    done.clear();
    loop->Poll(&done, SIZE_MAX);
    size_t n = 0;
    for (Completion& x : done) {
      n += x.type == type;
      if (x.type == CompletionType::kRecv) {
        core->RecycleReceived(std::move(x.data));
      }
    }
    return n;
  }

  NetAddr addr;
  testing::PipeBackend backend;
  std::unique_ptr<EndpointCore> core;
  std::unique_ptr<DriveLoop> loop;
  std::vector<Completion> done;
};

struct Pair {
  explicit Pair(uint32_t max_datagram = 1472)
      : a(NetAddr::Ipv4(0x0a000001, 7000), 0x1111, max_datagram, &clock),
        b(NetAddr::Ipv4(0x0a000002, 7000), 0x2222, max_datagram, &clock) {
    testing::PipeBackend::Connect(&a.backend, &b.backend);
  }
  ManualClock clock{TimeNs(1000000)};
  Side a, b;
};

// One 64-byte ping-pong round trip, both sides as braid-perf --test lat
// drives them: the receiver's ack waits for (and rides on) its reply.
void BM_PingPong64(benchmark::State& state) {
  Pair p;
  const std::vector<uint8_t> msg(64, 0x42);
  for (auto _ : state) {
    if (!p.a.loop->Send(p.b.addr, OutMessage::Copy(msg.data(), 64)).ok()) {
      state.SkipWithError("send failed");
      break;
    }
    p.clock.Advance(DurationNs::Micros(4));
    p.b.Poll(CompletionType::kRecv);
    if (!p.b.loop->Send(p.a.addr, OutMessage::Copy(msg.data(), 64)).ok()) {
      state.SkipWithError("reply failed");
      break;
    }
    p.clock.Advance(DurationNs::Micros(4));
    p.a.Poll(CompletionType::kRecv);
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
    while (
        outstanding < 32 &&
        p.a.loop->Send(p.b.addr, OutMessage::Borrow(msg.data(), 65536)).ok()) {
      ++outstanding;
    }
    p.a.loop->Flush();
    p.clock.Advance(DurationNs::Micros(2));
    received += p.b.Poll(CompletionType::kRecv);
    p.b.loop->Flush();  // the acks a busy receiver's next Poll would send
    outstanding -= p.a.Poll(CompletionType::kSendDone);
  }
  state.SetBytesProcessed(static_cast<int64_t>(received) * 65536);
  state.counters["messages"] = static_cast<double>(received);
}
BENCHMARK(BM_Bulk64KiB)->Arg(1500)->Arg(9000);

// 64-byte messages one way, 64 outstanding, as braid-perf --test rate
// drives them: the per-message cost behind the messages/s figures.
void BM_Rate64(benchmark::State& state) {
  Pair p;
  const std::vector<uint8_t> msg(64, 0x5a);
  size_t outstanding = 0;
  uint64_t received = 0;
  for (auto _ : state) {
    while (outstanding < 64 &&
           p.a.loop->Send(p.b.addr, OutMessage::Copy(msg.data(), 64)).ok()) {
      ++outstanding;
    }
    p.a.loop->Flush();
    p.clock.Advance(DurationNs::Micros(2));
    received += p.b.Poll(CompletionType::kRecv);
    p.b.loop->Flush();
    outstanding -= p.a.Poll(CompletionType::kSendDone);
  }
  state.SetItemsProcessed(static_cast<int64_t>(received));
}
BENCHMARK(BM_Rate64);

}  // namespace
}  // namespace braid::endpoint

BENCHMARK_MAIN();

#include "tools/braid_perf/perf_endpoint.h"

#include <sched.h>
#include <time.h>

#include "tools/braid_perf/alloc_counter.h"

namespace braid::perf {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

Deadline::Deadline(double seconds)
    : end_ns_(seconds > 0 ? NowNs() + static_cast<int64_t>(seconds * 1e9)
                          : INT64_MAX) {}

absl::StatusOr<std::unique_ptr<PerfEndpoint>> PerfEndpoint::Open(
    const PerfFlags& f) {
  // The TEST impairments (--loss ...) need the test-only entry point.
  absl::StatusOr<std::unique_ptr<Endpoint>> ep =
      f.impair.any() ? OpenEndpointForTesting(f.endpoint, f.impair)
                     : Endpoint::Open(f.endpoint);
  if (!ep.ok()) return ep.status();
  return std::unique_ptr<PerfEndpoint>(
      new PerfEndpoint(std::move(*ep), f.block));
}

size_t PerfEndpoint::Step(std::vector<Completion>* out) {
  size_t n = ep_->Poll(out);
  if (n == 0 && block_) {
    ep_->Wait(DurationNs::Millis(5));
    n = ep_->Poll(out);
  } else if (n == 0 && ++empty_polls_ >= kEmptyPollsBeforeYield) {
    // Busy-polling with nothing to do: let another runnable thread on this
    // CPU (e.g. the other side of a loopback test) have it. On an idle CPU
    // this returns at once (~0.2 us every kEmptyPollsBeforeYield polls).
    empty_polls_ = 0;
    sched_yield();
  }
  if (n > 0) empty_polls_ = 0;
  return n;
}

SideCounters PerfEndpoint::Snapshot() const {
  const EndpointStats s = ep_->stats();
  SideCounters c;
  c.datagrams_sent = s.datagrams_sent;
  c.datagrams_received = s.datagrams_received;
  c.tx_syscalls = s.tx_syscalls;
  c.rx_syscalls = s.rx_syscalls;
  c.retransmits = s.reliability.retransmits;
  c.allocations = AllocationCount();
  return c;
}

SideCounters Delta(const SideCounters& a, const SideCounters& b) {
  SideCounters d;
  d.datagrams_sent = a.datagrams_sent - b.datagrams_sent;
  d.datagrams_received = a.datagrams_received - b.datagrams_received;
  d.tx_syscalls = a.tx_syscalls - b.tx_syscalls;
  d.rx_syscalls = a.rx_syscalls - b.rx_syscalls;
  d.retransmits = a.retransmits - b.retransmits;
  d.allocations = a.allocations - b.allocations;
  return d;
}

}  // namespace braid::perf

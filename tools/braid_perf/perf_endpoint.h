// The endpoint as braid-perf drives it: opened from the flags, advanced by
// busy-polling or by blocking on its fd, with counter snapshots for per-run
// deltas, and the hard time limit every loop checks.
#ifndef BRAID_TOOLS_BRAID_PERF_PERF_ENDPOINT_H_
#define BRAID_TOOLS_BRAID_PERF_PERF_ENDPOINT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "braid/endpoint.h"
#include "tools/braid_perf/flags.h"
#include "tools/braid_perf/report.h"

namespace braid::perf {

// Monotonic wall-clock nanoseconds (tool code; the protocol core never
// reads a clock).
int64_t NowNs();

// A point in time after which a loop must give up.
class Deadline {
 public:
  // Expires `seconds` from now (infinite if seconds <= 0).
  explicit Deadline(double seconds);
  bool Passed() const { return NowNs() >= end_ns_; }
  int64_t end_ns() const { return end_ns_; }

 private:
  int64_t end_ns_;
};

class PerfEndpoint {
 public:
  // Opens the endpoint described by f.endpoint.
  static absl::StatusOr<std::unique_ptr<PerfEndpoint>> Open(const PerfFlags& f);

  // One progress step: Poll, and in --block mode, when Poll returned nothing,
  // wait on the endpoint's fd (at most 5 ms) and Poll again. Busy-polling,
  // every kEmptyPollsBeforeYield-th Poll in a row that returns nothing
  // yields the CPU: without that, two busy-polling sides the scheduler put
  // on one CPU took turns only at its time slice (ms), and a run collapsed
  // ~70x (64 KiB bw 0.58 Gbit/s, lat p50 4 ms). Returns the completions
  // appended to `out`.
  size_t Step(std::vector<Completion>* out);
  static constexpr int kEmptyPollsBeforeYield = 64;

  // Lets the endpoint receive, ack, re-send and transmit without taking any
  // completion (Poll with max 0): called during long work on one message,
  // so that the peer's timers see acks. Never blocks.
  void Progress() { ep_->Poll(&no_completions_, 0); }

  Endpoint& ep() { return *ep_; }
  // Cumulative counters of this endpoint and process (subtract two
  // snapshots for a run's deltas).
  SideCounters Snapshot() const;

 private:
  PerfEndpoint(std::unique_ptr<Endpoint> ep, bool block)
      : ep_(std::move(ep)), block_(block) {}
  std::unique_ptr<Endpoint> ep_;
  bool block_;
  int empty_polls_ = 0;  // Polls in a row that returned nothing
  std::vector<Completion> no_completions_;  // Progress appends nothing
};

// a - b, field by field.
SideCounters Delta(const SideCounters& a, const SideCounters& b);

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_PERF_ENDPOINT_H_

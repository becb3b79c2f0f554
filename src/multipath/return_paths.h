// The return paths of one peer's acks, as the data sender sees them. A
// receiver sprays its acks over its own entropies (UDP source ports), and a
// pure receiver gets no outcome for them (docs/protocol.md gap 14), so its
// acks keep crossing a slow spine. Every RTT sample the sender takes is
// forward trip + return trip: acks that came back the slow way inflate the
// samples of every data path alike, the data paths' smoothed RTTs, the
// median the delay rule compares with, and Swift's delay signal.
//
// ReturnPaths tells those samples apart. For each return port it keeps an
// EWMA of the samples' excess over the data path's minimum RTT (the excess
// of a port = its extra return delay, plus forward queueing, which is the
// same for every port on average because data is sprayed independently of
// where its ack comes back). A port whose excess is far above the fastest
// quarter's (the delay rule's factor and margin over the 25th percentile)
// is a slow return path, and its samples say nothing about the data paths.
// The fastest quarter, not the median: a receiver's 16 entropies can put
// half of its acks on one slow spine (simulator: 8 pairs, one of them stuck
// at Swift's minimum window for 2 s with the median). A delay on (nearly)
// every port — forward queueing, the receiver's own link — moves the
// reference with it and is not filtered.
//
// I/O-free, clock-free, no allocation after construction.
#ifndef BRAID_MULTIPATH_RETURN_PATHS_H_
#define BRAID_MULTIPATH_RETURN_PATHS_H_

#include <array>
#include <cstdint>

#include "braid/time.h"

namespace braid::multipath {

struct ReturnPathOptions {
  // A port is slow if its excess EWMA > factor x the reference (the 25th
  // percentile of the judged ports' excess) and > reference + margin.
  // factor <= 0 turns the filter off.
  double factor = 2.0;
  DurationNs margin = DurationNs::Micros(50);
  // Samples a port needs before it is judged (and counts for the reference).
  uint32_t min_samples = 4;
};

class ReturnPaths {
 public:
  // Ports tracked at once; a new port beyond that replaces the one unused
  // for longest (a receiver's recycled entropies come back on new ports).
  static constexpr int kCapacity = 64;

  explicit ReturnPaths(const ReturnPathOptions& opts = {}) : opts_(opts) {}

  // One RTT sample that came back on `port`, `excess` above its data path's
  // minimum RTT (negative values count as 0). Returns true if `port` is a
  // slow return path after this sample — or, for a port with fewer than
  // min_samples samples, if this sample alone is that far above the
  // reference: the caller should not take the sample for the data path's
  // delay.
  bool Observe(uint16_t port, DurationNs excess);

  // Whether `port` is judged slow now (false for an unknown port).
  bool IsSlow(uint16_t port) const;
  // Ports with enough samples to be judged.
  int judged_ports() const { return judged_; }
  // The reference excess: the 25th percentile of the judged ports' excess
  // EWMAs (Zero if none).
  DurationNs reference_excess() const { return reference_; }
  // Forgets every port (the peer restarted: its entropies are new).
  void Reset();

 private:
  struct Port {
    uint16_t port = 0;
    bool used = false;
    uint32_t samples = 0;
    int64_t excess_ns = 0;  // EWMA, gain 1/8
    uint64_t last_use = 0;
  };

  Port* Find(uint16_t port);
  const Port* Find(uint16_t port) const;
  Port* Insert(uint16_t port);
  void RecomputeReference();
  bool Slow(const Port& p) const;
  bool SlowExcess(int64_t excess_ns) const;

  ReturnPathOptions opts_;
  std::array<Port, kCapacity> ports_{};
  uint64_t tick_ = 0;
  uint32_t since_reference_ = 0;
  int judged_ = 0;
  DurationNs reference_ = DurationNs::Zero();
};

}  // namespace braid::multipath

#endif  // BRAID_MULTIPATH_RETURN_PATHS_H_

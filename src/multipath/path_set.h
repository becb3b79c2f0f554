// The path set of one peer: N entropy values (paths), per-path RTT / loss /
// ECN state, the spraying policy, and penalising and recycling bad entropies
// (the PLB / REPS idea). I/O-free and clock-free: time is passed in, and the
// only randomness (choosing entropies) comes from an Rng seeded by the owner.
//
// Life of a path:
//   kHealthy --(burst / loss-rate / ECN rule)--> kPenalised (no new data)
//   kPenalised --(penalty expires: OnTimer, or lazily in Pick)--> kProbing
//   kProbing: at most one packet (the probe) in flight;
//             probe acked → kHealthy; probe lost / timed out → kPenalised
//             again with doubled penalty time.
//   The recycle_after-th consecutive penalty recycles instead: a fresh
//   entropy, state reset, straight to kProbing. The per-path sequence keeps
//   counting; the caller must declare the path's in-flight packets lost
//   (OnLoss), which are then recognised as stale and do not count against
//   the new entropy.
//
// Outcome accounting: call exactly one of OnAcked / OnLoss / OnTimeout for
// every packet passed to OnSent, plus OnEcn (after OnAcked) for an acked
// packet that carried CE, and OnRttSample (after OnAcked) for its RTT. Paths
// are FIFO, so outcomes of the packets sent before a probe or recycle are
// expected before the probe's own; those "stale" outcomes update counters
// only.
#ifndef BRAID_MULTIPATH_PATH_SET_H_
#define BRAID_MULTIPATH_PATH_SET_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/rng.h"
#include "braid/time.h"
#include "multipath/path_set_options.h"
#include "wire/psn.h"

namespace braid::multipath {

class PathSet {
 public:
  // Owns an Rng seeded from `seed`; initial entropies are distinct random
  // values (when entropy_space allows). Options are clamped to valid ranges.
  PathSet(const PathSetOptions& opts, uint64_t seed);

  // Number of paths (options.num_paths after clamping).
  size_t size() const { return paths_.size(); }

  // Path for the next packet: round-robin over usable paths (healthy, or
  // probing with no probe in flight), skipping paths whose in-flight count
  // is far above the mean. `avoid` (or -1) is not chosen unless it is the
  // only usable path. Never fails: if no path is usable, returns the
  // least-bad one. Call OnSent for the result before the next Pick.
  wire::PathId Pick(TimeNs now, int avoid = -1);

  // The entropy value currently assigned to path `p` (0 if p >= size()).
  wire::Entropy entropy(wire::PathId p) const;

  // Records a transmission on `p` and returns its per-path sequence number
  // (consecutive per path, never reset by recycling).
  wire::PathSeq OnSent(wire::PathId p, uint32_t bytes, TimeNs now);
  // One packet sent on `p` was acknowledged.
  void OnAcked(wire::PathId p, uint32_t bytes, TimeNs now);
  // An RTT sample for the packet just passed to OnAcked on `p`.
  void OnRttSample(wire::PathId p, DurationNs rtt);
  // One packet sent on `p` was declared lost. Returns what this did to p.
  PathEvent OnLoss(wire::PathId p, TimeNs now);
  // The packet just passed to OnAcked on `p` carried a CE mark.
  PathEvent OnEcn(wire::PathId p, TimeNs now);
  // A retransmit timeout fired for one packet sent on `p` (the packet
  // counts as lost; do not also call OnLoss for it).
  PathEvent OnTimeout(wire::PathId p, TimeNs now);
  // The outcome of a packet sent on p is unknown but not p's fault (e.g. a
  // timeout that hit most paths at once: the host or the peer stalled).
  // Releases its in-flight slot; no penalty, no loss counted.
  void OnDiscarded(wire::PathId p);

  // Moves paths whose penalty expired (by `now`) to kProbing.
  void OnTimer(TimeNs now);
  // Earliest penalty expiry, or TimeNs::Infinite() if none is pending.
  TimeNs NextTimerTime() const { return next_timer_; }

  // Counters and estimates of path `p` (all zero if p >= size()). Mutating
  // calls with p >= size() are ignored.
  const PathStats& stats(wire::PathId p) const;
  // Number of paths in kHealthy.
  uint32_t healthy_paths() const { return healthy_count_; }
  uint64_t total_penalties() const { return total_penalties_; }
  uint64_t total_recycles() const { return total_recycles_; }
  // The options in use (after clamping).
  const PathSetOptions& options() const { return opts_; }

  // New session with the same peer (e.g. it restarted). Keeps what describes
  // the network — entropies, health and penalty state, loss/ECN estimates,
  // RTTs, counters — and clears what describes the old session: per-path
  // sequences restart at 0, nothing is in flight, no probe is outstanding.
  void Reset();

 private:
  struct Path {
    PathStats stats;
    wire::PathSeq next_seq;
    TimeNs penalty_until;
    double badness = 0;    // burst rule
    double loss_rate = 0;  // EWMA of loss outcomes
    double ecn_rate = 0;   // EWMA of CE marks among acks
    uint32_t stale_in_flight = 0;
    uint32_t consecutive_penalties = 0;
    uint32_t clean_acks = 0;
    bool probe_in_flight = false;
    bool last_ack_stale = false;
  };

  const Path& At(wire::PathId p) const;
  Path& At(wire::PathId p);
  bool Usable(const Path& path) const;
  bool OverInflightLimit(const Path& path) const;
  wire::PathId LeastBad(int avoid) const;
  // Decrements in-flight; returns true if the outcome belonged to a packet
  // sent before the last probe / recycle.
  bool TakeOutcome(Path& path);
  PathEvent AfterLossOutcome(wire::PathId p, TimeNs now);
  PathEvent Penalise(wire::PathId p, TimeNs now, DurationNs base);
  void Recycle(wire::PathId p);
  void ToProbing(Path& path);
  void SetHealth(Path& path, PathHealth h);
  double OthersMean(double sum, double mine) const;
  void SetLossRate(Path& path, double v);
  void SetEcnRate(Path& path, double v);
  wire::Entropy DrawFreshEntropy(wire::PathId p);
  bool EntropyInUse(wire::Entropy e, size_t ignore) const;
  void RecomputeTimer();

  PathSetOptions opts_;
  Rng rng_;
  std::vector<Path> paths_;
  size_t cursor_ = 0;
  uint32_t healthy_count_ = 0;
  uint32_t probing_count_ = 0;
  uint64_t total_in_flight_ = 0;
  double sum_loss_rate_ = 0;
  double sum_ecn_rate_ = 0;
  uint64_t total_penalties_ = 0;
  uint64_t total_recycles_ = 0;
  TimeNs next_timer_ = TimeNs::Infinite();
};

}  // namespace braid::multipath

#endif  // BRAID_MULTIPATH_PATH_SET_H_

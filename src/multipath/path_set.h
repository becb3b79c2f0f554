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
//   the new entropy. Without a fresh entropy (every value in use) the route
//   cannot change, and the path is penalised (doubled time) instead.
//
// Outcome accounting: call exactly one of OnAcked / OnLoss / OnTimeout /
// OnDiscarded for every packet passed to OnSent, naming it by the sequence
// OnSent returned, plus OnEcn (after OnAcked) for an acked packet that
// carried CE, and OnRttSample (after OnAcked) for its RTT. Outcomes of the
// packets sent before a probe or recycle are "stale": they update counters
// only, and their in-flight slots were released when the path went to
// probing (so an outcome that never comes cannot block the path).
#ifndef BRAID_MULTIPATH_PATH_SET_H_
#define BRAID_MULTIPATH_PATH_SET_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/rng.h"
#include "braid/time.h"
#include "multipath/path_set_options.h"
#include "multipath/rate_decay.h"
#include "wire/psn.h"

namespace braid::multipath {

class PathSet {
 public:
  // Owns an Rng seeded from `seed`; initial entropies are distinct random
  // values (when entropy_space allows). Options are clamped to valid ranges.
  PathSet(const PathSetOptions& opts, uint64_t seed);

  // Number of paths (options.num_paths after clamping).
  size_t size() const { return paths_.size(); }

  // Path for the next packet: of the next spray_choices usable paths
  // (healthy, or probing with no probe in flight) in round-robin order, the
  // one with the least in flight plus lost since its last delivery; with
  // spray_choices 1, round robin skipping paths whose in-flight count is
  // far above the mean. `avoid` (or -1) is not chosen unless it is the
  // only usable path. `healthy_only` (for a retransmission: a packet that
  // must get through should not be the probe of a suspect path) prefers
  // healthy paths and falls back to the normal choice if none is usable.
  // Never fails: if no path is usable, returns the least-bad one. Call
  // OnSent for the result before the next Pick.
  wire::PathId Pick(TimeNs now, int avoid = -1, bool healthy_only = false);

  // The path of a flow hinted `hint` (non-zero; see SendOptions::flow):
  // path hint % size(), the same one for as long as the set lives (a
  // recycle changes its entropy, not its index). Returns it if it may carry
  // new data now (healthy, or probing with no probe out: the packet sent
  // then is the probe; penalties due by `now` expire first), else -1: the
  // caller sprays meanwhile. No in-flight skip (a flow keeps to its path
  // however loaded). Call OnSent for the result before the next Pick.
  int PickHinted(TimeNs now, uint32_t hint);

  // The entropy value currently assigned to path `p` (0 if p >= size()).
  wire::Entropy entropy(wire::PathId p) const;

  // Records a transmission on `p` and returns its per-path sequence number
  // (consecutive per path, never reset by recycling).
  wire::PathSeq OnSent(wire::PathId p, uint32_t bytes, TimeNs now) {
    return OnSentRun(p, bytes, 1, now);
  }
  // Records `count` transmissions of `bytes` each on `p`, back to back (one
  // GSO run): the same as `count` OnSent calls. Returns the first one's
  // sequence; the others follow it consecutively.
  wire::PathSeq OnSentRun(wire::PathId p, uint32_t bytes, uint32_t count,
                          TimeNs now);

  // Outcomes. Each transmission gets exactly one of OnAcked / OnLoss /
  // OnTimeout / OnDiscarded, naming it by its per-path sequence `seq` (the
  // value OnSent returned). A transmission made before the path's last
  // probe or recycle is "stale": its outcome updates counters only. The
  // overloads without `seq` assume outcomes arrive in per-path send order
  // (FIFO) and name the oldest transmission not yet given one; do not mix
  // the two forms on one PathSet.
  //
  // One packet sent on `p` was acknowledged.
  void OnAcked(wire::PathId p, wire::PathSeq seq, uint32_t bytes, TimeNs now);
  void OnAcked(wire::PathId p, uint32_t bytes, TimeNs now);
  // `count` packets of `bytes` each, sent on `p` with seqs first_seq ..
  // first_seq + count - 1, were acknowledged together: the same as OnAcked
  // for each, in order.
  void OnAckedRun(wire::PathId p, wire::PathSeq first_seq, uint32_t count,
                  uint32_t bytes, TimeNs now);
  // A transmission on `p` that already got its outcome (declared lost, or
  // discarded) arrived after all: evidence that p delivers. Releases no
  // in-flight slot; a probing path becomes healthy.
  void OnLateArrival(wire::PathId p, wire::PathSeq seq, TimeNs now);
  // An RTT sample for the packet just passed to OnAcked on `p`. With `now`,
  // the delay rule may penalise p (returns what it did).
  void OnRttSample(wire::PathId p, DurationNs rtt);
  PathEvent OnRttSample(wire::PathId p, DurationNs rtt, TimeNs now);
  // True if p's congestion signals (delay, CE, loss) should not cut the
  // peer's shared window: p is penalised or probing, or its smoothed RTT
  // marks it as a hot spot (delay rule), while most paths are healthy —
  // traffic is being steered off p instead. False when most paths suffer
  // (a shared bottleneck): then every signal counts.
  bool SteeredAway(wire::PathId p) const;
  // True if one RTT sample from `p` is far above the paths' median smoothed
  // RTT (the delay rule's factor and margin) while most paths are healthy:
  // a path-local delay — a slower route, or a queue on p alone — that
  // steering answers, even before p's smoothed RTT has caught up with it
  // (a fresh or recycled entropy has no history). A delay shared by most
  // paths moves the median with it and is not path-local.
  bool HotSample(wire::PathId p, DurationNs rtt) const;
  // One packet sent on `p` was declared lost. Returns what this did to p.
  PathEvent OnLoss(wire::PathId p, wire::PathSeq seq, TimeNs now);
  PathEvent OnLoss(wire::PathId p, TimeNs now);
  // The packet just passed to OnAcked on `p` carried a CE mark.
  PathEvent OnEcn(wire::PathId p, TimeNs now);
  // A packet sent on `p` whose outcome was released undecided (OnDiscarded)
  // proved lost after all: its re-send on another path arrived and it did
  // not. Weighs like OnLoss (may penalise or recycle p); no in-flight slot
  // is touched (the packet has none any more).
  PathEvent OnLossFoundLate(wire::PathId p, TimeNs now);
  // The same for the transmission `seq` on p. If it was the probe of a
  // probing p (its slot released by OnDiscarded, e.g. a tail probe re-sent
  // it), the probe failed: p is penalised again or recycled, as by the
  // OnLoss of a probe still out. Without this a path whose every probe is
  // rescued by a tail probe (one message at a time, the first packet of
  // each the probe) would probe, and lose a packet, forever.
  PathEvent OnLossFoundLate(wire::PathId p, wire::PathSeq seq, TimeNs now);
  // An ack-only datagram sent on `p` was evidently lost (the peer re-sent
  // data this side had acknowledged): for a side with nothing of its own in
  // flight, p's return route is dead or far too slow. No outcome ever comes
  // back for an ack, so p is not judged by its rules: it moves to a fresh
  // entropy at once (kRecycled; kProbing, usable), or, with no fresh value
  // to move to, is penalised.
  PathEvent OnReturnLoss(wire::PathId p, TimeNs now);
  // The peer has been silent on p as on (nearly) every other path, RTO
  // after RTO: p's route may be as dead as the rest, or the peer may be
  // gone, and nothing tells the two apart. p moves to a fresh entropy
  // (kRecycled; kProbing, usable) so that the next re-send tries a new
  // route; with no fresh value, nothing changes (kNone). Not a penalty.
  PathEvent Explore(wire::PathId p);
  // A retransmit timeout fired for one packet sent on `p` (the packet
  // counts as lost; do not also call OnLoss for it).
  PathEvent OnTimeout(wire::PathId p, wire::PathSeq seq, TimeNs now);
  PathEvent OnTimeout(wire::PathId p, TimeNs now);
  // The outcome of a packet sent on p is unknown but not p's fault (e.g. a
  // timeout that hit most paths at once: the host or the peer stalled; or a
  // copy superseded by a re-send). Releases its in-flight slot; no penalty,
  // no loss counted. If it was a probing path's probe, the path may send
  // another probe.
  void OnDiscarded(wire::PathId p, wire::PathSeq seq);
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
    // Transmissions with seq < epoch were made before the last probe or
    // recycle (stale); valid if has_epoch.
    wire::PathSeq epoch;
    wire::PathSeq probe_seq;  // the outstanding probe, if probe_in_flight
    wire::PathSeq fifo_next;  // oldest seq without an outcome (FIFO form)
    TimeNs penalty_until;
    double badness = 0;  // burst rule
    // The seq of the loss that last added to badness (OnLoss with a seq);
    // a later loss not adjacent to it starts a new burst.
    wire::PathSeq last_loss_seq;
    bool last_loss_valid = false;
    double loss_rate = 0;  // EWMA of loss outcomes
    double ecn_rate = 0;   // EWMA of CE marks among acks
    uint32_t consecutive_penalties = 0;
    uint32_t clean_acks = 0;
    uint32_t rtt_samples = 0;  // since the last recycle
    // Losses (OnLoss, OnTimeout, OnLossFoundLate) since the path last
    // delivered a packet, or since its last probe / recycle.
    uint32_t lost_since_delivery = 0;
    bool probe_in_flight = false;
    bool last_ack_stale = false;
    bool has_epoch = false;
  };

  const Path& At(wire::PathId p) const { return paths_[p]; }
  Path& At(wire::PathId p) { return paths_[p]; }
  bool Usable(const Path& path) const;
  bool OverInflightLimit(const Path& path) const;
  // What Pick compares (PathSetOptions::spray_choices).
  static uint64_t Load(const Path& path) {
    return uint64_t{path.stats.in_flight} + path.lost_since_delivery;
  }
  wire::PathId LeastBad(int avoid) const;
  // The least loaded of the next spray_choices usable paths (or round
  // robin, then least in flight); -1 if none.
  int PickUsable(int avoid, bool healthy_only);
  // True if `seq` was sent on `path` before its last probe / recycle.
  static bool IsStale(const Path& path, wire::PathSeq seq);
  // The FIFO form's seq: the oldest transmission without an outcome.
  static wire::PathSeq NextFifoSeq(Path& path);
  // Releases the in-flight slot of a transmission (unless stale: stale
  // slots were released when the path went to probing); returns whether
  // it was stale.
  bool TakeOutcome(Path& path, wire::PathSeq seq);
  // `n` packets on `path` got through (n > 1 only on a healthy path, as
  // OnAckedRun calls it): the same as n single deliveries.
  void MarkDelivered(Path& path, uint32_t n = 1);
  // Whether a value other than p's current entropy is free (recycling
  // needs one), and one such value drawn at random.
  bool DrawFreshEntropy(wire::PathId p, wire::Entropy* out);
  PathEvent AfterLossOutcome(wire::PathId p, TimeNs now);
  PathEvent Penalise(wire::PathId p, TimeNs now, DurationNs base);
  void Recycle(wire::PathId p, wire::Entropy fresh);
  void ToProbing(Path& path);
  void SetHealth(Path& path, PathHealth h);
  double OthersMean(double sum, double mine) const;
  void SetLossRate(Path& path, double v);
  void SetEcnRate(Path& path, double v);
  bool EntropyInUse(wire::Entropy e, size_t ignore) const;
  void RecomputeTimer();

  static const PathStats kNoStats;  // stats() of a path that does not exist

  PathSetOptions opts_;
  Rng rng_;
  std::vector<Path> paths_;
  size_t cursor_ = 0;
  uint32_t healthy_count_ = 0;
  uint32_t probing_count_ = 0;
  uint64_t total_in_flight_ = 0;
  double sum_loss_rate_ = 0;
  double sum_ecn_rate_ = 0;
  RateDecay loss_decay_;
  RateDecay ecn_decay_;
  uint64_t total_penalties_ = 0;
  uint64_t total_recycles_ = 0;
  TimeNs next_timer_ = TimeNs::Infinite();
  // Median smoothed RTT of the healthy paths with enough samples (delay
  // rule), recomputed every 16 samples; Zero if not known.
  DurationNs median_srtt_;
  uint32_t samples_since_median_ = 0;
  void RecomputeMedianSrtt();
  // The delay rule's preconditions: enough paths, a median smoothed RTT,
  // and more than half the paths healthy (else the delay is shared).
  bool DelayRuleApplies() const;
  // `d` > delay_factor x the median smoothed RTT and > median + margin.
  bool AboveDelayThreshold(DurationNs d) const;
  bool DelayHotSpot(const Path& path) const;
};

// Inline: these run once per datagram sent.
inline int PathSet::PickHinted(TimeNs now, uint32_t hint) {
  if (now >= next_timer_) OnTimer(now);
  const size_t p = hint % paths_.size();
  return Usable(paths_[p]) || paths_.size() == 1 ? static_cast<int>(p) : -1;
}

inline wire::Entropy PathSet::entropy(wire::PathId p) const {
  return p < paths_.size() ? At(p).stats.entropy : wire::Entropy{0};
}

inline const PathStats& PathSet::stats(wire::PathId p) const {
  return p < paths_.size() ? At(p).stats : kNoStats;
}

}  // namespace braid::multipath

#endif  // BRAID_MULTIPATH_PATH_SET_H_

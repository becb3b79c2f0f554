// Options, health states and per-path counters of a PathSet.
#ifndef BRAID_MULTIPATH_PATH_SET_OPTIONS_H_
#define BRAID_MULTIPATH_PATH_SET_OPTIONS_H_

#include <cstdint>

#include "braid/time.h"
#include "wire/psn.h"

namespace braid::multipath {

// How a path is judged (see path_set.h for the full policy):
//  * burst rule — `badness` grows by loss_weight per loss and timeout_weight
//    per RTO and is cleared by any ack on the path, and by a loss whose
//    transmission does not follow the previous loss's on the path (a
//    delivery lies between them, even if one ack reports both); reaching
//    burst_threshold penalises. A blackholed path (no acks at all) is
//    penalised after 3 losses, random scattered loss essentially never.
//  * loss-rate rule — an EWMA of the per-packet loss outcome; penalises a
//    grey path whose rate exceeds loss_rate_threshold AND relative_factor x
//    the average of the other paths (uniform loss, e.g. at the receiver's
//    downlink, is not the path's fault and penalises nobody).
//  * ECN rule — an EWMA of the CE fraction; penalises (for the shorter
//    ecn_penalty_time) only when it exceeds ecn_rate_threshold AND
//    relative_factor x the others' average: a hot spot, not a shared
//    bottleneck. ECN is therefore much gentler than loss.
//  * delay rule — a healthy path whose smoothed RTT exceeds delay_factor x
//    the median smoothed RTT of the healthy paths AND that median +
//    delay_margin is a hot spot too (a congested spine queues, its siblings
//    do not): penalised for ecn_penalty_time. Only while most paths are
//    healthy; when every path is slow (a shared bottleneck) the median is
//    slow as well and nobody is penalised: congestion control handles that.
struct PathSetOptions {
  // Number of paths, 1..256 (1 = single path: the go-back-N baseline; a
  // single path is never penalised, there is nowhere else to go).
  uint16_t num_paths = 16;
  // Entropy values are [0, entropy_space), 1..65536 (the backend's
  // EntropyCount()). If smaller than num_paths, entropies repeat.
  uint32_t entropy_space = 16384;

  // --- burst rule ---
  double loss_weight = 1.0;
  double timeout_weight = 2.0;
  double burst_threshold = 3.0;

  // --- loss-rate rule ---
  // EWMA gain per packet outcome (ack = 0, loss/timeout = 1).
  double loss_rate_gain = 1.0 / 128;
  double loss_rate_threshold = 0.05;
  // A path's rate must also exceed this multiple of the other paths' mean
  // (loss-rate and ECN rules).
  double relative_factor = 2.0;

  // --- ECN rule ---
  // EWMA gain per acked packet (marked = 1).
  double ecn_rate_gain = 1.0 / 32;
  double ecn_rate_threshold = 0.5;
  DurationNs ecn_penalty_time = DurationNs::Micros(250);

  // --- delay rule ---  (delay_factor 0 = off)
  double delay_factor = 2.0;
  DurationNs delay_margin = DurationNs::Micros(50);
  // RTT samples a path needs before the rule judges it.
  uint32_t delay_min_samples = 8;

  // --- penalty and recycling ---
  // A penalised path carries no new data for penalty_time (doubling with
  // each consecutive penalty, up to max_penalty_time), then is probed with a
  // single packet: acked → healthy, lost → penalised again. The cap only
  // matters for a path that cannot be recycled (no fresh entropy: as many
  // paths as source ports): behind a congested spine such a path was
  // re-admitted every 16 ms and, its losses found a queue's delay late,
  // took its share of spray runs each time (fabric demo's congested row,
  // 4 of 16 paths behind a 20 Mbit/s tbf: 256 ms instead of 16 ms gave
  // 4.6-7.5 instead of 3.8-4.0 Gbit/s, message p99 34-51 instead of 68-69
  // ms; docs/protocol.md gap 19).
  DurationNs penalty_time = DurationNs::Micros(500);
  DurationNs max_penalty_time = DurationNs::Millis(256);
  // The recycle_after-th consecutive penalty recycles the path instead: a
  // fresh entropy not used by another path, state reset, then probed.
  // 0 = never recycle.
  int recycle_after = 2;
  // Acks on a healthy path after which its consecutive-penalty count (and
  // hence penalty doubling) is forgiven.
  uint32_t forgive_after_acks = 64;

  // --- spraying ---
  // Pick() skips a path whose in-flight count exceeds
  // inflight_skip_factor x the mean over usable paths + inflight_skip_slack
  // (a slow or lossy-but-not-yet-penalised path self-limits).
  double inflight_skip_factor = 2.0;
  uint32_t inflight_skip_slack = 4;
  // Pick() compares this many usable paths, the next ones in round-robin
  // order, and takes the least loaded: in flight plus lost since the path
  // last delivered (a path that drops everything looks loaded, not empty).
  // 1 = round robin within the in-flight share above; at most 8.
  uint32_t spray_choices = 2;
};

enum class PathHealth : uint8_t { kHealthy, kPenalised, kProbing };

// Per-path counters and estimates. Counters survive penalties, recycling and
// Reset(); srtt/min_rtt restart on recycle (new route). srtt/min_rtt are the
// delay of the current route, for the steering rules and stats; the
// per-path srtt/rttvar that time losses belong to retransmit::
// SentPacketManager alone.
struct PathStats {
  wire::Entropy entropy = 0;
  PathHealth health = PathHealth::kHealthy;
  uint64_t packets_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t packets_acked = 0;
  uint64_t packets_lost = 0;  // OnLoss calls (RTOs are counted in timeouts)
  uint64_t ecn_marks = 0;
  uint64_t timeouts = 0;
  uint64_t penalties = 0;  // includes the penalties that caused a recycle
  uint64_t recycles = 0;
  uint64_t probes_sent = 0;
  DurationNs srtt;               // Zero until the first sample
  DurationNs min_rtt;            // Zero until the first sample
  uint64_t delay_penalties = 0;  // of `penalties`: by the delay rule
  uint32_t in_flight = 0;
};

enum class PathEvent : uint8_t { kNone, kPenalised, kRecycled };

}  // namespace braid::multipath

#endif  // BRAID_MULTIPATH_PATH_SET_OPTIONS_H_

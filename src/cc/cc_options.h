// Options for braid's congestion controllers. Every field has a documented
// default; SanitizeCcOptions clamps nonsense to a usable configuration.
#ifndef BRAID_CC_CC_OPTIONS_H_
#define BRAID_CC_CC_OPTIONS_H_

#include <cstdint>

#include "braid/time.h"

namespace braid::cc {

struct CcOptions {
  enum class Algorithm : uint8_t { kSwift, kNone };
  // kSwift: delay target + ECN + loss-rate rule (default). kNone: the window
  // is always max_cwnd_bytes (for A/B comparison and the go-back-N baseline).
  Algorithm algorithm = Algorithm::kSwift;

  // Bytes per full packet; the unit of additive increase.
  uint32_t mss = 4096;
  // Window a new session reaches without waiting for a queueing signal:
  // 256 KiB, about one BDP of 100 Gb/s at 20 us RTT.
  uint64_t initial_cwnd_bytes = 256 * 1024;
  // A session starts at min(start_cwnd_bytes, initial_cwnd_bytes) and
  // doubles its window every RTT (it grows by the bytes acked) up to
  // initial_cwnd_bytes while the RTT stays below target without CE; the
  // first queueing signal ends the doubling. Many senders starting at once
  // (incast) then put start_cwnd_bytes each into the network in their first
  // RTT, not initial_cwnd_bytes; a lone sender reaches initial_cwnd_bytes
  // within log2(initial / start) RTTs. 0 (default) starts at
  // initial_cwnd_bytes.
  uint64_t start_cwnd_bytes = 0;
  // Lower bound of the window; 0 means "one mss".
  uint64_t min_cwnd_bytes = 0;
  // Upper bound of the window: 64 MiB.
  uint64_t max_cwnd_bytes = 64ull * 1024 * 1024;

  // --- Swift delay target: target = min_rtt + base_target + flow_scaling ---
  // Queueing delay tolerated above the path's minimum RTT.
  DurationNs base_target = DurationNs::Micros(25);
  // Flow scaling (Swift §3.2): a small window gets up to `fs_range` extra
  // target so many small flows converge fairly; it falls as 1/sqrt(cwnd) from
  // fs_range at fs_min_cwnd_packets to 0 at fs_max_cwnd_packets. 0 disables.
  DurationNs fs_range = DurationNs::Micros(25);
  double fs_min_cwnd_packets = 1.0;
  double fs_max_cwnd_packets = 256.0;

  // --- increase / decrease ---
  // Additive increase per RTT, in packets, while rtt < target and no CE.
  double additive_increase_packets = 1.0;
  // Multiplicative decrease on delay: cwnd *= 1 - beta * (rtt - target) / rtt.
  double beta = 0.8;
  // Largest fraction removed by any single decrease (delay, ECN, loss).
  double max_mdf = 0.5;

  // --- ECN (DCTCP-style) ---
  // When false, ce_packets in AckEvent are ignored.
  bool ecn_enabled = true;
  // EWMA gain of alpha, the estimated fraction of CE-marked packets,
  // updated once per observation window (one srtt).
  double dctcp_g = 1.0 / 16;
  // Alpha at start and after Reset(). 1.0 (as Linux DCTCP) makes the first
  // marks cut hard until the estimate has converged.
  double dctcp_initial_alpha = 1.0;

  // --- loss ---
  // Sprayed traffic sees scattered random loss all the time, so a single loss
  // does not shrink the window. The window shrinks (at most once per RTT) when
  // the loss fraction over the current and previous observation windows
  // exceeds `loss_threshold`, judged only once at least
  // `loss_min_sample_packets` outcomes were seen; the cut is
  // min(max_mdf, loss_beta * fraction).
  double loss_threshold = 0.05;
  uint32_t loss_min_sample_packets = 100;
  double loss_beta = 1.0;
  // Loss is congestion only when the queue says so: a loss (by gap, time or
  // RTO) may shrink the window only while there is a queueing signal, i.e.
  // the newest RTT sample is at least
  //   min_rtt + loss_queueing_fraction * (target - min_rtt)
  // or CE marks arrived within the last two srtt. Loss without one (a flaky
  // link, a corrupting optic, a blackholed path) leaves the window alone: it
  // is repaired by retransmission and routed around by the path set, never
  // answered by sending less. 1 (the default) asks for the RTT the delay
  // rule itself answers: below its target the queue the window keeps is
  // the sender's own (without NIC timestamps the RTT cannot tell a host
  // queue from a fabric one), and it drops nothing. A tail-drop buffer
  // shallower than the target drops before the delay rule sees it; Swift's
  // own rule applies: keep the target below the buffer, or mark ECN.
  // 0 makes every loss count.
  double loss_queueing_fraction = 1.0;

  // --- retransmit timeout ---
  // With a queueing signal (above), each RTO sets
  // cwnd = min(cwnd * (1 - max_mdf), initial), and the
  // `rto_collapse_after`-th consecutive such RTO (no ack in between) sets the
  // window to min_cwnd. Without one, an RTO leaves the window alone.
  uint32_t rto_collapse_after = 2;

  // Used for the once-per-RTT gates before any RTT is known.
  DurationNs default_rtt = DurationNs::Micros(20);
};

// Returns `o` with every field clamped to a usable range (mss >= 64,
// min <= initial <= max, gains in (0, 1], ...).
CcOptions SanitizeCcOptions(const CcOptions& o);

}  // namespace braid::cc

#endif  // BRAID_CC_CC_OPTIONS_H_

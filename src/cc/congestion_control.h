// The congestion-control interface of braid, modelled on msquic's event
// structs: the per-peer core feeds one AckEvent per processed ACK batch and
// one LossEvent per loss-detection pass (never one call per packet), and asks
// cwnd_bytes() how much it may keep in flight. Implementations are I/O-free
// and clock-free: time arrives inside the events.
#ifndef BRAID_CC_CONGESTION_CONTROL_H_
#define BRAID_CC_CONGESTION_CONTROL_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "braid/time.h"
#include "cc/cc_options.h"

namespace braid::cc {

// One batch of newly acknowledged packets.
struct AckEvent {
  TimeNs now;
  uint64_t bytes_acked = 0;    // newly acknowledged bytes in this batch
  uint32_t packets_acked = 0;  // newly acknowledged packets in this batch
  DurationNs rtt;      // newest RTT sample; Zero() if the batch has none
  DurationNs min_rtt;  // the peer's minimum RTT so far (Zero if unknown)
  DurationNs srtt;     // the peer's smoothed RTT (Zero if unknown)
  uint64_t bytes_in_flight = 0;  // after removing the acked bytes
  uint32_t ce_packets = 0;       // of the acked packets, how many carried CE
};

// One batch of packets declared lost.
struct LossEvent {
  TimeNs now;
  uint64_t bytes_lost = 0;
  uint32_t packets_lost = 0;
  bool rto = false;  // the loss was declared by a retransmit timeout
  uint64_t bytes_in_flight = 0;  // after removing the lost bytes
};

// Counters every implementation keeps (fields an algorithm does not use stay
// 0).
struct CcStats {
  uint64_t ack_events = 0;
  uint64_t loss_events = 0;
  uint64_t additive_increases = 0;  // ack batches that grew the window
  uint64_t delay_decreases = 0;     // multiplicative decreases caused by delay
  uint64_t ecn_decreases = 0;       // decreases caused by CE marks
  uint64_t loss_decreases = 0;      // decreases caused by the loss-rate rule
  uint64_t losses_tolerated = 0;  // loss events that did not shrink the window
  // Of those (and of the RTOs), how many came without a queueing signal.
  uint64_t losses_without_queueing = 0;
  uint64_t rtos_without_queueing = 0;
  uint64_t rto_events = 0;
  uint64_t rto_collapses = 0;  // RTOs that set the window to its minimum
  uint64_t rto_undos = 0;      // spurious RTOs whose reaction was undone
};

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;

  // Feeds one batch of acknowledgements (at most one call per ACK batch).
  virtual void OnAck(const AckEvent& e) = 0;
  // Feeds one batch of packets declared lost (by gap, time or RTO).
  virtual void OnLoss(const LossEvent& e) = 0;
  // The last RTO reported through OnLoss was premature (the network had
  // delivered what it gave up on): undo that RTO's reaction if the
  // algorithm can. Default: nothing to undo.
  virtual void OnSpuriousRto() {}
  // Bytes the sender may have in flight; always within [min, max] of the
  // options the controller was built with.
  virtual uint64_t cwnd_bytes() const = 0;
  // Short stable name ("swift", "none") for logs and tool output.
  virtual absl::string_view name() const = 0;
  // Returns to the initial state (new session); counters are kept.
  virtual void Reset() = 0;
  // Counters since construction.
  virtual const CcStats& stats() const = 0;
};

// Builds the controller selected by `opts.algorithm`. Invalid option values
// are clamped to sane ranges (see SanitizeCcOptions); never returns null.
std::unique_ptr<CongestionControl> MakeCongestionControl(const CcOptions& opts);

// "swift" | "none" (case-insensitive) → algorithm; InvalidArgument otherwise.
absl::StatusOr<CcOptions::Algorithm> ParseAlgorithm(absl::string_view name);

// The canonical name of an algorithm, the inverse of ParseAlgorithm.
absl::string_view AlgorithmName(CcOptions::Algorithm a);

}  // namespace braid::cc

#endif  // BRAID_CC_CONGESTION_CONTROL_H_

// Vocabulary of the sender-side reliability module: options, the ack as the
// retransmit logic sees it, loss causes and counters. What an ack or a timer
// found is returned as a SenderOutcome (sender_outcome.h).
#ifndef BRAID_RETRANSMIT_RETRANSMIT_TYPES_H_
#define BRAID_RETRANSMIT_RETRANSMIT_TYPES_H_

#include <array>
#include <cstdint>

#include "absl/types/span.h"
#include "braid/time.h"
#include "wire/psn.h"

namespace braid::retransmit {

// Tunables of a SentPacketManager. Defaults suit a datacenter fabric with
// round trips of a few to a few hundred microseconds.
struct RetransmitOptions {
  // Floor of the retransmission timeout.
  DurationNs min_rto = DurationNs::Micros(200);
  // Ceiling of the retransmission timeout, also after exponential backoff.
  DurationNs max_rto = DurationNs::Millis(100);
  // RTT assumed (as srtt, with rttvar = initial_rtt / 2) before any sample.
  DurationNs initial_rtt = DurationNs::Micros(100);
  // Time-based loss: an in-flight transmission is lost if a transmission sent
  // after it is known to have arrived and
  //   now >= sent + path_srtt * (1 + tol/8) + 2 * path_rttvar
  //          + min_reorder_window,
  // where path_srtt/rttvar are those of the candidate's own path.
  int reorder_tolerance_eighths = 2;
  DurationNs min_reorder_window = DurationNs::Micros(5);
  // Reordering inside one path breaks the gap rule's FIFO assumption (a
  // link-aggregation group or a switch that sprays per packet behind one
  // 5-tuple, a test impairment). The gap threshold is how many seqs past a
  // transmission its path must have delivered before the gap rule declares
  // it lost: 1 (strict FIFO) until a gap loss is proven wrong (an ack echoes
  // the copy declared lost, or its re-send arrives as a duplicate while the
  // network is not seen duplicating), then the displacement seen + 1 (or
  // twice the threshold when the displacement is unknown), up to this; the
  // time rule judges what the threshold leaves. It halves per 64 srtt of
  // acks without such proof. 1 = never adapt.
  uint32_t max_gap_threshold = 256;
  // Tail loss probe: after SentPacketManager::pto() (about 1.5 x the
  // response srtt + max_ack_delay) without new data sent or new data acked,
  // with data in flight, queue the newest in-flight packet for re-sending
  // once (cause kTailProbe). Never fires after the RTO.
  bool tail_probe = true;
  // Longest time the receiver may hold the ack of the newest packet in
  // flight (coalescing) beyond what the response srtt already includes;
  // added to the tail-probe timeout. braid's Peer sets 0 (its newest packet
  // always asks for an immediate ack).
  DurationNs max_ack_delay = DurationNs::Micros(10);
  // How far spurious tail probes (copies the receiver saw twice) may stretch
  // the probe timeout: x2 per spurious probe up to x(1 << this), decaying per
  // 256 srtt. 0 (default) = never: measured on a loopback ping-pong with 1 %
  // loss (docs/performance.md), a shift of 3 halved the
  // retransmissions but doubled the p99 of the round trips that lost a
  // packet (70 vs 32 us), and tail latency is what the probe is for.
  int max_pto_shift = 0;
  // Report packets acknowledged together as runs (SenderOutcome's
  // AckedPackets with count >= 2) where they qualify, instead of one entry
  // per packet: bulk acks then cost one entry per GSO run.
  bool acked_runs = false;
  // Go-back-N baseline: a NAK declares every in-flight PSN >= cum lost; an
  // RTO declares everything in flight lost.
  bool go_back_n = false;
  // Packets the PSN ring is sized for at construction; it doubles on demand.
  uint32_t initial_window_packets = 256;
  // Transmissions each path log holds at first use; doubles on demand.
  uint32_t initial_path_log = 64;
};

// Why a packet was declared lost (or, for kTailProbe, re-sent as a probe).
enum class LossCause : uint8_t {
  kPathGap = 0,    // a later transmission on the same FIFO path arrived
  kTime = 1,       // a later-sent packet arrived and the reorder window passed
  kRto = 2,        // retransmission timeout
  kTailProbe = 3,  // tail loss probe: queued for a re-send, not proven lost
  kNak = 4,        // go-back-N NAK
  // The receiver refused our first contact (it challenged it instead of
  // taking it in): re-sent at once, not lost in the network.
  kRefused = 5,
};
inline constexpr int kNumLossCauses = 6;

// Short lower-case name for logs and tool output ("path_gap", "time", ...).
const char* LossCauseName(LossCause cause);

// One acknowledgement, already parsed and authenticated by the core.
struct AckInfo {
  // Every PSN < cum was received.
  wire::Psn cum;
  // Bit i of word j set => PSN cum + 1 + 64 * j + i was received. PSN cum
  // itself is missing whenever any bit is set. PSNs >= cum + 1 + 64 * size()
  // are beyond the ack's reach: unknown, never inferred lost from this ack.
  absl::Span<const uint64_t> sack;
  // The data transmission that triggered this ack, and how long the receiver
  // held it before acking (subtracted from the RTT sample).
  wire::PathId echo_path = 0;
  wire::PathSeq echo_path_seq;
  DurationNs ack_delay;
  // Go-back-N only: the receiver discarded an out-of-order PSN.
  bool nak = false;
  // The echoed transmission reached the receiver as a duplicate: it (or
  // the copy that arrived before it) was sent unnecessarily.
  bool echo_duplicate = false;
  // When the ack reached this host (kernel timestamp), if known (else
  // Infinite: the time OnAck is called). RTT samples end here.
  TimeNs arrival = TimeNs::Infinite();
};

// Counters of one SentPacketManager; cumulative, survive Reset().
struct SenderCounters {
  uint64_t packets_sent = 0;  // first transmissions
  uint64_t bytes_sent = 0;    // first transmissions
  uint64_t retransmits = 0;   // every OnRetransmitted, probes included
  // Indexed by LossCause: the cause of the loss each re-send repaired
  // (kTailProbe for probes).
  std::array<uint64_t, kNumLossCauses> retransmits_by_cause = {};
  uint64_t packets_lost = 0;  // loss declarations (tail probes included)
  std::array<uint64_t, kNumLossCauses> losses_by_cause = {};
  uint64_t packets_acked = 0;
  uint64_t bytes_acked = 0;
  uint64_t rtos = 0;         // RTO expiries
  uint64_t tail_probes = 0;  // probes scheduled
  // An ack echoed a transmission we had already re-sent after declaring it
  // lost.
  uint64_t spurious_retransmits = 0;
  // A packet declared lost was acked before it was re-sent.
  uint64_t lost_then_acked = 0;
  // Time-rule losses proven wrong (the copy declared lost arrived); each
  // may widen the reorder window.
  uint64_t spurious_time_losses = 0;
  // Path-gap losses proven wrong (reordering inside a path); each may raise
  // the gap threshold (RetransmitOptions::max_gap_threshold).
  uint64_t spurious_gap_losses = 0;
  // Tail probes proven unnecessary (the receiver saw the probe as a
  // duplicate); each doubles the probe timeout (at most 8x; it decays).
  uint64_t spurious_tail_probes = 0;
  // RTOs proven premature: an ack echoed a transmission the RTO declared
  // lost. The backoff is undone and SenderOutcome::spurious_rto set.
  uint64_t spurious_rtos = 0;
  // Acks whose echoed transmission arrived as a duplicate (flagged by the
  // receiver): proof a re-send was unnecessary.
  uint64_t duplicate_echoes = 0;
  uint64_t acks_processed = 0;  // valid acks
  uint64_t invalid_acks = 0;    // rejected: refer to PSNs never sent
  uint64_t naks = 0;            // NAKs acted on
  uint64_t naks_ignored = 0;    // duplicate NAKs, or NAKs outside GBN mode
  uint64_t rtt_samples = 0;
  uint64_t rtt_samples_rejected = 0;  // non-positive after ack_delay
  uint64_t echo_unknown = 0;          // echoed (path, seq) not in the history
  // Caller bugs, counted rather than asserted: OnRetransmitted for a PSN
  // that is not outstanding, and per-path seqs that did not increase.
  uint64_t bad_retransmit_calls = 0;
  uint64_t path_seq_regressions = 0;
};

}  // namespace braid::retransmit

#endif  // BRAID_RETRANSMIT_RETRANSMIT_TYPES_H_

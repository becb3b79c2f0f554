// What one SentPacketManager::OnAck or OnTimer found: packets acknowledged,
// packets declared lost (with the cause and the transmission), the RTT
// sample, and proof that earlier re-sends or the last RTO were not needed.
// The manager fills it and returns; the caller applies it afterwards (to
// its path set, congestion control, messages), and only then calls the
// manager again. Nothing is reported by calling back into the caller.
//
// The caller owns one SenderOutcome and passes it to every call: Clear()
// keeps the vectors' storage, so once they have grown to the largest ack
// seen there is no allocation per ack.
#ifndef BRAID_RETRANSMIT_SENDER_OUTCOME_H_
#define BRAID_RETRANSMIT_SENDER_OUTCOME_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "braid/time.h"
#include "retransmit/retransmit_types.h"
#include "wire/psn.h"

namespace braid::retransmit {

// Packets acknowledged for the first time: one packet (count 1), or a run
// of count >= 2 reported at once (only with RetransmitOptions::acked_runs).
// A run is packets sent once, together (one send time), on one path with
// consecutive path seqs and of the same size (a GSO run); it stands for
// `count` single packets first + i, each with path seq first_seq + i,
// was_retransmitted false, was_outstanding true and no orphan.
struct AckedPackets {
  wire::Psn first;
  uint32_t count = 1;
  uint32_t bytes = 0;  // of each packet
  // Where their tags start in SenderOutcome::tags (see Tags()).
  uint32_t tags_at = 0;
  // The transmission believed to have arrived: the echoed one if the ack
  // proves it, else the latest copy.
  wire::PathId path = 0;
  wire::PathSeq first_seq;
  // The packet was sent more than once.
  bool was_retransmitted = false;
  // False if that transmission had already been declared lost (an outcome
  // was reported for it then).
  bool was_outstanding = true;
  // A later copy still in flight that will never be reported (the packet
  // was acked through an earlier copy).
  bool has_orphan = false;
  wire::PathId orphan_path = 0;
  wire::PathSeq orphan_seq;
};

// A packet declared lost (or, for kTailProbe, queued as a probe); it waits
// for PopRetransmit.
struct LostPacket {
  wire::Psn psn;
  uint64_t tag = 0;
  uint32_t bytes = 0;
  // The transmission declared lost (the packet's latest copy).
  wire::PathId path = 0;
  wire::PathSeq seq;
  LossCause cause = LossCause::kPathGap;
  // A transmission sent strictly later is known to have arrived (evidence
  // against `path`; without it an RTO loss may be a stall of this host or
  // the peer, or lost acks).
  bool overtaken = false;
};

// An RTT sample (the receiver's ack delay already subtracted) for `path`.
struct RttSample {
  wire::PathId path = 0;
  DurationNs rtt;
};

// Empty until first used: an idle peer's outcome costs no heap memory.
struct SenderOutcome {
  // Empties every list, keeping the storage.
  void Clear() {
    acked.clear();
    tags.clear();
    lost.clear();
    spurious_retransmits.clear();
    has_rtt_sample = false;
    spurious_rto = false;
  }

  // The tags of a's packets, in PSN order.
  absl::Span<const uint64_t> Tags(const AckedPackets& a) const {
    return absl::MakeConstSpan(tags.data() + a.tags_at, a.count);
  }

  // The ack's RTT sample, if it gave one. It was taken before anything
  // below happened: apply it first.
  bool has_rtt_sample = false;
  RttSample rtt_sample;
  // Newly acknowledged packets, in the order they were found (PSN order
  // within each cum or SACK stretch). OnTimer reports none.
  std::vector<AckedPackets> acked;
  std::vector<uint64_t> tags;  // of the packets in `acked`
  // Losses, in the order they were declared; all come after `acked` (an
  // ack first acknowledges, then judges what it left out).
  std::vector<LostPacket> lost;
  // PSNs whose re-send proved unnecessary: an ack echoed an earlier copy
  // after it had been re-sent, or the receiver saw the re-send twice.
  std::vector<wire::Psn> spurious_retransmits;
  // The last RTO was premature (see SenderCounters::spurious_rtos):
  // congestion control may restore the window it had before the timeout.
  bool spurious_rto = false;
};

}  // namespace braid::retransmit

#endif  // BRAID_RETRANSMIT_SENDER_OUTCOME_H_

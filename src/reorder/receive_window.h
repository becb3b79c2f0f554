// The receiver's PSN window: duplicate filter, cumulative point and SACK
// bitmap for one peer pair. I/O-free; O(1) amortised per packet.
#ifndef BRAID_REORDER_RECEIVE_WINDOW_H_
#define BRAID_REORDER_RECEIVE_WINDOW_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "wire/psn.h"

namespace braid::reorder {

// Counters of a ReceiveWindow, cumulative since construction.
struct ReceiveWindowStats {
  uint64_t new_packets = 0;            // recorded for the first time
  uint64_t duplicates = 0;             // below cum or already recorded
  uint64_t beyond_window = 0;          // psn >= cum + capacity: dropped
  uint64_t in_order_only_dropped = 0;  // go-back-N mode: psn > cum dropped
  uint64_t resets = 0;                 // Reset() calls (new sender session)
};

// Tracks which PSNs of one sender session have been received.
//
// Bit layout: a ring of `capacity` bits indexed by (psn mod capacity) holds
// the PSNs in [cum, cum + capacity). Every PSN below cum has been received;
// the bit of cum itself is always clear. Bits for PSNs below cum are cleared
// as cum advances, so the ring never aliases.
class ReceiveWindow {
 public:
  enum class Verdict {
    kNew,           // first arrival: recorded (by OnPacket*)
    kDuplicate,     // already received: drop, but ack (sender lost an ack)
    kBeyondWindow,  // too far ahead (or, in go-back-N mode, not == cum): drop
  };

  // `capacity_packets` is rounded up to a power of two, at least 64 and at
  // most 2^30. The window starts at PSN 0; call Reset() to set the base.
  // It starts with room for `initial_packets` (rounded the same way; 0 or
  // more than the capacity: the whole capacity) and doubles as PSNs
  // further from cum arrive, so a peer that exchanges little holds little.
  explicit ReceiveWindow(uint32_t capacity_packets = 65536,
                         uint32_t initial_packets = 0);

  // Classifies `psn` without recording it. Lets a caller that may still
  // refuse the packet (e.g. reassembly out of memory) check first and record
  // with OnPacket() only once the packet is accepted.
  Verdict Classify(wire::Psn psn) const;

  // Classifies and, if kNew, records `psn` (advancing cum word-at-a-time
  // across any run of already received PSNs).
  Verdict OnPacket(wire::Psn psn);

  // Go-back-N baseline: accepts only psn == cum (kNew, cum advances by one);
  // psn < cum is kDuplicate; anything else is kBeyondWindow (not recorded).
  // Use one mode per session; do not mix with OnPacket().
  Verdict OnPacketInOrderOnly(wire::Psn psn);

  // True if the last kNew packet created or filled a hole, i.e. it was not
  // the next in-order PSN with nothing received beyond it. For AckScheduler.
  bool last_out_of_order() const { return last_out_of_order_; }

  // All PSNs < cum() have been received; cum() itself has not.
  wire::Psn cum() const { return cum_; }

  // One past the highest PSN received in this session (== cum() if none is
  // beyond cum, == base after Reset()).
  wire::Psn highest_received_plus_one() const { return highest_plus_one_; }

  // True if `psn` has been received (below cum, or recorded in the window).
  bool Contains(wire::Psn psn) const;

  // Writes SACK words: bit i of word j set <=> PSN cum+1+64j+i received.
  // Returns the number of words written, at most out.size(), trimmed so the
  // last written word is non-zero; 0 if nothing beyond cum is received.
  size_t FillSack(absl::Span<uint64_t> out) const;

  // Number of packets recorded beyond cum (the out-of-order backlog).
  uint32_t out_of_order_packets() const { return out_of_order_count_; }

  // New sender session (SYNC): cum = base, all recorded bits cleared.
  // Costs O(capacity / 64).
  void Reset(wire::Psn base);

  // PSNs [cum, cum + capacity()) can be recorded.
  uint32_t capacity() const { return max_capacity_; }
  // Bits held now (grows up to capacity()).
  uint32_t allocated() const { return capacity_; }
  const ReceiveWindowStats& stats() const { return stats_; }

 private:
  // Ring index of `psn`.
  uint32_t Index(wire::Psn psn) const { return psn.value() & mask_; }
  bool TestBit(wire::Psn psn) const {
    const uint32_t i = Index(psn);
    return (bits_[i >> 6] >> (i & 63)) & 1;
  }
  // The 64 ring bits starting at `psn` (bit 0 = psn), across a word border.
  uint64_t Extract64(wire::Psn psn) const;
  // Advances cum over consecutive set bits, clearing them.
  void AdvanceCum();

  // Re-lays the ring for room for `need` PSNs from cum (<= max_capacity_).
  void Grow(uint32_t need);

  uint32_t max_capacity_;
  uint32_t capacity_;  // bits in the ring now
  uint32_t mask_;
  std::vector<uint64_t> bits_;
  wire::Psn cum_{0};
  wire::Psn highest_plus_one_{0};
  uint32_t out_of_order_count_ = 0;
  bool last_out_of_order_ = false;
  ReceiveWindowStats stats_;
};

}  // namespace braid::reorder

#endif  // BRAID_REORDER_RECEIVE_WINDOW_H_

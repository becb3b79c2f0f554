// The transmissions made on one path, in send order (= per-path sequence
// order). Paths are FIFO, so this is what per-path gap loss detection, the
// time-based loss rule and the RTO walk. The log has two regions:
//   [oldest, head)  resolved history, kept only to answer Find() for RTT
//                   samples and spurious-retransmit detection; overwritten
//                   when room is needed;
//   [head, tail)    unresolved transmissions, oldest first; never
//                   overwritten: the ring doubles instead, so that at least
//                   half of it stays available for history.
// Appending, popping and (for consecutive seqs) Find() are O(1); no
// allocation except when the ring grows.
#ifndef BRAID_RETRANSMIT_PATH_TX_LOG_H_
#define BRAID_RETRANSMIT_PATH_TX_LOG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "braid/time.h"
#include "wire/psn.h"

namespace braid::retransmit {

// One transmission of one packet on one path.
struct TxRecord {
  wire::PathSeq seq;
  wire::Psn psn;
  TimeNs sent;
  uint64_t tx_index = 0;    // global send order of the manager
  bool sampled = false;     // an RTT sample was taken from it
  bool superseded = false;  // declared lost, then re-sent as a newer copy
  // A re-send: the loss cause it repaired (LossCause value); kFirstSend for
  // a packet's first transmission.
  uint8_t repairs = kFirstSend;
  bool dup_noted = false;  // echoed as a duplicate already
  // When superseded: the path its re-send went on. Set with `superseded`
  // and read only while that is true (Append leaves it stale).
  uint8_t superseded_on = kNoPath;
  static constexpr uint8_t kFirstSend = 0xff;
  static constexpr uint8_t kNoPath = 0xff;
};

class PathTxLog {
 public:
  // `initial_capacity` is rounded up to a power of two (at least 4).
  explicit PathTxLog(uint32_t initial_capacity = 64);

  // Appends a transmission at the tail. Seqs must increase; the caller
  // checks. May overwrite the oldest history entry, or grow the ring.
  void Append(wire::PathSeq seq, wire::Psn psn, TimeNs sent, uint64_t tx_index,
              uint8_t repairs = TxRecord::kFirstSend);
  // Appends `count` first sends made back to back: seqs seq, seq + 1, ...,
  // PSNs psn, psn + 1, ..., send indices tx_index, tx_index + 1, ..., all
  // sent at `sent`. The same as `count` Appends (but may keep more history).
  void AppendRun(wire::PathSeq seq, wire::Psn psn, uint32_t count, TimeNs sent,
                 uint64_t tx_index);
  // True if there is an unresolved transmission.
  bool HasUnresolved() const { return head_ != tail_; }
  // Number of unresolved transmissions.
  size_t unresolved() const { return static_cast<size_t>(tail_ - head_); }
  // The oldest unresolved transmission. Requires HasUnresolved().
  TxRecord& Front() { return ring_[head_ & mask_]; }
  // Moves the oldest unresolved transmission into the history.
  void PopFront() { ++head_; }
  // The transmission with `seq`, resolved or not; nullptr if it is not (or no
  // longer) in the log.
  TxRecord* Find(wire::PathSeq seq);
  // The oldest transmission of `psn` sent after `tx_index`, resolved or not;
  // nullptr if there is none in the log. Scans what was sent after
  // `tx_index`: for rare events.
  TxRecord* FindCopyAfter(wire::Psn psn, uint64_t tx_index);
  // Forgets everything, keeping the memory.
  void Clear() { oldest_ = head_ = tail_ = 0; }
  size_t capacity() const { return ring_.size(); }

 private:
  void Grow();
  // Writes a fresh record (no flags set) at ring position `pos`.
  void Store(uint64_t pos, wire::PathSeq seq, wire::Psn psn, TimeNs sent,
             uint64_t tx_index, uint8_t repairs);

  std::vector<TxRecord> ring_;
  uint64_t mask_ = 0;
  uint64_t oldest_ = 0;  // ring positions, monotonically increasing
  uint64_t head_ = 0;
  uint64_t tail_ = 0;
};

inline void PathTxLog::Store(uint64_t pos, wire::PathSeq seq, wire::Psn psn,
                             TimeNs sent, uint64_t tx_index, uint8_t repairs) {
  TxRecord& r = ring_[pos & mask_];
  r.seq = seq;
  r.psn = psn;
  r.sent = sent;
  r.tx_index = tx_index;
  r.sampled = false;
  r.superseded = false;
  r.repairs = repairs;
  r.dup_noted = false;
}

// Inline: it runs once per transmission.
inline void PathTxLog::Append(wire::PathSeq seq, wire::Psn psn, TimeNs sent,
                              uint64_t tx_index, uint8_t repairs) {
  // Keep at least half the ring for history: grow when the unresolved part
  // would exceed it.
  if (unresolved() + 1 > ring_.size() / 2) Grow();
  if (tail_ - oldest_ == ring_.size()) ++oldest_;  // overwrite oldest history
  if (oldest_ > head_) oldest_ = head_;            // (cannot happen; guard)
  Store(tail_, seq, psn, sent, tx_index, repairs);
  ++tail_;
}

// Inline: it runs once per GSO run sent.
inline void PathTxLog::AppendRun(wire::PathSeq seq, wire::Psn psn,
                                 uint32_t count, TimeNs sent,
                                 uint64_t tx_index) {
  while (unresolved() + count > ring_.size() / 2) Grow();
  // Overwrite as much of the oldest history as the run needs.
  if (tail_ + count - oldest_ > ring_.size()) {
    oldest_ = tail_ + count - ring_.size();
  }
  for (uint32_t i = 0; i < count; ++i) {
    Store(tail_ + i, seq + i, psn + i, sent, tx_index + i,
          TxRecord::kFirstSend);
  }
  tail_ += count;
}

}  // namespace braid::retransmit

#endif  // BRAID_RETRANSMIT_PATH_TX_LOG_H_

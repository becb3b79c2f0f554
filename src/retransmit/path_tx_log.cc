#include "retransmit/path_tx_log.h"

namespace braid::retransmit {

namespace {
uint32_t RoundUpPow2(uint32_t n) {
  uint32_t c = 4;
  while (c < n && c < (1u << 30)) c <<= 1;
  return c;
}
}  // namespace

PathTxLog::PathTxLog(uint32_t initial_capacity)
    : ring_(RoundUpPow2(initial_capacity)), mask_(ring_.size() - 1) {}

TxRecord* PathTxLog::FindCopyAfter(wire::Psn psn, uint64_t tx_index) {
  // Newest first, down to the first record sent before `tx_index` (the log
  // is in send order): only what was sent since is looked at.
  TxRecord* found = nullptr;
  for (uint64_t i = tail_; i > oldest_; --i) {
    TxRecord& r = ring_[(i - 1) & mask_];
    if (r.tx_index <= tx_index) break;
    if (r.psn == psn) found = &r;
  }
  return found;
}

TxRecord* PathTxLog::Find(wire::PathSeq seq) {
  if (oldest_ == tail_) return nullptr;
  const wire::PathSeq first = ring_[oldest_ & mask_].seq;
  const int64_t off = seq - first;
  const uint64_t size = tail_ - oldest_;
  if (off < 0) return nullptr;
  if (static_cast<uint64_t>(off) < size) {
    TxRecord& r = ring_[(oldest_ + off) & mask_];
    if (r.seq == seq) return &r;  // seqs consecutive: the common case
  }
  // Seqs had gaps: binary search, they increase along the ring.
  uint64_t lo = oldest_, hi = tail_;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (ring_[mid & mask_].seq < seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < tail_ && ring_[lo & mask_].seq == seq) return &ring_[lo & mask_];
  return nullptr;
}

void PathTxLog::Grow() {
  std::vector<TxRecord> bigger(ring_.size() * 2);
  const uint64_t new_mask = bigger.size() - 1;
  for (uint64_t i = oldest_; i < tail_; ++i) {
    bigger[i & new_mask] = ring_[i & mask_];
  }
  ring_.swap(bigger);
  mask_ = new_mask;
}

}  // namespace braid::retransmit

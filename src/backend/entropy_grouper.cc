#include "backend/entropy_grouper.h"

#include <algorithm>
#include <cstdint>

namespace braid::backend {

EntropyGrouper::EntropyGrouper(size_t max_burst, uint32_t max_entropies)
    : max_burst_(std::max<size_t>(1, max_burst)),
      rank_(max_entropies, -1),
      start_(std::min<size_t>(max_entropies, max_burst_) + 1),
      seen_(),
      scratch_(max_burst_) {
  seen_.reserve(std::min<size_t>(max_entropies, max_burst_));
}

void EntropyGrouper::Group(absl::Span<TxPacket> pkts) {
  if (pkts.size() < 2) return;  // a lone reply: nothing to regroup
  for (size_t i = 0; i < pkts.size(); i += max_burst_) {
    GroupChunk(pkts.subspan(i, std::min(max_burst_, pkts.size() - i)));
  }
}

void EntropyGrouper::GroupChunk(absl::Span<TxPacket> pkts) {
  // Pass 1: rank entropies by first appearance and count each group.
  seen_.clear();
  const size_t groups_cap = start_.size() - 1;
  std::fill(start_.begin(), start_.end(), 0);
  size_t out_of_range = 0;
  // Whether some entropy comes back after another one: if none does, every
  // group is already one contiguous run (a bulk sender's spray runs).
  bool interleaved = false;
  uint32_t prev = UINT32_MAX;
  for (size_t i = 0; i < pkts.size();) {
    const TxPacket& p = pkts[i];
    // A run's siblings (TxPacket::run_follow) share its entropy: counted
    // with it, not looked at one by one.
    const size_t n = 1 + std::min<size_t>(p.run_follow, pkts.size() - i - 1);
    i += n;
    if (p.entropy >= rank_.size()) {
      out_of_range += n;
      continue;
    }
    int32_t& r = rank_[p.entropy];
    if (r < 0) {
      r = static_cast<int32_t>(seen_.size());
      seen_.push_back(p.entropy);  // capacity reserved: no allocation
    } else if (p.entropy != prev) {
      interleaved = true;
    }
    prev = p.entropy;
    start_[static_cast<size_t>(r) + 1] += n;
  }
  if (!interleaved && out_of_range == 0) {
    for (uint16_t e : seen_) rank_[e] = -1;
    return;  // already grouped
  }
  // Prefix sums: start_[r] = first slot of group r.
  for (size_t r = 1; r <= seen_.size() && r <= groups_cap; ++r) {
    start_[r] += start_[r - 1];
  }
  size_t tail = pkts.size() - out_of_range;
  // Pass 2: scatter (stable), then copy back. A run stays contiguous (its
  // packets share an entropy and were adjacent), but its hint may not reach
  // past this chunk any more: other packets of its entropy group may now
  // follow it.
  for (size_t i = 0; i < pkts.size(); ++i) {
    const TxPacket& p = pkts[i];
    TxPacket& q =
        p.entropy >= rank_.size()
            ? scratch_[tail++]
            : scratch_[start_[static_cast<size_t>(rank_[p.entropy])]++];
    q = p;
    q.run_follow = static_cast<uint8_t>(
        std::min<size_t>(p.run_follow, pkts.size() - i - 1));
  }
  std::copy(scratch_.begin(), scratch_.begin() + pkts.size(), pkts.begin());
  for (uint16_t e : seen_) rank_[e] = -1;
}

}  // namespace braid::backend

// The endpoint-wide account of reassembly memory, shared by the Reassembler
// of every peer: bytes committed to partial messages (the chunks their
// fragments landed in), bounded by one cap, and address space reserved
// ahead of that commitment, bounded softly.
#ifndef BRAID_REORDER_REASSEMBLY_BUDGET_H_
#define BRAID_REORDER_REASSEMBLY_BUDGET_H_

#include <algorithm>
#include <cstdint>
#include <limits>

namespace braid::reorder {

class ReassemblyBudget {
 public:
  // `max_bytes`: the cap on committed bytes. Peers that have proven nothing
  // may commit only while the total stays within half of it, so proven
  // peers always find the other half.
  explicit ReassemblyBudget(
      uint64_t max_bytes = std::numeric_limits<uint64_t>::max())
      : max_bytes_(max_bytes) {}

  // Commits `n` more bytes for a peer that has (`proven`) or has not proven
  // itself. Returns false, changes nothing and flags pressure if that would
  // pass its limit.
  bool TryCommit(uint64_t n, bool proven) {
    const uint64_t limit = proven ? max_bytes_ : max_bytes_ / 2;
    if (n > limit || committed_ > limit - n) {
      ++refused_;
      pressure_ = true;
      return false;
    }
    committed_ += n;
    peak_ = std::max(peak_, committed_);
    return true;
  }
  // Gives back `n` committed bytes.
  void Release(uint64_t n) { committed_ -= n; }

  // Address space a message's buffer may reserve for its whole length up
  // front (no byte of it is committed until a fragment lands there): true,
  // and counted, while all reservations stay within the cap (half of it for
  // a peer that has not `proven` itself, so a few strangers' huge messages
  // cannot take it all). Otherwise the caller grows its buffer as the bytes
  // arrive.
  bool TryReserveAhead(uint64_t n, bool proven) {
    const uint64_t limit = proven ? max_bytes_ : max_bytes_ / 2;
    if (n > limit || reserved_ > limit - n) return false;
    reserved_ += n;
    return true;
  }
  // Counts a reservation made without asking (a buffer grown as its bytes
  // arrive: at most twice what it holds).
  void AddReserved(uint64_t n) { reserved_ += n; }
  void Unreserve(uint64_t n) { reserved_ -= n; }

  // True once after a refusal: the caller may evict to make room.
  bool TakePressure() {
    const bool p = pressure_;
    pressure_ = false;
    return p;
  }
  // Whether committing `n` more bytes for an unproven peer would pass.
  bool UnprovenRoom(uint64_t n) const {
    return committed_ + n <= max_bytes_ / 2;
  }

  uint64_t max_bytes() const { return max_bytes_; }
  uint64_t committed() const { return committed_; }
  uint64_t peak() const { return peak_; }
  uint64_t reserved() const { return reserved_; }
  // Commitments refused (TryCommit returned false).
  uint64_t refused() const { return refused_; }

 private:
  uint64_t max_bytes_;
  uint64_t committed_ = 0;
  uint64_t peak_ = 0;
  uint64_t reserved_ = 0;
  uint64_t refused_ = 0;
  bool pressure_ = false;
};

}  // namespace braid::reorder

#endif  // BRAID_REORDER_REASSEMBLY_BUDGET_H_

// Preallocated output buffers for one burst: the core writes datagrams into
// fixed slots and lists them as backend::TxPackets. Reused across polls; no
// allocation after construction.
#ifndef BRAID_ENDPOINT_TX_BATCH_H_
#define BRAID_ENDPOINT_TX_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "backend/backend.h"

namespace braid::endpoint {

class TxBatch {
 public:
  TxBatch(size_t capacity, size_t slot_size)
      : slot_size_(slot_size), arena_(capacity * slot_size) {
    packets_.reserve(capacity);
  }
  size_t capacity() const { return arena_.size() / slot_size_; }
  size_t size() const { return packets_.size(); }
  bool full() const { return packets_.size() >= capacity(); }
  // The buffer for the next datagram.
  absl::Span<uint8_t> next_slot() {
    return absl::MakeSpan(arena_.data() + packets_.size() * slot_size_,
                          slot_size_);
  }
  // Commits the next slot as a datagram of `len` bytes.
  void Commit(const NetAddr& dst, wire::Entropy entropy, uint32_t len,
              bool ect) {
    backend::TxPacket p;
    p.dst = dst;
    p.entropy = entropy;
    p.ect = ect;
    p.data = arena_.data() + packets_.size() * slot_size_;
    p.len = len;
    packets_.push_back(p);
  }
  absl::Span<const backend::TxPacket> packets() const { return packets_; }
  // Mutable view, for reordering a burst before it goes out (e.g. grouping
  // by entropy; the order within one entropy must be kept).
  absl::Span<backend::TxPacket> mutable_packets() {
    return absl::MakeSpan(packets_);
  }
  void clear() { packets_.clear(); }

 private:
  size_t slot_size_;
  std::vector<uint8_t> arena_;
  std::vector<backend::TxPacket> packets_;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_TX_BATCH_H_

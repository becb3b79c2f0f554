// Preallocated output buffers for one burst: the core writes datagrams into
// fixed slots and lists them as backend::TxPackets. Reused across polls; no
// allocation after construction. A datagram may end in a second piece (the
// payload of its last data frame, straight from the message's buffer): such
// a batch is valid only until the messages it points into can complete —
// call Materialize before keeping packets across a Poll.
#ifndef BRAID_ENDPOINT_TX_BATCH_H_
#define BRAID_ENDPOINT_TX_BATCH_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "absl/types/span.h"
#include "backend/backend.h"

namespace braid::endpoint {

class TxBatch {
 public:
  TxBatch(size_t capacity, size_t slot_size)
      : capacity_(capacity),
        slot_size_(slot_size),
        // Zeroed by calloc, which takes fresh pages from the kernel for an
        // arena this size instead of writing zeros over them: pages a burst
        // never reaches are never touched (a simulated datacenter runs
        // thousands of these), and no byte of a datagram carries memory
        // the process used before.
        arena_(static_cast<uint8_t*>(
            std::calloc(std::max<size_t>(capacity * slot_size, 1), 1))) {
    if (arena_ == nullptr) throw std::bad_alloc();
    packets_.reserve(capacity);
  }
  size_t capacity() const { return capacity_; }
  size_t size() const { return packets_.size(); }
  // No room left, or closed: the batch should go out before more is built.
  bool full() const { return closed_ || packets_.size() >= capacity(); }
  size_t room() const { return capacity_ - packets_.size(); }
  // Bytes of one slot; each slot starts slot_size() bytes after the one
  // before it (a builder may write several slots ahead of its commits).
  size_t slot_size() const { return slot_size_; }
  // Ends the batch early (full() until clear()): a builder that would
  // otherwise split a run of same-path datagrams over two batches, which
  // the backend then sends as two shorter GSO super-datagrams.
  void Close() { closed_ = true; }
  // The buffer for the next datagram.
  absl::Span<uint8_t> next_slot() {
    return absl::MakeSpan(arena_.get() + packets_.size() * slot_size_,
                          slot_size_);
  }
  // Commits the next slot as a datagram of `len` bytes.
  // `tail`, if not empty, follows the slot's `len` bytes on the wire
  // (len + tail.size() <= slot size). `local`: the source address tag
  // (TxPacket::local; 0 = the backend's choice).
  // `run_follow`: TxPacket::run_follow (the datagrams committed next are
  // this one's siblings in one run). `hold`: TxPacket::hold, the hold of
  // the message `tail` points into (null unless the backend keeps tails).
  void Commit(const NetAddr& dst, wire::Entropy entropy, uint32_t len, bool ect,
              absl::Span<const uint8_t> tail = {}, uint8_t local = 0,
              uint8_t run_follow = 0, backend::TxHold* hold = nullptr) {
    // Built in place: a TxPacket assembled on the stack from narrow stores
    // and then copied with wide loads stalls store forwarding (measured:
    // a fifth of the sender's user time at 45 Gbit/s).
    uint8_t* slot = arena_.get() + packets_.size() * slot_size_;
    backend::TxPacket& p = packets_.emplace_back();
    p.dst = dst;
    p.entropy = entropy;
    p.ect = ect;
    p.data = slot;
    p.len = len;
    p.tail = tail.data();
    p.tail_len = static_cast<uint32_t>(tail.size());
    p.local = local;
    p.run_follow = run_follow;
    p.hold = hold;
  }
  // Copies the second pieces of packets [from, size()) into their slots, so
  // they no longer point into message buffers (e.g. datagrams the kernel
  // refused, kept for the next transmit while acks may complete messages).
  void Materialize(size_t from) {
    for (size_t i = from; i < packets_.size(); ++i) {
      backend::TxPacket& p = packets_[i];
      if (p.tail_len == 0) continue;
      // Slots are laid out in commit order, but a caller may have regrouped
      // packets_: find the slot from the data pointer.
      uint8_t* slot = const_cast<uint8_t*>(p.data);
      std::memcpy(slot + p.len, p.tail, p.tail_len);
      p.len += p.tail_len;
      p.tail = nullptr;
      p.tail_len = 0;
      p.hold = nullptr;
    }
  }
  absl::Span<const backend::TxPacket> packets() const { return packets_; }
  // Mutable view, for reordering a burst before it goes out (e.g. grouping
  // by entropy; the order within one entropy must be kept).
  absl::Span<backend::TxPacket> mutable_packets() {
    return absl::MakeSpan(packets_);
  }
  void clear() {
    packets_.clear();
    closed_ = false;
  }

 private:
  size_t capacity_;  // kept, not divided out of arena_ (full() is hot)
  size_t slot_size_;
  bool closed_ = false;
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> arena_;
  std::vector<backend::TxPacket> packets_;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_TX_BATCH_H_

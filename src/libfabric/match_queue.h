// Receive-side matching of the provider: posted receives waiting for a
// message, and unexpected messages waiting for a receive. Both are FIFOs;
// a message takes the oldest posted receive it matches, a receive the
// oldest unexpected message it matches (libfabric's and MPI's rule). Plain
// data, no locks, no libfabric calls: the endpoint owns two pairs (FI_MSG
// and FI_TAGGED) and drives them under the domain lock.
#ifndef BRAID_LIBFABRIC_MATCH_QUEUE_H_
#define BRAID_LIBFABRIC_MATCH_QUEUE_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "braid/address.h"
#include "libfabric/wire_header.h"

namespace braid::libfabric {

// What a receive accepts. src.valid() false: any source.
struct RecvSpec {
  NetAddr src;
  uint64_t tag = 0;
  uint64_t ignore = 0;  // tag bits that need not match
};

// True if a message from `peer` with `tag` satisfies `spec`: the tags agree
// on every bit not in spec.ignore, and spec.src is any or `peer`.
bool Matches(const RecvSpec& spec, const NetAddr& peer, uint64_t tag);

struct PostedRecv {
  RecvSpec spec;
  void* context = nullptr;
  absl::InlinedVector<iovec, 2> iov;
  uint64_t flags = 0;  // the operation's flags (FI_COMPLETION, ...)
  size_t capacity() const;
};

struct UnexpectedMsg {
  NetAddr peer;
  MsgHeader header;
  std::vector<uint8_t> data;  // the whole braid message, header included
  size_t payload_bytes() const { return data.size() - kHeaderBytes; }
};

// A FIFO that also erases from the middle (by shifting the tail); a ring
// that grows by doubling, so the steady state allocates nothing.
template <typename T>
class Fifo {
 public:
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  T& at(size_t i) { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  void push_back(T&& v) {
    if (count_ == ring_.size()) Grow();
    at(count_) = std::move(v);
    ++count_;
  }
  // Removes and returns element i (0 = oldest), keeping the others' order.
  T take(size_t i) {
    T out = std::move(at(i));
    if (i == 0) {
      head_ = (head_ + 1) & (ring_.size() - 1);
    } else {
      for (size_t j = i; j + 1 < count_; ++j) at(j) = std::move(at(j + 1));
    }
    --count_;
    return out;
  }

 private:
  void Grow() {
    std::vector<T> bigger(ring_.empty() ? 16 : ring_.size() * 2);
    for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(at(i));
    ring_ = std::move(bigger);
    head_ = 0;
  }
  std::vector<T> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
};

class PostedQueue {
 public:
  void Post(PostedRecv&& r) { q_.push_back(std::move(r)); }
  // Takes the oldest receive matching a message from `peer` with `tag`
  // into *out. False if none matches.
  bool TakeMatch(const NetAddr& peer, uint64_t tag, PostedRecv* out);
  // Takes the oldest receive posted with `context` into *out (fi_cancel).
  bool TakeByContext(void* context, PostedRecv* out);
  size_t size() const { return q_.size(); }

 private:
  Fifo<PostedRecv> q_;
};

class UnexpectedQueue {
 public:
  void Push(UnexpectedMsg&& m);
  // Takes the oldest message that `spec` matches into *out. False if none.
  bool TakeMatch(const RecvSpec& spec, UnexpectedMsg* out);
  // The oldest message `spec` matches, left in place; nullptr if none.
  const UnexpectedMsg* Peek(const RecvSpec& spec);
  size_t size() const { return q_.size(); }
  // Payload bytes held, over all messages.
  uint64_t bytes() const { return bytes_; }
  // Takes every message, oldest first (for closing the endpoint).
  std::vector<UnexpectedMsg> TakeAll();

 private:
  Fifo<UnexpectedMsg> q_;
  uint64_t bytes_ = 0;
};

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_MATCH_QUEUE_H_

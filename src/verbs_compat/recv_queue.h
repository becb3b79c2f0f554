// A queue of posted receive work requests: the receive queue of a QP or
// the shared receive queue of an SRQ. Fixed capacity (max_wr), no
// allocation after construction unless a WR has more SGEs than inline.
#ifndef BRAID_VERBS_COMPAT_RECV_QUEUE_H_
#define BRAID_VERBS_COMPAT_RECV_QUEUE_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace braid::verbs_compat {

struct RecvWqe {
  uint64_t wr_id = 0;
  absl::InlinedVector<ibv_sge, 4> sge;
  uint64_t total = 0;  // sum of SGE lengths
};

class RecvQueue {
 public:
  RecvQueue(uint32_t max_wr, uint32_t max_sge)
      : ring_(max_wr ? max_wr : 1), max_sge_(max_sge) {}

  // Appends a WR. Returns 0, ENOMEM (full) or EINVAL (too many SGEs).
  int Post(const ibv_recv_wr& wr);
  bool empty() const { return count_ == 0; }
  uint32_t size() const { return count_; }
  uint32_t capacity() const { return static_cast<uint32_t>(ring_.size()); }
  uint32_t max_sge() const { return max_sge_; }
  RecvWqe& front() { return ring_[head_]; }
  void pop() {
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  // Grows the capacity (ibv_modify_srq with IBV_SRQ_MAX_WR).
  void Resize(uint32_t max_wr);

 private:
  std::vector<RecvWqe> ring_;
  uint32_t max_sge_;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_RECV_QUEUE_H_

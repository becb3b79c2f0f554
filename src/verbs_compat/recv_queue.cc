#include "verbs_compat/recv_queue.h"

#include <cerrno>

namespace braid::verbs_compat {

int RecvQueue::Post(const ibv_recv_wr& wr) {
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > max_sge_) {
    return EINVAL;
  }
  if (count_ == ring_.size()) return ENOMEM;
  RecvWqe& w = ring_[(head_ + count_) % ring_.size()];
  w.wr_id = wr.wr_id;
  w.sge.assign(wr.sg_list, wr.sg_list + wr.num_sge);
  w.total = 0;
  for (int i = 0; i < wr.num_sge; ++i) w.total += wr.sg_list[i].length;
  ++count_;
  return 0;
}

void RecvQueue::Resize(uint32_t max_wr) {
  if (max_wr <= ring_.size()) return;
  std::vector<RecvWqe> bigger(max_wr);
  for (uint32_t i = 0; i < count_; ++i) {
    bigger[i] = std::move(ring_[(head_ + i) % ring_.size()]);
  }
  ring_.swap(bigger);
  head_ = 0;
}

}  // namespace braid::verbs_compat

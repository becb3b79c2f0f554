// Shared receive queues of braid0.
#ifndef BRAID_VERBS_COMPAT_SRQ_H_
#define BRAID_VERBS_COMPAT_SRQ_H_

#include <infiniband/verbs.h>

#include "verbs_compat/recv_queue.h"
#include "verbs_compat/shell.h"

namespace braid::verbs_compat {

class Context;
class Pd;

class Srq {
 public:
  Srq(Context* ctx, Pd* pd, const ibv_srq_attr& attr, void* srq_context);
  ibv_srq* ibv() { return &shell_.ibv; }
  static Srq* From(const ibv_srq* p) { return Shell<ibv_srq, Srq>::OwnerOf(p); }
  Pd* pd() const { return pd_; }
  RecvQueue& queue() { return queue_; }
  // srq_limit armed by ibv_modify_srq (IBV_SRQ_LIMIT); 0 = disarmed. When
  // the queue drops below it an IBV_EVENT_SRQ_LIMIT_REACHED is raised.
  uint32_t limit = 0;
  int users = 0;  // QPs attached (destroy fails with EBUSY)

 private:
  Shell<ibv_srq, Srq> shell_;
  Pd* pd_;
  RecvQueue queue_;
};

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_SRQ_H_

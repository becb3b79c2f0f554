#include "verbs_compat/srq.h"

#include <cstring>

#include "verbs_compat/context.h"
#include "verbs_compat/pd_mr.h"

namespace braid::verbs_compat {

Srq::Srq(Context* ctx, Pd* pd, const ibv_srq_attr& attr, void* srq_context)
    : pd_(pd), queue_(attr.max_wr, attr.max_sge) {
  std::memset(&shell_.ibv, 0, sizeof(shell_.ibv));
  shell_.ibv.context = ctx->ibv();
  shell_.ibv.srq_context = srq_context;
  shell_.ibv.pd = pd->ibv();
  shell_.ibv.handle = ctx->NextHandle();
  pthread_mutex_init(&shell_.ibv.mutex, nullptr);
  pthread_cond_init(&shell_.ibv.cond, nullptr);
  shell_.owner = this;
  limit = attr.srq_limit;
}

}  // namespace braid::verbs_compat

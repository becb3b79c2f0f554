// Exported libibverbs entry points for verbs objects (PD, MR, CQ and
// completion channel, SRQ, QP, AH). Objects of braid0 are served here;
// every other call goes to the real libibverbs.
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "verbs_compat/ah.h"
#include "verbs_compat/context.h"
#include "verbs_compat/cq.h"
#include "verbs_compat/gid.h"
#include "verbs_compat/limits.h"
#include "verbs_compat/ops.h"
#include "verbs_compat/pd_mr.h"
#include "verbs_compat/qp.h"
#include "verbs_compat/real_verbs.h"
#include "verbs_compat/shell.h"
#include "verbs_compat/srq.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

namespace bvc = braid::verbs_compat;
using bvc::Ah;
using bvc::CompChannel;
using bvc::Context;
using bvc::Cq;
using bvc::IsBraidContext;
using bvc::Mr;
using bvc::Pd;
using bvc::Qp;
using bvc::Srq;

namespace braid::verbs_compat {

ibv_qp* CreateQp(ibv_context* ibctx, ibv_qp_init_attr_ex* attr) {
  if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == nullptr ||
      attr->pd->context != ibctx) {
    errno = EINVAL;
    return nullptr;
  }
  Context* ctx = Context::From(ibctx);
  std::lock_guard<std::mutex> lk(ctx->mu());
  const int err = Qp::CheckCreate(ctx, attr);
  if (err != 0) {
    errno = err;
    return nullptr;
  }
  auto* qp = new Qp(ctx, Pd::From(attr->pd), *attr, ctx->AllocQpn());
  ctx->RegisterQp(qp);
  FillQpExOps(qp->ibv_ex());
  return qp->ibv();
}

ibv_cq_ex* CreateCqEx(ibv_context* ibctx, ibv_cq_init_attr_ex* attr) {
  if (attr->cqe < 1 || attr->cqe > kMaxCqe ||
      (attr->comp_mask & ~IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
      (attr->channel != nullptr && attr->channel->context != ibctx)) {
    errno = EINVAL;
    return nullptr;
  }
  const uint64_t supported = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
                             IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
                             IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
                             IBV_WC_EX_WITH_DLID_PATH_BITS |
                             IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
  if (attr->wc_flags & ~supported) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  Context* ctx = Context::From(ibctx);
  std::lock_guard<std::mutex> lk(ctx->mu());
  CompChannel* ch = attr->channel ? CompChannel::From(attr->channel) : nullptr;
  auto* cq = new Cq(ctx, attr->cqe, attr->cq_context, ch, attr->comp_vector);
  if (ch != nullptr) ++ch->cqs;
  FillCqExOps(cq->ibv_ex());
  return cq->ibv_ex();
}

}  // namespace braid::verbs_compat

namespace {

ibv_mr* RegMr(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
              unsigned int access) {
  const int a = static_cast<int>(access) & ~IBV_ACCESS_OPTIONAL_RANGE;
  if ((a & ~bvc::kSupportedAccess) ||
      ((a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
       !(a & IBV_ACCESS_LOCAL_WRITE)) ||
      (addr == nullptr && length > 0)) {
    errno = EINVAL;
    return nullptr;
  }
  Context* ctx = Context::From(pd->context);
  std::lock_guard<std::mutex> lk(ctx->mu());
  Pd* p = Pd::From(pd);
  absl::StatusOr<uint32_t> key = ctx->mrs().NewKey();
  if (!key.ok()) {
    errno = ENOMEM;  // what a device reports when it has no key to give
    return nullptr;
  }
  auto* mr = new Mr(p, addr, length, iova, a, *key);
  ctx->mrs().Add(mr);
  ++p->users;
  return mr->ibv();
}

}  // namespace

extern "C" {

ibv_pd* ibv_alloc_pd(ibv_context* context) {
  if (IsBraidContext(context)) {
    Context* ctx = Context::From(context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    return (new Pd(ctx))->ibv();
  }
  BRAID_REAL(ibv_alloc_pd, "IBVERBS_1.1");
  return real ? real(context) : nullptr;
}

int ibv_dealloc_pd(ibv_pd* pd) {
  if (IsBraidContext(pd->context)) {
    Context* ctx = Context::From(pd->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    Pd* p = Pd::From(pd);
    if (p->users != 0) return EBUSY;
    delete p;
    return 0;
  }
  BRAID_REAL(ibv_dealloc_pd, "IBVERBS_1.1");
  return real ? real(pd) : ENOSYS;
}

ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  if (IsBraidContext(pd->context)) {
    return RegMr(pd, addr, length, reinterpret_cast<uintptr_t>(addr),
                 static_cast<unsigned>(access));
  }
  BRAID_REAL(ibv_reg_mr, "IBVERBS_1.1");
  return real ? real(pd, addr, length, access) : nullptr;
}

ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                        int access) {
  if (IsBraidContext(pd->context)) {
    return RegMr(pd, addr, length, iova, static_cast<unsigned>(access));
  }
  BRAID_REAL(ibv_reg_mr_iova, "IBVERBS_1.7");
  return real ? real(pd, addr, length, iova, access) : nullptr;
}

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                         unsigned int access) {
  if (IsBraidContext(pd->context)) {
    return RegMr(pd, addr, length, iova, access);
  }
  BRAID_REAL(ibv_reg_mr_iova2, "IBVERBS_1.8");
  return real ? real(pd, addr, length, iova, access) : nullptr;
}

ibv_mr* ibv_reg_dmabuf_mr(ibv_pd* pd, uint64_t offset, size_t length,
                          uint64_t iova, int fd, int access) {
  if (IsBraidContext(pd->context)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  BRAID_REAL(ibv_reg_dmabuf_mr, "IBVERBS_1.12");
  return real ? real(pd, offset, length, iova, fd, access) : nullptr;
}

int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, size_t length,
                 int access) {
  if (IsBraidContext(mr->context)) {
    errno = EOPNOTSUPP;
    return IBV_REREG_MR_ERR_INPUT;
  }
  BRAID_REAL(ibv_rereg_mr, "IBVERBS_1.1");
  return real ? real(mr, flags, pd, addr, length, access)
              : IBV_REREG_MR_ERR_INPUT;
}

int ibv_dereg_mr(ibv_mr* mr) {
  if (IsBraidContext(mr->context)) {
    Context* ctx = Context::From(mr->context);
    std::unique_lock<std::mutex> lk(ctx->mu());
    // The memory may be freed next: the endpoint must not still be sending
    // from it (zero-copy sends end with a completion or a failure within
    // the endpoint's peer timeout).
    ctx->DrainZeroCopy(lk, braid::verbs_compat::kZeroCopyDrainLimit);
    Mr* m = Mr::From(mr);
    ctx->mrs().Remove(m->key());
    --m->pd()->users;
    delete m;
    return 0;
  }
  BRAID_REAL(ibv_dereg_mr, "IBVERBS_1.1");
  return real ? real(mr) : ENOSYS;
}

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  if (IsBraidContext(context)) {
    Context* ctx = Context::From(context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    auto* ch = new CompChannel(ctx);
    if (!ch->ok()) {
      delete ch;
      errno = EMFILE;
      return nullptr;
    }
    return ch->ibv();
  }
  BRAID_REAL(ibv_create_comp_channel, "IBVERBS_1.0");
  return real ? real(context) : nullptr;
}

int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  if (IsBraidContext(channel->context)) {
    Context* ctx = Context::From(channel->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    CompChannel* ch = CompChannel::From(channel);
    if (ch->cqs != 0) {
      errno = EBUSY;
      return -1;
    }
    delete ch;
    return 0;
  }
  BRAID_REAL(ibv_destroy_comp_channel, "IBVERBS_1.0");
  return real ? real(channel) : -1;
}

ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context,
                      ibv_comp_channel* channel, int comp_vector) {
  if (IsBraidContext(context)) {
    ibv_cq_init_attr_ex a;
    std::memset(&a, 0, sizeof(a));
    a.cqe = static_cast<uint32_t>(cqe < 0 ? 0 : cqe);
    a.cq_context = cq_context;
    a.channel = channel;
    a.comp_vector = static_cast<uint32_t>(comp_vector);
    ibv_cq_ex* cq = bvc::CreateCqEx(context, &a);
    return cq ? ibv_cq_ex_to_cq(cq) : nullptr;
  }
  BRAID_REAL(ibv_create_cq, "IBVERBS_1.1");
  return real ? real(context, cqe, cq_context, channel, comp_vector) : nullptr;
}

int ibv_resize_cq(ibv_cq* cq, int cqe) {
  if (IsBraidContext(cq->context)) {
    if (cqe < 1 || static_cast<uint32_t>(cqe) > bvc::kMaxCqe) return EINVAL;
    Context* ctx = Context::From(cq->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    Cq* c = Cq::From(cq);
    if (c->size() > static_cast<size_t>(cqe)) return EINVAL;
    c->set_capacity(cqe);
    return 0;
  }
  BRAID_REAL(ibv_resize_cq, "IBVERBS_1.1");
  return real ? real(cq, cqe) : ENOSYS;
}

int ibv_destroy_cq(ibv_cq* cq) {
  if (IsBraidContext(cq->context)) {
    Context* ctx = Context::From(cq->context);
    std::unique_lock<std::mutex> lk(ctx->mu());
    Cq* c = Cq::From(cq);
    if (c->users != 0) return EBUSY;
    if (c->channel() != nullptr) {
      c->channel()->Forget(c);
      --c->channel()->cqs;
    }
    ctx->ForgetCq(c);
    // Its events the application took must be acked first (libibverbs).
    const uint32_t reported = ctx->async().Forget(cq);
    if (reported != 0) {
      lk.unlock();
      bvc::WaitAsyncAcks(&cq->mutex, &cq->cond, &cq->async_events_completed,
                         reported);
      lk.lock();
    }
    delete c;
    return 0;
  }
  BRAID_REAL(ibv_destroy_cq, "IBVERBS_1.1");
  return real ? real(cq) : ENOSYS;
}

int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq,
                     void** cq_context) {
  if (IsBraidContext(channel->context)) {
    Context* ctx = Context::From(channel->context);
    ctx->driver().NoteAppBlocked();
    // A blocking channel: wait here, driving progress (one wake-up per
    // event instead of the progress thread's and then this one's). A
    // non-blocking one: EAGAIN if no event is raised yet. The fd's count
    // is read only under the lock and only for a queued event (Take), so
    // an ibv_destroy_cq consuming its CQ's counts meanwhile cannot leave
    // this read, or its own, blocked on an empty count.
    const int fl = fcntl(channel->fd, F_GETFL);
    const bool blocking = fl >= 0 && !(fl & O_NONBLOCK);
    for (;;) {
      if (blocking && !ctx->driver().WaitReadableDrivingProgress(channel->fd)) {
        return -1;
      }
      std::lock_guard<std::mutex> lk(ctx->mu());
      Cq* c = CompChannel::From(channel)->Take();
      if (c != nullptr) {
        *cq = c->ibv();
        *cq_context = c->ibv()->cq_context;
        return 0;
      }
      if (!blocking) {
        errno = EAGAIN;
        return -1;
      }
      // Another thread took it (or its CQ was destroyed): wait again.
    }
  }
  BRAID_REAL(ibv_get_cq_event, "IBVERBS_1.1");
  return real ? real(channel, cq, cq_context) : -1;
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  if (IsBraidContext(cq->context)) {
    pthread_mutex_lock(&cq->mutex);
    cq->comp_events_completed += nevents;
    pthread_cond_signal(&cq->cond);
    pthread_mutex_unlock(&cq->mutex);
    return;
  }
  BRAID_REAL(ibv_ack_cq_events, "IBVERBS_1.1");
  if (real) real(cq, nevents);
}

ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) {
  if (IsBraidContext(pd->context)) {
    ibv_srq_attr& a = attr->attr;
    if (a.max_wr < 1 || a.max_wr > bvc::kMaxSrqWr ||
        a.max_sge > bvc::kMaxSrqSge || a.srq_limit > a.max_wr) {
      errno = EINVAL;
      return nullptr;
    }
    if (a.max_sge == 0) a.max_sge = 1;
    Context* ctx = Context::From(pd->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    Pd* p = Pd::From(pd);
    auto* srq = new Srq(ctx, p, a, attr->srq_context);
    ++p->users;
    return srq->ibv();
  }
  BRAID_REAL(ibv_create_srq, "IBVERBS_1.1");
  return real ? real(pd, attr) : nullptr;
}

int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
  if (IsBraidContext(srq->context)) {
    Context* ctx = Context::From(srq->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    Srq* s = Srq::From(srq);
    if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) return EINVAL;
    if (mask & IBV_SRQ_MAX_WR) {
      if (attr->max_wr < s->queue().size() || attr->max_wr > bvc::kMaxSrqWr) {
        return EINVAL;
      }
      s->queue().Resize(attr->max_wr);
    }
    if (mask & IBV_SRQ_LIMIT) {
      if (attr->srq_limit > s->queue().capacity()) return EINVAL;
      s->limit = attr->srq_limit;
    }
    return 0;
  }
  BRAID_REAL(ibv_modify_srq, "IBVERBS_1.1");
  return real ? real(srq, attr, mask) : ENOSYS;
}

int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  if (IsBraidContext(srq->context)) {
    Context* ctx = Context::From(srq->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    Srq* s = Srq::From(srq);
    attr->max_wr = s->queue().capacity();
    attr->max_sge = s->queue().max_sge();
    attr->srq_limit = s->limit;
    return 0;
  }
  BRAID_REAL(ibv_query_srq, "IBVERBS_1.1");
  return real ? real(srq, attr) : ENOSYS;
}

int ibv_destroy_srq(ibv_srq* srq) {
  if (IsBraidContext(srq->context)) {
    Context* ctx = Context::From(srq->context);
    std::unique_lock<std::mutex> lk(ctx->mu());
    Srq* s = Srq::From(srq);
    if (s->users != 0) return EBUSY;
    // Its events the application took must be acked first (libibverbs).
    const uint32_t reported = ctx->async().Forget(srq);
    if (reported != 0) {
      lk.unlock();
      bvc::WaitAsyncAcks(&srq->mutex, &srq->cond, &srq->events_completed,
                         reported);
      lk.lock();
    }
    --s->pd()->users;
    delete s;
    return 0;
  }
  BRAID_REAL(ibv_destroy_srq, "IBVERBS_1.1");
  return real ? real(srq) : ENOSYS;
}

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  if (IsBraidContext(pd->context)) {
    ibv_qp_init_attr_ex a;
    std::memset(&a, 0, sizeof(a));
    a.qp_context = attr->qp_context;
    a.send_cq = attr->send_cq;
    a.recv_cq = attr->recv_cq;
    a.srq = attr->srq;
    a.cap = attr->cap;
    a.qp_type = attr->qp_type;
    a.sq_sig_all = attr->sq_sig_all;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd;
    ibv_qp* qp = bvc::CreateQp(pd->context, &a);
    if (qp != nullptr) attr->cap = a.cap;
    return qp;
  }
  BRAID_REAL(ibv_create_qp, "IBVERBS_1.1");
  return real ? real(pd, attr) : nullptr;
}

int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask,
                 ibv_qp_init_attr* init_attr) {
  if (IsBraidContext(qp->context)) {
    Context* ctx = Context::From(qp->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    return Qp::From(qp)->Query(attr, attr_mask, init_attr);
  }
  BRAID_REAL(ibv_query_qp, "IBVERBS_1.1");
  return real ? real(qp, attr, attr_mask, init_attr) : ENOSYS;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
  if (IsBraidContext(qp->context)) {
    Context* ctx = Context::From(qp->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    return Qp::From(qp)->Modify(*attr, attr_mask);
  }
  BRAID_REAL(ibv_modify_qp, "IBVERBS_1.1");
  return real ? real(qp, attr, attr_mask) : ENOSYS;
}

int ibv_destroy_qp(ibv_qp* qp) {
  if (IsBraidContext(qp->context)) {
    Context* ctx = Context::From(qp->context);
    std::unique_lock<std::mutex> lk(ctx->mu());
    ctx->DrainZeroCopy(
        lk, braid::verbs_compat::kZeroCopyDrainLimit);  // as in ibv_dereg_mr
    Qp* q = Qp::From(qp);
    q->FlushAck();
    ctx->UnregisterQp(q);  // no message reaches it (nor raises events) now
    // Its events the application took must be acked first (libibverbs).
    const uint32_t reported = ctx->async().Forget(qp);
    if (reported != 0) {
      lk.unlock();
      bvc::WaitAsyncAcks(&qp->mutex, &qp->cond, &qp->events_completed,
                         reported);
      lk.lock();
    }
    delete q;
    return 0;
  }
  BRAID_REAL(ibv_destroy_qp, "IBVERBS_1.1");
  return real ? real(qp) : ENOSYS;
}

ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
  if (IsBraidContext(qp->context)) return Qp::From(qp)->ibv_ex();
  BRAID_REAL(ibv_qp_to_qp_ex, "IBVERBS_1.6");
  return real ? real(qp) : nullptr;
}

int ibv_query_qp_data_in_order(ibv_qp* qp, ibv_wr_opcode op, uint32_t flags) {
  if (IsBraidContext(qp->context)) return 0;
  BRAID_REAL(ibv_query_qp_data_in_order, "IBVERBS_1.14");
  return real ? real(qp, op, flags) : 0;
}

int ibv_query_ece(ibv_qp* qp, ibv_ece* ece) {
  if (IsBraidContext(qp->context)) return EOPNOTSUPP;
  BRAID_REAL(ibv_query_ece, "IBVERBS_1.10");
  return real ? real(qp, ece) : EOPNOTSUPP;
}

int ibv_set_ece(ibv_qp* qp, ibv_ece* ece) {
  if (IsBraidContext(qp->context)) return EOPNOTSUPP;
  BRAID_REAL(ibv_set_ece, "IBVERBS_1.10");
  return real ? real(qp, ece) : EOPNOTSUPP;
}

ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  if (IsBraidContext(pd->context)) {
    Context* ctx = Context::From(pd->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    std::optional<braid::NetAddr> dest = bvc::ResolveAh(*attr, ctx->local());
    if (!dest.has_value() || attr->port_num > 1) {
      errno = EINVAL;
      return nullptr;
    }
    ++Pd::From(pd)->users;
    return (new Ah(pd, ctx->NextHandle(), *attr, *dest))->ibv();
  }
  BRAID_REAL(ibv_create_ah, "IBVERBS_1.1");
  return real ? real(pd, attr) : nullptr;
}

int ibv_destroy_ah(ibv_ah* ah) {
  if (IsBraidContext(ah->context)) {
    Context* ctx = Context::From(ah->context);
    std::lock_guard<std::mutex> lk(ctx->mu());
    --Pd::From(ah->pd)->users;
    delete Ah::From(ah);
    return 0;
  }
  BRAID_REAL(ibv_destroy_ah, "IBVERBS_1.1");
  return real ? real(ah) : ENOSYS;
}

int ibv_init_ah_from_wc(ibv_context* context, uint8_t port_num, ibv_wc* wc,
                        ibv_grh* grh, ibv_ah_attr* ah_attr) {
  if (IsBraidContext(context)) {
    std::memset(ah_attr, 0, sizeof(*ah_attr));
    ah_attr->dlid = static_cast<uint16_t>(wc->slid);
    ah_attr->sl = wc->sl;
    ah_attr->src_path_bits = wc->dlid_path_bits;
    ah_attr->port_num = port_num;
    if (wc->wc_flags & IBV_WC_GRH) {
      ah_attr->is_global = 1;
      ah_attr->grh.dgid = grh->sgid;
      ah_attr->grh.sgid_index = 0;
      ah_attr->grh.hop_limit = 0xff;
    }
    return 0;
  }
  BRAID_REAL(ibv_init_ah_from_wc, "IBVERBS_1.1");
  return real ? real(context, port_num, wc, grh, ah_attr) : ENOSYS;
}

ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh,
                              uint8_t port_num) {
  if (IsBraidContext(pd->context)) {
    ibv_ah_attr a;
    if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a) != 0) {
      return nullptr;
    }
    return ibv_create_ah(pd, &a);
  }
  BRAID_REAL(ibv_create_ah_from_wc, "IBVERBS_1.1");
  return real ? real(pd, wc, grh, port_num) : nullptr;
}

int ibv_attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) {
  if (IsBraidContext(qp->context)) return EOPNOTSUPP;
  BRAID_REAL(ibv_attach_mcast, "IBVERBS_1.1");
  return real ? real(qp, gid, lid) : ENOSYS;
}

int ibv_detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) {
  if (IsBraidContext(qp->context)) return EOPNOTSUPP;
  BRAID_REAL(ibv_detach_mcast, "IBVERBS_1.1");
  return real ? real(qp, gid, lid) : ENOSYS;
}

}  // extern "C"

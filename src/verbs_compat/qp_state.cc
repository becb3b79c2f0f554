// Qp: creation, ibv_modify_qp (state machine and attribute checks),
// ibv_query_qp, and the error / reset transitions.
#include <cerrno>
#include <cstring>

#include "verbs_compat/context.h"
#include "verbs_compat/cq.h"
#include "verbs_compat/gid.h"
#include "verbs_compat/limits.h"
#include "verbs_compat/pd_mr.h"
#include "verbs_compat/qp.h"
#include "verbs_compat/qp_state_table.h"
#include "verbs_compat/srq.h"

namespace braid::verbs_compat {

DurationNs RnrDelay(uint8_t code) {
  // IB spec table 45 (RNR NAK timer field), in units of 10 us.
  static constexpr uint32_t kTensOfMicros[32] = {
      65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,   32,
      48,    64,   96,   128,  192,  256,   384,   512,   768,   1024, 1536,
      2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
  return DurationNs::Micros(int64_t{kTensOfMicros[code & 31]} * 10);
}

int Qp::CheckCreate(Context* ctx, ibv_qp_init_attr_ex* a) {
  if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC &&
      a->qp_type != IBV_QPT_UD) {
    return EOPNOTSUPP;
  }
  if (a->send_cq == nullptr || a->recv_cq == nullptr) return EINVAL;
  if (a->send_cq->context != ctx->ibv() || a->recv_cq->context != ctx->ibv()) {
    return EINVAL;
  }
  if (a->srq != nullptr && a->srq->context != ctx->ibv()) return EINVAL;
  ibv_qp_cap& c = a->cap;
  if (c.max_send_wr > kMaxQpWr || c.max_send_sge > kMaxSge ||
      c.max_inline_data > kMaxInline) {
    return EINVAL;
  }
  if (a->srq == nullptr &&
      (c.max_recv_wr > kMaxQpWr || c.max_recv_sge > kMaxSge)) {
    return EINVAL;
  }
  const uint64_t supported_ops =
      IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
      IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
      IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
  const uint64_t uc_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                          IBV_QP_EX_WITH_RDMA_WRITE |
                          IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
  if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
      (a->send_ops_flags &
       ~(a->qp_type == IBV_QPT_UC ? uc_ops : supported_ops))) {
    return EOPNOTSUPP;
  }
  const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  if (a->comp_mask & ~known) return EOPNOTSUPP;
  // Report what we grant: at least what was asked, never zero depth.
  if (c.max_send_wr == 0) c.max_send_wr = 1;
  if (c.max_send_sge == 0) c.max_send_sge = 1;
  if (a->srq != nullptr) {
    c.max_recv_wr = 0;
    c.max_recv_sge = 0;
  } else {
    if (c.max_recv_wr == 0) c.max_recv_wr = 1;
    if (c.max_recv_sge == 0) c.max_recv_sge = 1;
  }
  return 0;
}

Qp::Qp(Context* ctx, Pd* pd, const ibv_qp_init_attr_ex& a, uint32_t qpn)
    : ctx_(ctx),
      pd_(pd),
      send_cq_(Cq::From(a.send_cq)),
      recv_cq_(Cq::From(a.recv_cq)),
      srq_(a.srq ? Srq::From(a.srq) : nullptr),
      type_(a.qp_type),
      qpn_(qpn),
      sq_sig_all_(a.sq_sig_all != 0),
      cap_(a.cap),
      stream_(static_cast<uint16_t>(qpn & 0xffff)
                  ? static_cast<uint16_t>(qpn & 0xffff)
                  : 1),
      sq_(a.cap.max_send_wr),
      rq_(a.cap.max_recv_wr, a.cap.max_recv_sge) {
  std::memset(&shell_.ibv, 0, sizeof(shell_.ibv));
  ibv_qp& q = shell_.ibv.qp_base;
  q.context = ctx->ibv();
  q.qp_context = a.qp_context;
  q.pd = pd->ibv();
  q.send_cq = a.send_cq;
  q.recv_cq = a.recv_cq;
  q.srq = a.srq;
  q.handle = ctx->NextHandle();
  q.qp_num = qpn;
  q.state = IBV_QPS_RESET;
  q.qp_type = a.qp_type;
  pthread_mutex_init(&q.mutex, nullptr);
  pthread_cond_init(&q.cond, nullptr);
  shell_.owner = this;
  for (SendWqe& w : sq_) w.inline_data.reserve(cap_.max_inline_data);
  ++pd_->users;
  ++send_cq_->users;
  ++recv_cq_->users;
  if (srq_ != nullptr) ++srq_->users;
}

Qp::~Qp() {
  --pd_->users;
  --send_cq_->users;
  --recv_cq_->users;
  if (srq_ != nullptr) --srq_->users;
}

void Qp::ResetQueues() {
  sq_head_ = sq_ack_ = sq_send_ = sq_tail_ = 0;
  while (!rq_.empty()) rq_.pop();
  rnr_until_ = TimeNs::Zero();
}

int Qp::Modify(const ibv_qp_attr& a, int mask) {
  if (!ModifyIsAllowed(type_, state_, a.qp_state, mask)) return EINVAL;
  if ((mask & IBV_QP_CUR_STATE) && a.cur_qp_state != state_) return EINVAL;
  const ibv_qp_state next = (mask & IBV_QP_STATE) ? a.qp_state : state_;
  // Attribute values.
  if ((mask & IBV_QP_PORT) && a.port_num != 1) return EINVAL;
  if ((mask & IBV_QP_PKEY_INDEX) && a.pkey_index != 0) return EINVAL;
  if ((mask & IBV_QP_PATH_MTU) &&
      (a.path_mtu < IBV_MTU_256 || a.path_mtu > IBV_MTU_4096)) {
    return EINVAL;
  }
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a.max_rd_atomic > kMaxRdAtom) {
    return EINVAL;
  }
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a.max_dest_rd_atomic > kMaxRdAtom) {
    return EINVAL;
  }
  if ((mask & IBV_QP_TIMEOUT) && a.timeout > 31) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) && a.retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) && a.rnr_retry > 7) return EINVAL;
  if ((mask & IBV_QP_MIN_RNR_TIMER) && a.min_rnr_timer > 31) return EINVAL;
  if ((mask & IBV_QP_ACCESS_FLAGS) &&
      (a.qp_access_flags &
       ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
         IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC))) {
    return EINVAL;
  }
  if ((mask & IBV_QP_DEST_QPN) && a.dest_qp_num > kPsnMask) return EINVAL;
  NetAddr remote = remote_;
  if (mask & IBV_QP_AV) {
    std::optional<NetAddr> r = ResolveAh(a.ah_attr, ctx_->local());
    if (!r.has_value()) return EINVAL;
    remote = *r;
  }

  // Commit.
  if (mask & IBV_QP_PORT) attr_.port_num = a.port_num;
  if (mask & IBV_QP_PKEY_INDEX) attr_.pkey_index = a.pkey_index;
  if (mask & IBV_QP_ACCESS_FLAGS) attr_.qp_access_flags = a.qp_access_flags;
  if (mask & IBV_QP_QKEY) attr_.qkey = a.qkey;
  if (mask & IBV_QP_AV) {
    attr_.ah_attr = a.ah_attr;
    remote_ = remote;
  }
  if (mask & IBV_QP_PATH_MTU) attr_.path_mtu = a.path_mtu;
  if (mask & IBV_QP_DEST_QPN) attr_.dest_qp_num = a.dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) attr_.rq_psn = a.rq_psn & kPsnMask;
  if (mask & IBV_QP_SQ_PSN) attr_.sq_psn = a.sq_psn & kPsnMask;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) {
    attr_.max_dest_rd_atomic = a.max_dest_rd_atomic;
  }
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) attr_.max_rd_atomic = a.max_rd_atomic;
  if (mask & IBV_QP_MIN_RNR_TIMER) attr_.min_rnr_timer = a.min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) attr_.timeout = a.timeout;
  if (mask & IBV_QP_RETRY_CNT) attr_.retry_cnt = a.retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) attr_.rnr_retry = a.rnr_retry;
  if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) {
    attr_.en_sqd_async_notify = a.en_sqd_async_notify;
  }

  const ibv_qp_state prev = state_;
  if (next == IBV_QPS_ERR && prev != IBV_QPS_ERR) {
    EnterError(QpErrorEvent::kNone);
  } else if (next == IBV_QPS_RESET) {
    state_ = IBV_QPS_RESET;
    ResetQueues();
  } else {
    state_ = next;
  }
  if (prev == IBV_QPS_INIT && next == IBV_QPS_RTR) {
    expected_psn_ = attr_.rq_psn;
    last_ack_sent_ = LastProcessedPsn();
    ctx_->driver().EnsureThread();
  }
  if (prev == IBV_QPS_RTR && next == IBV_QPS_RTS) {
    next_psn_ = attr_.sq_psn;
  }
  if (next == IBV_QPS_RTS && prev == IBV_QPS_SQD) ctx_->NeedPump(this);
  if (next == IBV_QPS_SQD && (attr_.en_sqd_async_notify != 0) &&
      sq_send_ == sq_tail_) {
    ibv_async_event ev{};
    ev.element.qp = ibv();
    ev.event_type = IBV_EVENT_SQ_DRAINED;
    ctx_->async().Raise(ev);
  }
  shell_.ibv.qp_base.state = state_;
  return 0;
}

int Qp::Query(ibv_qp_attr* a, int /*mask*/, ibv_qp_init_attr* init) const {
  *a = attr_;
  a->qp_state = state_;
  a->cur_qp_state = state_;
  a->cap = cap_;
  a->sq_draining = 0;
  a->sq_psn = next_psn_;
  if (init != nullptr) {
    std::memset(init, 0, sizeof(*init));
    init->qp_context = shell_.ibv.qp_base.qp_context;
    init->send_cq = shell_.ibv.qp_base.send_cq;
    init->recv_cq = shell_.ibv.qp_base.recv_cq;
    init->srq = shell_.ibv.qp_base.srq;
    init->cap = cap_;
    init->qp_type = type_;
    init->sq_sig_all = sq_sig_all_ ? 1 : 0;
  }
  return 0;
}

void Qp::FailWqe(SendWqe& w, WcCause cause, FailureCause transport) {
  w.done = true;
  w.status = WcStatus(cause, transport);
}

void Qp::EnterError(QpErrorEvent event) {
  const bool was_error = state_ == IBV_QPS_ERR;
  state_ = IBV_QPS_ERR;
  shell_.ibv.qp_base.state = IBV_QPS_ERR;
  // Every WR not yet completed is flushed, in order, after any that
  // already carry a status.
  for (uint64_t i = sq_head_; i < sq_tail_; ++i) {
    SendWqe& w = Wqe(i);
    if (!w.done) FailWqe(w, WcCause::kFlushed);
  }
  sq_ack_ = sq_send_ = sq_tail_;
  CompleteSendHead();
  if (srq_ == nullptr) {
    while (!rq_.empty()) {
      CompleteRecv(rq_.front(), WcCause::kFlushed, IBV_WC_RECV, 0, false, 0, 0,
                   0, false, false);
      rq_.pop();
    }
  }
  if (was_error) return;
  ibv_async_event ev{};
  ev.element.qp = ibv();
  switch (event) {
    case QpErrorEvent::kNone:
      break;
    case QpErrorEvent::kFatal:
      ev.event_type = IBV_EVENT_QP_FATAL;
      ctx_->async().Raise(ev);
      break;
    case QpErrorEvent::kReqErr:
      ev.event_type = IBV_EVENT_QP_REQ_ERR;
      ctx_->async().Raise(ev);
      break;
  }
  // With an SRQ the QP consumes no more receive WRs from here on: the
  // application may now destroy it without losing one.
  if (srq_ != nullptr) {
    ev.event_type = IBV_EVENT_QP_LAST_WQE_REACHED;
    ctx_->async().Raise(ev);
  }
}

}  // namespace braid::verbs_compat

// Qp: ibv_post_send / ibv_post_recv, the transmit pump, in-order send
// completion, receive completion and scatter/gather shared by RC and UD.
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "verbs_compat/ah.h"
#include "verbs_compat/context.h"
#include "verbs_compat/cq.h"
#include "verbs_compat/limits.h"
#include "verbs_compat/pd_mr.h"
#include "verbs_compat/qp.h"
#include "verbs_compat/srq.h"

namespace braid::verbs_compat {
namespace {

bool OpcodeAllowed(ibv_qp_type type, ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
      return true;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return type == IBV_QPT_RC || type == IBV_QPT_UC;
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return type == IBV_QPT_RC;
    default:
      return false;
  }
}

ibv_wc_opcode WcOpcode(ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ:
      return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return IBV_WC_FETCH_ADD;
    default:
      return IBV_WC_SEND;
  }
}

bool IsAtomic(ibv_wr_opcode op) {
  return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

// Reads the opcode of `wr` into *op; false for a value braid does not
// implement. Read as an integer: the application may have put anything
// there, and loading a value outside the enum's range as an ibv_wr_opcode
// is undefined behaviour (UBSan reports it).
bool ReadOpcode(const ibv_send_wr& wr, ibv_wr_opcode* op) {
  std::underlying_type_t<ibv_wr_opcode> raw;
  static_assert(sizeof(raw) == sizeof(wr.opcode));
  std::memcpy(&raw, &wr.opcode, sizeof(raw));
  switch (raw) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      *op = static_cast<ibv_wr_opcode>(raw);
      return true;
    default:
      return false;
  }
}

}  // namespace

int Qp::PostSend(ibv_send_wr* wr, ibv_send_wr** bad) {
  ctx_->NoteAnswer();  // times the reply ACKs are held for (HoldAcks)
  const bool rc = type_ != IBV_QPT_UD;  // connected: RC or UC
  int first_err = 0;
  for (; wr != nullptr; wr = wr->next) {
    int err = 0;
    ibv_wr_opcode op = IBV_WR_SEND;
    const bool known_op = ReadOpcode(*wr, &op);
    uint64_t total = 0;
    for (int i = 0; i < wr->num_sge && wr->num_sge > 0; ++i) {
      total += wr->sg_list[i].length;
    }
    const bool inline_ok = (wr->send_flags & IBV_SEND_INLINE) &&
                           op != IBV_WR_RDMA_READ && !IsAtomic(op);
    if (state_ == IBV_QPS_RESET || state_ == IBV_QPS_INIT ||
        state_ == IBV_QPS_RTR) {
      err = EINVAL;
    } else if (wr->num_sge < 0 ||
               static_cast<uint32_t>(wr->num_sge) > cap_.max_send_sge) {
      err = EINVAL;
    } else if (!known_op || !OpcodeAllowed(type_, op)) {
      err = EINVAL;
    } else if (inline_ok && total > cap_.max_inline_data) {
      err = EINVAL;
    } else if (sq_tail_ - sq_head_ >= sq_.size()) {
      err = ENOMEM;
    } else if (!rc && (wr->wr.ud.ah == nullptr ||
                       wr->wr.ud.ah->context != ctx_->ibv())) {
      err = EINVAL;
    } else if (IsAtomic(op) && (wr->num_sge < 1 || total < 8)) {
      err = EINVAL;
    }
    if (err != 0) {
      // The WRs before this one stay posted and go out below, as on a
      // real device.
      *bad = wr;
      first_err = err;
      break;
    }
    SendWqe& w = Wqe(sq_tail_);
    w.wr_id = wr->wr_id;
    w.opcode = op;
    w.send_flags = wr->send_flags;
    w.imm = wr->imm_data;
    w.sge.assign(wr->sg_list, wr->sg_list + wr->num_sge);
    w.is_inline = inline_ok;
    w.length = IsAtomic(op) ? 8 : total;
    w.sent = false;
    w.done = false;
    w.zero_copy_pending = 0;
    w.status = WcStatus(WcCause::kSuccess);
    if (inline_ok) {
      w.inline_data.resize(total);
      size_t off = 0;
      for (int i = 0; i < wr->num_sge; ++i) {
        std::memcpy(w.inline_data.data() + off,
                    reinterpret_cast<const void*>(wr->sg_list[i].addr),
                    wr->sg_list[i].length);
        off += wr->sg_list[i].length;
      }
    }
    if (rc) {
      if (IsAtomic(op)) {
        w.remote_addr = wr->wr.atomic.remote_addr;
        w.rkey = wr->wr.atomic.rkey;
        w.compare_add = wr->wr.atomic.compare_add;
        w.swap = wr->wr.atomic.swap;
      } else {
        w.remote_addr = wr->wr.rdma.remote_addr;
        w.rkey = wr->wr.rdma.rkey;
      }
      w.psn = next_psn_;
      next_psn_ = PsnAdd(next_psn_, 1);
      w.rnr_left = attr_.rnr_retry;
    } else {
      const Ah* ah = Ah::From(wr->wr.ud.ah);
      w.ud_dest = ah->dest();
      w.ud_flow = ah->flow();
      w.ud_qpn = wr->wr.ud.remote_qpn;
      // A Q_Key with the high bit set means "use the QP's own".
      w.ud_qkey = (wr->wr.ud.remote_qkey & 0x80000000u) ? attr_.qkey
                                                        : wr->wr.ud.remote_qkey;
    }
    ++sq_tail_;
    if (state_ == IBV_QPS_ERR) {
      FailWqe(w, WcCause::kFlushed);
      sq_ack_ = sq_send_ = sq_tail_;
    }
  }
  if (state_ == IBV_QPS_ERR) {
    CompleteSendHead();
  } else if (state_ == IBV_QPS_RTS) {
    if (Pump(Context::Now())) ctx_->NeedPump(this);
  }
  return first_err;
}

int Qp::PostRecv(ibv_recv_wr* wr, ibv_recv_wr** bad) {
  int first_err = 0;
  for (; wr != nullptr; wr = wr->next) {
    int err = 0;
    if (srq_ != nullptr || state_ == IBV_QPS_RESET) {
      err = EINVAL;
    } else {
      err = rq_.Post(*wr);
    }
    if (err != 0) {
      *bad = wr;  // the WRs before it stay posted (flushed below in ERR)
      first_err = err;
      break;
    }
  }
  if (state_ == IBV_QPS_ERR) {
    while (!rq_.empty()) {
      CompleteRecv(rq_.front(), WcCause::kFlushed, IBV_WC_RECV, 0, false, 0, 0,
                   0, false, false);
      rq_.pop();
    }
  }
  return first_err;
}

bool Qp::Pump(TimeNs now) {
  if (!DrainPending()) return true;
  if (state_ != IBV_QPS_RTS) return false;
  if (type_ == IBV_QPT_RC && now < rnr_until_) return true;
  while (sq_send_ < sq_tail_) {
    SendWqe& w = Wqe(sq_send_);
    // IBV_SEND_FENCE: the WR (and every later one) waits until each earlier
    // READ / atomic has its response; RcOnResponse pumps again then.
    if ((w.send_flags & IBV_SEND_FENCE) && ResponsePending()) break;
    const TxResult r = type_ == IBV_QPT_UD ? UdTransmit(w) : RcTransmit(w);
    if (r == TxResult::kRetry) return true;
    if (r == TxResult::kError) return false;  // the QP went to ERR
    w.sent_at = now;
    w.delivered = false;
    ++sq_send_;
  }
  CompleteSendHead();
  return false;
}

bool Qp::ResponsePending() {
  // A READ / atomic is acknowledged only with its response (RcAckUpTo), so
  // the ones still waiting are between sq_ack_ and sq_send_. Only RC has
  // them.
  if (type_ != IBV_QPT_RC) return false;
  for (uint64_t i = sq_ack_; i < sq_send_; ++i) {
    const SendWqe& w = Wqe(i);
    if ((w.opcode == IBV_WR_RDMA_READ || IsAtomic(w.opcode)) && !w.done) {
      return true;
    }
  }
  return false;
}

void Qp::ResumeFenced() {
  if (sq_send_ < sq_tail_ && (Wqe(sq_send_).send_flags & IBV_SEND_FENCE)) {
    ctx_->NeedPump(this);
  }
}

void Qp::SendOrQueue(absl::Span<const uint8_t> msg, uint64_t cookie,
                     const std::optional<PlacementDescriptor>& placement) {
  if (pending_out_.empty()) {
    const SendResult r =
        ctx_->sends().Send(remote_, stream_, msg, cookie, placement);
    if (r != SendResult::kRetry) return;
  }
  pending_out_.push_back(
      {std::vector<uint8_t>(msg.begin(), msg.end()), cookie, placement});
  ctx_->NeedPump(this);
}

bool Qp::DrainPending() {
  while (!pending_out_.empty()) {
    const PendingOut& o = pending_out_.front();
    if (ctx_->sends().Send(remote_, stream_, o.msg, o.cookie, o.placement) ==
        SendResult::kRetry) {
      return false;
    }
    pending_out_.pop_front();
  }
  return true;
}

WcCause Qp::Gather(const SendWqe& w, size_t header_len,
                   std::vector<uint8_t>* out) {
  const bool carries =
      w.opcode == IBV_WR_SEND || w.opcode == IBV_WR_SEND_WITH_IMM ||
      w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  const size_t len = carries ? w.length : 0;
  out->resize(header_len + len);
  if (len == 0) return WcCause::kSuccess;
  uint8_t* dst = out->data() + header_len;
  if (w.is_inline) {
    std::memcpy(dst, w.inline_data.data(), len);
    return WcCause::kSuccess;
  }
  const MrTable& mrs = ctx_->mrs();
  for (const ibv_sge& s : w.sge) {
    uint8_t* src = nullptr;
    if (mrs.CheckLocal(s, pd_, /*write=*/false, &src) != AccessResult::kOk) {
      return WcCause::kLocalProtection;
    }
    if (s.length) std::memcpy(dst, src, s.length);
    dst += s.length;
  }
  return WcCause::kSuccess;
}

void Qp::CompleteSendHead() {
  while (sq_head_ < sq_tail_) {
    SendWqe& w = Wqe(sq_head_);
    if (!w.done || w.zero_copy_pending > 0) break;
    if (w.status != IBV_WC_SUCCESS || sq_sig_all_ ||
        (w.send_flags & IBV_SEND_SIGNALED)) {
      ibv_wc wc;
      std::memset(&wc, 0, sizeof(wc));
      wc.wr_id = w.wr_id;
      wc.status = w.status;
      wc.opcode = WcOpcode(w.opcode);
      wc.byte_len = static_cast<uint32_t>(w.length);
      wc.qp_num = qpn_;
      send_cq_->Push(wc, false);
    }
    ++sq_head_;
  }
  if (sq_ack_ < sq_head_) sq_ack_ = sq_head_;
  if (sq_send_ < sq_ack_) sq_send_ = sq_ack_;
}

RecvWqe* Qp::PeekRecv() {
  if (srq_ != nullptr) {
    return srq_->queue().empty() ? nullptr : &srq_->queue().front();
  }
  return rq_.empty() ? nullptr : &rq_.front();
}

void Qp::PopRecv() {
  if (srq_ != nullptr) {
    srq_->queue().pop();
    if (srq_->limit != 0 && srq_->queue().size() < srq_->limit) {
      srq_->limit = 0;  // one event per arming
      ibv_async_event ev{};
      ev.element.srq = srq_->ibv();
      ev.event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
      ctx_->async().Raise(ev);
    }
    return;
  }
  rq_.pop();
}

WcCause Qp::Scatter(const RecvWqe& w,
                    std::initializer_list<absl::Span<const uint8_t>> parts) {
  uint64_t total = 0;
  for (const auto& p : parts) total += p.size();
  if (total > w.total) return WcCause::kLocalLength;
  // Validate every SGE that will be written before touching any byte.
  const MrTable& mrs = ctx_->mrs();
  absl::InlinedVector<uint8_t*, 4> dst(w.sge.size(), nullptr);
  uint64_t need = total;
  for (size_t i = 0; i < w.sge.size() && need > 0; ++i) {
    if (w.sge[i].length == 0) continue;
    if (mrs.CheckLocal(w.sge[i], pd_, /*write=*/true, &dst[i]) !=
        AccessResult::kOk) {
      return WcCause::kLocalProtection;
    }
    need -= std::min<uint64_t>(need, w.sge[i].length);
  }
  size_t si = 0;
  uint64_t soff = 0;
  for (const auto& p : parts) {
    size_t off = 0;
    while (off < p.size()) {
      while (soff == w.sge[si].length) {
        ++si;
        soff = 0;
      }
      const size_t n =
          std::min<uint64_t>(p.size() - off, w.sge[si].length - soff);
      std::memcpy(dst[si] + soff, p.data() + off, n);
      off += n;
      soff += n;
    }
  }
  return WcCause::kSuccess;
}

void Qp::CompleteRecv(const RecvWqe& w, WcCause cause, ibv_wc_opcode op,
                      uint32_t byte_len, bool with_imm, uint32_t imm,
                      uint32_t src_qp, uint16_t slid, bool grh,
                      bool solicited) {
  ibv_wc wc;
  std::memset(&wc, 0, sizeof(wc));
  wc.wr_id = w.wr_id;
  wc.status = WcStatus(cause);
  wc.opcode = op;
  wc.byte_len = byte_len;
  wc.qp_num = qpn_;
  wc.src_qp = src_qp;
  wc.slid = slid;
  if (with_imm) {
    wc.wc_flags |= IBV_WC_WITH_IMM;
    wc.imm_data = imm;
  }
  if (grh) wc.wc_flags |= IBV_WC_GRH;
  recv_cq_->Push(wc, solicited);
}

void Qp::OnMessage(const NetAddr& from, const VerbsHeader& h,
                   absl::Span<const uint8_t> payload, const Arrival& arrival) {
  if (type_ == IBV_QPT_UD) {
    UdOnMessage(from, h, payload);
    return;
  }
  if (state_ != IBV_QPS_RTR && state_ != IBV_QPS_RTS && state_ != IBV_QPS_SQD) {
    ++counters_.dropped_bad_state;
    return;
  }
  if (from != remote_ || h.src_qpn != attr_.dest_qp_num) {
    ++counters_.dropped_wrong_source;
    return;
  }
  if (state_ != IBV_QPS_RTR) RcAckUpTo(h.ack_psn);
  if (state_ == IBV_QPS_ERR) return;
  if (IsRcRequest(h.op)) {
    RcOnRequest(h, payload, arrival);
  } else {
    RcOnResponse(h, payload, arrival);
  }
}

void Qp::OnTransportFailure(uint32_t psn, bool was_response,
                            FailureCause cause) {
  if (type_ == IBV_QPT_UD || state_ == IBV_QPS_ERR || state_ == IBV_QPS_RESET) {
    return;
  }
  // The oldest WR's IBV_WC_RETRY_EXC_ERR reports a request that failed, as
  // a device reports retries exceeded (no event); a failed response has no
  // WR to carry it: QP_FATAL.
  const bool wr_reports = !was_response && sq_ack_ < sq_send_;
  if (wr_reports) FailWqe(Wqe(sq_ack_), WcCause::kTransportFailure, cause);
  (void)psn;
  EnterError(wr_reports ? QpErrorEvent::kNone : QpErrorEvent::kFatal);
}

}  // namespace braid::verbs_compat

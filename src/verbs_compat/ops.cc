#include "verbs_compat/ops.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "verbs_compat/context.h"
#include "verbs_compat/cq.h"
#include "verbs_compat/device.h"
#include "verbs_compat/pd_mr.h"
#include "verbs_compat/qp.h"
#include "verbs_compat/srq.h"

namespace braid::verbs_compat {
namespace {

// Whether an application call on a QP comes from an event-driven
// application that waits on a channel fd itself: one of the QP's CQs is
// armed so (Cq::awaited_on_fd, Context::BeforeAppSleeps).
bool EventDriven(const Qp* qp) {
  return (qp->send_cq() != nullptr && qp->send_cq()->awaited_on_fd()) ||
         (qp->recv_cq() != nullptr && qp->recv_cq()->awaited_on_fd());
}

int PollCq(ibv_cq* ibcq, int n, ibv_wc* wc) {
  Cq* cq = Cq::From(ibcq);
  Context* ctx = cq->context();
  std::lock_guard<std::mutex> lk(ctx->mu());
  // Armed when the poll starts: the application drains the CQ and then
  // sleeps on its channel's fd (an event raised meanwhile wakes it at
  // once). One that sleeps in ibv_get_cq_event drives progress there.
  const bool event_driven = cq->awaited_on_fd();
  // Noted before the step (its clock read is then not between a datagram
  // and the completion it brings).
  if (!event_driven) ctx->driver().NoteAppActivity();
  size_t stepped = 0;
  if (cq->size() < static_cast<size_t>(n)) {
    ++ctx->counters().app_progress;
    // ACKs are deferred when there is something to return: the reply the
    // application is about to post will carry them.
    stepped = ctx->Progress(/*flush_acks=*/false);
  }
  const int k = cq->Pop(n, wc);
  if (event_driven) {
    // Drained: its next call may be a long way off (gloo's device thread
    // calls again only at the next event). Deferred ACKs would wait for
    // the progress thread's nap, and the peer's send completions with
    // them. Not drained: it polls again at once.
    if (cq->size() == 0) {
      ctx->BeforeAppSleeps();
      return k;
    }
    ctx->driver().NoteAppActivity();
  }
  // A step that brought completions for another CQ (the application polls
  // its send CQ, and the request landed on its receive CQ) holds the ACKs
  // as a poll that returns them does.
  if (k == 0 && stepped == 0) {
    ctx->FlushDueAcks();
  } else {
    ctx->HoldAcks();
  }
  return k;
}

int ReqNotifyCq(ibv_cq* ibcq, int solicited_only) {
  Cq* cq = Cq::From(ibcq);
  std::lock_guard<std::mutex> lk(cq->context()->mu());
  // Without a channel there is nobody to notify; devices (mlx5, rxe)
  // accept the call all the same, and programs check its return.
  if (cq->channel() == nullptr) return 0;
  // Read at every arm, not cached: the application may switch O_NONBLOCK at
  // any time (rsockets' rfcntl does on a connected socket), through this
  // fd, a dup of it or ioctl(FIONBIO), none of which braid0 sees.
  const int fl = fcntl(cq->channel()->ibv()->fd, F_GETFL);
  cq->Arm(solicited_only != 0, fl >= 0 && (fl & O_NONBLOCK) != 0);
  // Arming precedes a wait for the event (in ibv_get_cq_event or poll()
  // on the channel fd): let the thread drive progress meanwhile.
  cq->context()->driver().NoteAppBlocked();
  return 0;
}

int PostSend(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad) {
  Qp* qp = Qp::From(ibqp);
  Context* ctx = Context::From(ibqp->context);
  std::lock_guard<std::mutex> lk(ctx->mu());
  // An event-driven application does not poll after posting: the requests
  // leave now (not batched for a next Poll) and the thread keeps watching
  // for their ACKs.
  const bool event_driven = EventDriven(qp);
  if (!event_driven) ctx->driver().NoteAppActivity();
  const int r = qp->PostSend(wr, bad);
  if (event_driven) ctx->BeforeAppSleeps();
  return r;
}

int PostRecv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Qp* qp = Qp::From(ibqp);
  Context* ctx = Context::From(ibqp->context);
  std::lock_guard<std::mutex> lk(ctx->mu());
  // Posting receives drives no progress: only a polling application makes
  // the thread back off.
  if (!EventDriven(qp)) ctx->driver().NoteAppActivity();
  return qp->PostRecv(wr, bad);
}

int PostSrqRecv(ibv_srq* ibsrq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Srq* srq = Srq::From(ibsrq);
  Context* ctx = Context::From(ibsrq->context);
  std::lock_guard<std::mutex> lk(ctx->mu());
  ctx->driver().NoteAppActivity();
  for (; wr != nullptr; wr = wr->next) {
    const int err = srq->queue().Post(*wr);
    if (err != 0) {
      *bad = wr;
      return err;
    }
  }
  return 0;
}

int QueryPort(ibv_context* ibctx, uint8_t port, ibv_port_attr* attr,
              size_t attr_len) {
  if (port != 1) return EINVAL;
  ibv_port_attr full;
  FillPortAttr(Context::From(ibctx), &full);
  std::memcpy(attr, &full, std::min(attr_len, sizeof(full)));
  return 0;
}

int QueryDeviceEx(ibv_context* ibctx, const ibv_query_device_ex_input* input,
                  ibv_device_attr_ex* attr, size_t attr_size) {
  if (input != nullptr && input->comp_mask != 0) return EINVAL;
  FillDeviceAttrEx(Context::From(ibctx), attr, attr_size);
  return 0;
}

ibv_qp* CreateQpEx(ibv_context* ibctx, ibv_qp_init_attr_ex* attr) {
  return CreateQp(ibctx, attr);
}

// Extended CQ polling: start_poll/next_poll pop one completion into
// Cq::current under the context lock and release it, so the application
// may post (or call any other verb of the context) between ibv_start_poll
// and ibv_end_poll, as ibv_rc_pingpong -t does. The read_* accessors
// report Cq::current, which only the (single) polling thread writes.
Cq* CqOf(ibv_cq_ex* cqx) { return Cq::From(ibv_cq_ex_to_cq(cqx)); }

// Pops the next completion into Cq::current. Context lock held.
int NextOneLocked(ibv_cq_ex* cqx) {
  Cq* cq = CqOf(cqx);
  if (cq->Pop(1, &cq->current, &cq->current_stamp_ns) == 0) return ENOENT;
  cqx->wr_id = cq->current.wr_id;
  cqx->status = cq->current.status;
  return 0;
}

int StartPoll(ibv_cq_ex* cqx, ibv_poll_cq_attr* attr) {
  if (attr != nullptr && attr->comp_mask != 0) return EINVAL;
  Cq* cq = CqOf(cqx);
  Context* ctx = cq->context();
  std::lock_guard<std::mutex> lk(ctx->mu());
  const bool event_driven = cq->awaited_on_fd();  // as in PollCq
  if (!event_driven) ctx->driver().NoteAppActivity();
  const size_t stepped =
      cq->size() == 0 ? ctx->Progress(/*flush_acks=*/false) : 0;
  const int r = NextOneLocked(cqx);
  if (event_driven && r != 0) {
    ctx->BeforeAppSleeps();
    return r;
  }
  if (event_driven) ctx->driver().NoteAppActivity();
  if (r != 0 && stepped == 0) {  // as in PollCq
    ctx->FlushDueAcks();
  } else {
    ctx->HoldAcks();
  }
  return r;
}
int NextPoll(ibv_cq_ex* cqx) {
  Cq* cq = CqOf(cqx);
  Context* ctx = cq->context();
  std::lock_guard<std::mutex> lk(ctx->mu());
  const int r = NextOneLocked(cqx);
  // The batch ends with the CQ drained: as PollCq.
  if (r != 0 && cq->awaited_on_fd()) ctx->BeforeAppSleeps();
  return r;
}
// Nothing is held between start_poll and end_poll.
void EndPoll(ibv_cq_ex* /*cqx*/) {}
enum ibv_wc_opcode ReadOpcode(ibv_cq_ex* cqx) {
  return CqOf(cqx)->current.opcode;
}
uint32_t ReadVendorErr(ibv_cq_ex* cqx) { return CqOf(cqx)->current.vendor_err; }
uint32_t ReadByteLen(ibv_cq_ex* cqx) { return CqOf(cqx)->current.byte_len; }
__be32 ReadImmData(ibv_cq_ex* cqx) { return CqOf(cqx)->current.imm_data; }
uint32_t ReadQpNum(ibv_cq_ex* cqx) { return CqOf(cqx)->current.qp_num; }
uint32_t ReadSrcQp(ibv_cq_ex* cqx) { return CqOf(cqx)->current.src_qp; }
unsigned int ReadWcFlags(ibv_cq_ex* cqx) { return CqOf(cqx)->current.wc_flags; }
uint32_t ReadSlid(ibv_cq_ex* cqx) { return CqOf(cqx)->current.slid; }
uint8_t ReadSl(ibv_cq_ex* cqx) { return CqOf(cqx)->current.sl; }
uint8_t ReadDlidPathBits(ibv_cq_ex* cqx) {
  return CqOf(cqx)->current.dlid_path_bits;
}
uint64_t ReadWallclockNs(ibv_cq_ex* cqx) { return CqOf(cqx)->current_stamp_ns; }

}  // namespace

void FillCqExOps(ibv_cq_ex* cqx) {
  cqx->start_poll = StartPoll;
  cqx->next_poll = NextPoll;
  cqx->end_poll = EndPoll;
  cqx->read_opcode = ReadOpcode;
  cqx->read_vendor_err = ReadVendorErr;
  cqx->read_byte_len = ReadByteLen;
  cqx->read_imm_data = ReadImmData;
  cqx->read_qp_num = ReadQpNum;
  cqx->read_src_qp = ReadSrcQp;
  cqx->read_wc_flags = ReadWcFlags;
  cqx->read_slid = ReadSlid;
  cqx->read_sl = ReadSl;
  cqx->read_dlid_path_bits = ReadDlidPathBits;
  cqx->read_completion_wallclock_ns = ReadWallclockNs;
}

ibv_cq_ex* CreateCqEx(ibv_context* ibctx, ibv_cq_init_attr_ex* attr);

void FillContextOps(verbs_context* v) {
  ibv_context_ops& o = v->context.ops;
  o.poll_cq = PollCq;
  o.req_notify_cq = ReqNotifyCq;
  o.post_send = PostSend;
  o.post_recv = PostRecv;
  o.post_srq_recv = PostSrqRecv;
  v->query_port = QueryPort;
  v->query_device_ex = QueryDeviceEx;
  v->create_qp_ex = CreateQpEx;
  v->create_cq_ex = CreateCqEx;
}

}  // namespace braid::verbs_compat

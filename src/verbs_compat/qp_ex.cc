// The extended work-request API (ibv_qp_ex, ibv_wr_*): each builder call
// stages one ibv_send_wr; ibv_wr_complete posts the staged list through
// the ordinary post path (one lock, one transmit pass), ibv_wr_abort drops
// it. Memory windows, TSO, XRC and atomic write are not supported: using
// them makes ibv_wr_complete fail with EOPNOTSUPP.
#include <cerrno>
#include <cstring>
#include <mutex>

#include "verbs_compat/context.h"
#include "verbs_compat/ops.h"
#include "verbs_compat/qp.h"

namespace braid::verbs_compat {
namespace {

ibv_send_wr& Stage(ibv_qp_ex* qpx, ibv_wr_opcode op) {
  Qp* qp = Qp::FromEx(qpx);
  Qp::StagedWr s;
  std::memset(&s.wr, 0, sizeof(s.wr));
  s.wr.wr_id = qpx->wr_id;
  s.wr.send_flags = qpx->wr_flags;
  s.wr.opcode = op;
  s.sge_begin = qp->ex_sges.size();
  qp->ex_wrs.push_back(s);
  return qp->ex_wrs.back().wr;
}

ibv_send_wr* Last(ibv_qp_ex* qpx) {
  Qp* qp = Qp::FromEx(qpx);
  if (qp->ex_wrs.empty()) {
    qp->ex_error = EINVAL;
    return nullptr;
  }
  return &qp->ex_wrs.back().wr;
}

void WrStart(ibv_qp_ex* qpx) {
  Qp* qp = Qp::FromEx(qpx);
  qp->ex_wrs.clear();
  qp->ex_sges.clear();
  qp->ex_inline.clear();
  qp->ex_error = 0;
}

int WrComplete(ibv_qp_ex* qpx) {
  Qp* qp = Qp::FromEx(qpx);
  Context* ctx = Context::From(qp->ibv()->context);
  int err = qp->ex_error;
  if (err == 0 && !qp->ex_wrs.empty()) {
    for (size_t i = 0; i < qp->ex_wrs.size(); ++i) {
      Qp::StagedWr& s = qp->ex_wrs[i];
      s.wr.sg_list = s.wr.num_sge ? &qp->ex_sges[s.sge_begin] : nullptr;
      s.wr.next = i + 1 < qp->ex_wrs.size() ? &qp->ex_wrs[i + 1].wr : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    std::lock_guard<std::mutex> lk(ctx->mu());
    ctx->driver().NoteAppActivity();
    err = qp->PostSend(&qp->ex_wrs[0].wr, &bad);
  }
  WrStart(qpx);
  return err;
}

void WrAbort(ibv_qp_ex* qpx) { WrStart(qpx); }

void WrSend(ibv_qp_ex* qpx) { Stage(qpx, IBV_WR_SEND); }
void WrSendImm(ibv_qp_ex* qpx, __be32 imm) {
  Stage(qpx, IBV_WR_SEND_WITH_IMM).imm_data = imm;
}
void WrRdmaWrite(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
  ibv_send_wr& w = Stage(qpx, IBV_WR_RDMA_WRITE);
  w.wr.rdma.rkey = rkey;
  w.wr.rdma.remote_addr = addr;
}
void WrRdmaWriteImm(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, __be32 imm) {
  ibv_send_wr& w = Stage(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);
  w.wr.rdma.rkey = rkey;
  w.wr.rdma.remote_addr = addr;
  w.imm_data = imm;
}
void WrRdmaRead(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
  ibv_send_wr& w = Stage(qpx, IBV_WR_RDMA_READ);
  w.wr.rdma.rkey = rkey;
  w.wr.rdma.remote_addr = addr;
}
void WrCmpSwp(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t compare,
              uint64_t swap) {
  ibv_send_wr& w = Stage(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);
  w.wr.atomic.rkey = rkey;
  w.wr.atomic.remote_addr = addr;
  w.wr.atomic.compare_add = compare;
  w.wr.atomic.swap = swap;
}
void WrFetchAdd(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t add) {
  ibv_send_wr& w = Stage(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);
  w.wr.atomic.rkey = rkey;
  w.wr.atomic.remote_addr = addr;
  w.wr.atomic.compare_add = add;
}
void WrUnsupported(ibv_qp_ex* qpx) { Qp::FromEx(qpx)->ex_error = EOPNOTSUPP; }
void WrBindMw(ibv_qp_ex* qpx, ibv_mw*, uint32_t, const ibv_mw_bind_info*) {
  WrUnsupported(qpx);
}
void WrLocalInv(ibv_qp_ex* qpx, uint32_t) { WrUnsupported(qpx); }
void WrSendInv(ibv_qp_ex* qpx, uint32_t) { WrUnsupported(qpx); }
void WrSendTso(ibv_qp_ex* qpx, void*, uint16_t, uint16_t) {
  WrUnsupported(qpx);
}
void WrSetXrcSrqn(ibv_qp_ex* qpx, uint32_t) { WrUnsupported(qpx); }
void WrAtomicWrite(ibv_qp_ex* qpx, uint32_t, uint64_t, const void*) {
  WrUnsupported(qpx);
}

void WrSetUdAddr(ibv_qp_ex* qpx, ibv_ah* ah, uint32_t qpn, uint32_t qkey) {
  if (ibv_send_wr* w = Last(qpx)) {
    w->wr.ud.ah = ah;
    w->wr.ud.remote_qpn = qpn;
    w->wr.ud.remote_qkey = qkey;
  }
}
void WrSetSge(ibv_qp_ex* qpx, uint32_t lkey, uint64_t addr, uint32_t len) {
  if (ibv_send_wr* w = Last(qpx)) {
    Qp::FromEx(qpx)->ex_sges.push_back({addr, len, lkey});
    w->num_sge = 1;
  }
}
void WrSetSgeList(ibv_qp_ex* qpx, size_t n, const ibv_sge* list) {
  if (ibv_send_wr* w = Last(qpx)) {
    Qp* qp = Qp::FromEx(qpx);
    qp->ex_sges.insert(qp->ex_sges.end(), list, list + n);
    w->num_sge = static_cast<int>(n);
  }
}
void WrSetInlineDataList(ibv_qp_ex* qpx, size_t n, const ibv_data_buf* bufs) {
  if (ibv_send_wr* w = Last(qpx)) {
    Qp* qp = Qp::FromEx(qpx);
    std::vector<uint8_t> data;
    for (size_t i = 0; i < n; ++i) {
      const auto* p = static_cast<const uint8_t*>(bufs[i].addr);
      data.insert(data.end(), p, p + bufs[i].length);
    }
    qp->ex_inline.push_back(std::move(data));
    // The copy is made now, as inline semantics require; the SGE points
    // at it and IBV_SEND_INLINE makes the post path copy it again into
    // the WQE.
    std::vector<uint8_t>& d = qp->ex_inline.back();
    qp->ex_sges.push_back({reinterpret_cast<uintptr_t>(d.data()),
                           static_cast<uint32_t>(d.size()), 0});
    w->num_sge = 1;
    w->send_flags |= IBV_SEND_INLINE;
  }
}
void WrSetInlineData(ibv_qp_ex* qpx, void* addr, size_t len) {
  const ibv_data_buf b{addr, len};
  WrSetInlineDataList(qpx, 1, &b);
}

}  // namespace

void FillQpExOps(ibv_qp_ex* q) {
  q->wr_atomic_cmp_swp = WrCmpSwp;
  q->wr_atomic_fetch_add = WrFetchAdd;
  q->wr_bind_mw = WrBindMw;
  q->wr_local_inv = WrLocalInv;
  q->wr_rdma_read = WrRdmaRead;
  q->wr_rdma_write = WrRdmaWrite;
  q->wr_rdma_write_imm = WrRdmaWriteImm;
  q->wr_send = WrSend;
  q->wr_send_imm = WrSendImm;
  q->wr_send_inv = WrSendInv;
  q->wr_send_tso = WrSendTso;
  q->wr_set_ud_addr = WrSetUdAddr;
  q->wr_set_xrc_srqn = WrSetXrcSrqn;
  q->wr_set_inline_data = WrSetInlineData;
  q->wr_set_inline_data_list = WrSetInlineDataList;
  q->wr_set_sge = WrSetSge;
  q->wr_set_sge_list = WrSetSgeList;
  q->wr_start = WrStart;
  q->wr_complete = WrComplete;
  q->wr_abort = WrAbort;
  q->wr_atomic_write = WrAtomicWrite;
}

}  // namespace braid::verbs_compat

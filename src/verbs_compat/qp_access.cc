// Qp, the responder's remote access checks: every WRITE, READ and atomic
// (and every fragment the endpoint would place) is checked against the
// QP's access flags and the context's key table; a refused request is
// answered with a remote access NAK and skipped, and the QP keeps working.
#include "verbs_compat/context.h"
#include "verbs_compat/pd_mr.h"
#include "verbs_compat/qp.h"

namespace braid::verbs_compat {

AccessResult Qp::RemoteAccess(uint32_t rkey, uint64_t addr, uint64_t len,
                              int need, uint8_t** out) const {
  if ((static_cast<int>(attr_.qp_access_flags) & need) != need) {
    return AccessResult::kNoPermission;
  }
  return ctx_->mrs().CheckRemote(rkey, pd_, addr, len, need, out);
}

void Qp::RcAccessError(AccessResult why, uint32_t psn) {
  ++counters_.access_errors;
  ContextCounters& c = ctx_->counters();
  switch (why) {
    case AccessResult::kNoPermission:
      ++c.access_no_permission;
      break;
    case AccessResult::kOutOfBounds:
      ++c.access_out_of_bounds;
      break;
    default:  // no region with that key, or one of another PD
      ++c.access_bad_key;
      break;
  }
  if (type_ == IBV_QPT_UC) {
    UcDrop(psn);
    return;
  }
  // The NAK still acknowledges only the requests before this one (its
  // ack_psn), so the requester fails this WR rather than completing it;
  // the NAK itself retires it, and no ACK is owed for it.
  RcSendResponse(VerbsOp::kNak, psn,
                 static_cast<uint8_t>(NakCode::kRemoteAccess), 0, {}, 0);
  expected_psn_ = PsnAdd(psn, 1);
  last_ack_sent_ = psn;
}

bool Qp::PlaceTarget(const PlacementRequest& req, absl::Span<uint8_t>* dest) {
  if (type_ == IBV_QPT_UD || req.peer != remote_ ||
      req.stream != static_cast<uint16_t>(attr_.dest_qp_num & 0xffff) ||
      req.msg_len < req.descriptor.head_bytes) {
    return false;
  }
  const uint64_t key = req.descriptor.key;
  const uint64_t len = req.msg_len - req.descriptor.head_bytes;
  uint8_t* p = nullptr;
  switch (PlaceKindOf(key)) {
    case static_cast<uint8_t>(PlaceKind::kWrite):
      // Each WRITE on its own: a refused one is NAKed and skipped when its
      // header is processed, and the WRITEs after it are placed as usual.
      if ((state_ != IBV_QPS_RTR && state_ != IBV_QPS_RTS &&
           state_ != IBV_QPS_SQD) ||
          req.descriptor.head_bytes != HeaderBytes(VerbsOp::kWrite) ||
          RemoteAccess(PlaceLowOf(key), req.descriptor.offset, len,
                       IBV_ACCESS_REMOTE_WRITE, &p) != AccessResult::kOk) {
        return false;
      }
      break;
    case static_cast<uint8_t>(PlaceKind::kReadResp): {
      if ((state_ != IBV_QPS_RTS && state_ != IBV_QPS_SQD) ||
          req.descriptor.head_bytes != HeaderBytes(VerbsOp::kReadResp) ||
          PlaceLowOf(key) > kPsnMask) {
        return false;
      }
      const int64_t idx = IndexOfPsn(PlaceLowOf(key));
      if (idx < 0) return false;
      const SendWqe& w = Wqe(idx);
      if (w.opcode != IBV_WR_RDMA_READ || !w.sent || w.done ||
          w.sge.size() != 1 || w.length != len ||
          ctx_->mrs().CheckLocal(w.sge[0], pd_, /*write=*/true, &p) !=
              AccessResult::kOk) {
        return false;
      }
      break;
    }
    default:
      return false;
  }
  *dest = absl::MakeSpan(p, len);
  return true;
}

}  // namespace braid::verbs_compat

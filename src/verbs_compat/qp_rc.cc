// Qp, reliable connected: the requester (transmit, ACK/NAK/response
// handling, RNR retry) and the responder (SEND/WRITE/READ/atomics, RNR
// NAK). The remote access checks and direct placement: qp_access.cc.
#include <cstring>

#include "verbs_compat/context.h"
#include "verbs_compat/cq.h"
#include "verbs_compat/pd_mr.h"
#include "verbs_compat/qp.h"

namespace braid::verbs_compat {
namespace {

VerbsOp RequestOp(ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_SEND_WITH_IMM:
      return VerbsOp::kSendImm;
    case IBV_WR_RDMA_WRITE:
      return VerbsOp::kWrite;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return VerbsOp::kWriteImm;
    case IBV_WR_RDMA_READ:
      return VerbsOp::kReadReq;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return VerbsOp::kCmpSwap;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return VerbsOp::kFetchAdd;
    default:
      return VerbsOp::kSend;
  }
}

}  // namespace

Qp::TxResult Qp::RcTransmit(SendWqe& w) {
  VerbsHeader h;
  h.op = RequestOp(w.opcode);
  h.flags = (w.send_flags & IBV_SEND_SOLICITED) ? kFlagSolicited : 0;
  h.dst_qpn = attr_.dest_qp_num;
  h.src_qpn = qpn_;
  h.psn = w.psn;
  h.ack_psn = LastProcessedPsn();
  h.imm = w.imm;
  h.remote_addr = w.remote_addr;
  h.rkey = w.rkey;
  h.length = static_cast<uint32_t>(w.length);
  h.compare_add = w.compare_add;
  h.swap = w.swap;
  if (w.length > ctx_->max_message_bytes() - kMaxHeaderBytes) {
    FailWqe(w, WcCause::kLocalLength);
    EnterError(QpErrorEvent::kNone);
    return TxResult::kError;
  }
  std::vector<uint8_t>& buf = ctx_->sends().scratch();
  const size_t hdr = HeaderBytes(h.op);
  // A large payload in one SGE goes from the registered buffer itself, the
  // verbs header in front as the endpoint's copied prefix; the WR then
  // completes only once the endpoint is done reading it (zero_copy_pending).
  // Several SGEs, inline data and small payloads are gathered (copied).
  const bool carries =
      w.opcode == IBV_WR_SEND || w.opcode == IBV_WR_SEND_WITH_IMM ||
      w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  absl::Span<const uint8_t> body;
  const bool zero_copy = carries && !w.is_inline && w.sge.size() == 1 &&
                         w.length >= kZeroCopyMinBytes;
  if (zero_copy) {
    uint8_t* src = nullptr;
    if (ctx_->mrs().CheckLocal(w.sge[0], pd_, /*write=*/false, &src) !=
        AccessResult::kOk) {
      FailWqe(w, WcCause::kLocalProtection);
      EnterError(QpErrorEvent::kNone);
      return TxResult::kError;
    }
    body = absl::MakeConstSpan(src, w.sge[0].length);
    buf.resize(hdr);
  } else {
    const WcCause st = Gather(w, hdr, &buf);
    if (st != WcCause::kSuccess) {
      FailWqe(w, st);
      EnterError(QpErrorEvent::kNone);
      return TxResult::kError;
    }
  }
  // WRITE payloads are placed directly into the responder's MR; a READ
  // with one SGE asks for a placed response (into that SGE).
  std::optional<PlacementDescriptor> place;
  if ((h.op == VerbsOp::kWrite || h.op == VerbsOp::kWriteImm) && h.length) {
    place = PlacementDescriptor{
        .key = PlaceKey(PlaceKind::kWrite, h.dst_qpn, h.rkey),
        .offset = h.remote_addr,
        .head_bytes = static_cast<uint32_t>(hdr)};
  } else if (h.op == VerbsOp::kReadReq && h.length && w.sge.size() == 1) {
    h.flags |= kFlagPlaceResponse;
  }
  EncodeHeader(h, buf.data());
  const SendResult r =
      zero_copy ? ctx_->sends().SendZeroCopy(
                      remote_, stream_, absl::MakeConstSpan(buf.data(), hdr),
                      body, MakeCookie(qpn_, false, w.psn), place)
                : ctx_->sends().Send(remote_, stream_, buf,
                                     MakeCookie(qpn_, false, w.psn), place);
  if (r == SendResult::kRetry) return TxResult::kRetry;
  if (r == SendResult::kFailed) {
    FailWqe(w, WcCause::kTransportFailure);  // refused for good
    EnterError(QpErrorEvent::kNone);
    return TxResult::kError;
  }
  last_ack_sent_ = h.ack_psn;
  w.sent = true;
  if (zero_copy) ++w.zero_copy_pending;
  ++counters_.requests_sent;
  return TxResult::kSent;
}

int64_t Qp::IndexOfPsn(uint32_t psn) {
  if (sq_ack_ >= sq_send_) return -1;
  const int32_t d = PsnDiff(psn, Wqe(sq_ack_).psn);
  if (d < 0 || sq_ack_ + static_cast<uint64_t>(d) >= sq_send_) return -1;
  return static_cast<int64_t>(sq_ack_ + d);
}

void Qp::RcAckUpTo(uint32_t psn) {
  const uint64_t before = sq_ack_;
  while (sq_ack_ < sq_send_) {
    SendWqe& w = Wqe(sq_ack_);
    if (PsnDiff(psn, w.psn) < 0) break;
    const bool needs_response = w.opcode == IBV_WR_RDMA_READ ||
                                w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
                                w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
    // A READ/atomic is complete only with its response, which precedes
    // any ACK covering it on the responder's ordered stream.
    if (needs_response && !w.done) break;
    w.done = true;
    ++sq_ack_;
  }
  if (sq_ack_ != before) ack_progress_at_ = Context::Now();
  CompleteSendHead();
}

bool Qp::RetryCandidate(TimeNs now) const {
  if (type_ != IBV_QPT_RC || (state_ != IBV_QPS_RTS && state_ != IBV_QPS_SQD) ||
      attr_.timeout == 0 || sq_ack_ >= sq_send_) {
    return false;
  }
  const SendWqe& w = sq_[sq_ack_ % sq_.size()];
  if (!w.delivered) return false;  // braid is still delivering it
  const DurationNs limit = Max(DurationNs((int64_t{4096} << attr_.timeout) *
                                          (int64_t{attr_.retry_cnt} + 1)),
                               ctx_->min_ack_timeout());
  const TimeNs since =
      Max(Max(w.delivered_at, ack_progress_at_), transport_progress_at_);
  return now - since >= limit;
}

void Qp::ResolveRetry(TimeNs now, uint64_t peer_packets) {
  SendWqe& w = Wqe(sq_ack_);
  const bool needs_response = w.opcode == IBV_WR_RDMA_READ ||
                              w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
                              w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
  if (needs_response && peer_packets != last_peer_packets_) {
    // Packets keep coming from the peer: the response may be under way (a
    // large READ response completes at verbs level only as a whole).
    last_peer_packets_ = peer_packets;
    transport_progress_at_ = now;
    return;
  }
  ++counters_.retry_timeouts;
  FailWqe(w, WcCause::kAckTimeout);
  EnterError(QpErrorEvent::kNone);
}

void Qp::ReleaseZeroCopy(uint32_t psn) {
  // The WR may be acked already (sq_ack_ past it) and waiting for this:
  // look from the oldest uncompleted one.
  if (sq_head_ >= sq_tail_) return;
  const int32_t d = PsnDiff(psn, Wqe(sq_head_).psn);
  if (d < 0 || static_cast<uint64_t>(d) >= sq_tail_ - sq_head_) return;
  SendWqe& w = Wqe(sq_head_ + static_cast<uint64_t>(d));
  if (w.psn != psn || w.zero_copy_pending == 0) return;
  --w.zero_copy_pending;
  CompleteSendHead();
}

void Qp::OnRequestDelivered(uint32_t psn, TimeNs now) {
  const int64_t idx = IndexOfPsn(psn);
  if (idx < 0) return;
  SendWqe& w = Wqe(idx);
  if (!w.sent || w.delivered) return;
  w.delivered = true;
  w.delivered_at = now;
  // No baseline yet: the first look at the peer's packets counts as
  // progress, so a response gets between one and two timeouts to start.
  last_peer_packets_ = ~uint64_t{0};
}

void Qp::RcOnResponse(const VerbsHeader& h, absl::Span<const uint8_t> payload,
                      const Arrival& arrival) {
  switch (h.op) {
    case VerbsOp::kAck:
      RcAckUpTo(h.psn);
      return;
    case VerbsOp::kReadResp:
    case VerbsOp::kAtomicResp: {
      const int64_t idx = IndexOfPsn(h.psn);
      if (idx < 0) {
        ++counters_.unexpected_responses;
        return;
      }
      SendWqe& w = Wqe(idx);
      const bool read = h.op == VerbsOp::kReadResp;
      const uint64_t got = payload.size() + arrival.placed_len;
      if ((read && (w.opcode != IBV_WR_RDMA_READ || got != w.length)) ||
          (!read && w.opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
           w.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD)) {
        ++counters_.unexpected_responses;
        return;
      }
      if (arrival.placement != PlacementStatus::kNone) {
        // Placed into this WR's SGE by PlaceTarget, which checked the WR
        // and its lkey per fragment; a refusal there is the lkey failing.
        if (arrival.descriptor.key !=
            PlaceKey(PlaceKind::kReadResp, qpn_, h.psn)) {
          ++counters_.unexpected_responses;
          return;
        }
        if (arrival.placement == PlacementStatus::kRefused) {
          FailWqe(w, WcCause::kLocalProtection);
          RcAckUpTo(PsnAdd(h.psn, kPsnMask));
          EnterError(QpErrorEvent::kNone);
          return;
        }
        ctx_->counters().bytes_placed += arrival.placed_len;
        w.done = true;
        RcAckUpTo(h.psn);
        ResumeFenced();
        return;
      }
      uint8_t orig[8];
      std::memcpy(orig, &h.orig, 8);
      RecvWqe target;
      target.sge.assign(w.sge.begin(), w.sge.end());
      for (const ibv_sge& s : w.sge) target.total += s.length;
      const WcCause st = read ? Scatter(target, {payload})
                              : Scatter(target, {absl::MakeConstSpan(orig, 8)});
      if (st != WcCause::kSuccess) {
        FailWqe(w, WcCause::kLocalProtection);
        RcAckUpTo(PsnAdd(h.psn, kPsnMask));
        EnterError(QpErrorEvent::kNone);
        return;
      }
      ctx_->counters().bytes_copied += read ? payload.size() : 8;
      w.done = true;
      RcAckUpTo(h.psn);
      ResumeFenced();
      return;
    }
    case VerbsOp::kNak: {
      RcAckUpTo(PsnAdd(h.psn, kPsnMask));  // everything before it is done
      const int64_t idx = IndexOfPsn(h.psn);
      if (idx < 0) {
        ++counters_.unexpected_responses;
        return;
      }
      SendWqe& w = Wqe(idx);
      switch (static_cast<NakCode>(h.syndrome)) {
        case NakCode::kRnr:
          ++counters_.rnr_naks_received;
          if (attr_.rnr_retry != 7 && w.rnr_left == 0) {
            FailWqe(w, WcCause::kRnrRetryExceeded);
            EnterError(QpErrorEvent::kNone);
            return;
          }
          if (attr_.rnr_retry != 7) --w.rnr_left;
          ++counters_.rnr_retries;
          // Go back to the NAKed request: the responder dropped every later
          // one. Resend after the responder's RNR timer.
          for (uint64_t i = idx; i < sq_send_; ++i) Wqe(i).sent = false;
          sq_send_ = static_cast<uint64_t>(idx);
          ack_progress_at_ = Context::Now();
          rnr_until_ = ack_progress_at_ + RnrDelay(h.imm & 31);
          ctx_->NeedPump(this);
          return;
        case NakCode::kRemoteAccess:
          // Unlike RC, neither QP goes to ERR: the responder skipped this
          // request (wrote nothing) and goes on with the next, so this WR
          // fails alone and later WRs run (docs/verbs.md, remote access
          // errors).
          FailWqe(w, WcCause::kRemoteAccess);
          RcAckUpTo(h.psn);
          ResumeFenced();
          return;
        case NakCode::kInvalidRequest:
          FailWqe(w, WcCause::kRemoteInvalidRequest);
          break;
        default:
          FailWqe(w, WcCause::kRemoteOperation);
          break;
      }
      // The WR's completion reports it; devices raise no event.
      EnterError(QpErrorEvent::kNone);
      return;
    }
    default:
      ++counters_.unexpected_responses;
      return;
  }
}

void Qp::RcSendResponse(VerbsOp op, uint32_t psn, uint8_t syndrome,
                        uint32_t imm, absl::Span<const uint8_t> data,
                        uint64_t orig, bool place) {
  VerbsHeader h;
  h.op = op;
  h.syndrome = syndrome;
  h.dst_qpn = attr_.dest_qp_num;
  h.src_qpn = qpn_;
  h.psn = psn;
  h.ack_psn = LastProcessedPsn();
  h.imm = imm;
  h.orig = orig;
  std::vector<uint8_t>& buf = ctx_->sends().scratch();
  const size_t hdr = HeaderBytes(op);
  std::optional<PlacementDescriptor> placement;
  if (place && !data.empty()) {
    placement = PlacementDescriptor{
        .key = PlaceKey(PlaceKind::kReadResp, h.dst_qpn, psn),
        .offset = 0,
        .head_bytes = static_cast<uint32_t>(hdr)};
  }
  const uint64_t cookie = MakeCookie(qpn_, true, psn);
  last_ack_sent_ = h.ack_psn;
  // A large READ response leaves from the responder's registered memory,
  // as a NIC's DMA would read it (the context's zero-copy drain keeps the
  // MR from going away meanwhile); queued behind others, or refused for
  // now, it is copied.
  if (op == VerbsOp::kReadResp && data.size() >= kZeroCopyMinBytes &&
      pending_out_.empty()) {
    buf.resize(hdr);
    EncodeHeader(h, buf.data());
    if (ctx_->sends().SendZeroCopy(remote_, stream_, buf, data, cookie,
                                   placement) != SendResult::kRetry) {
      return;
    }
  }
  buf.resize(hdr + data.size());
  EncodeHeader(h, buf.data());
  if (!data.empty()) std::memcpy(buf.data() + hdr, data.data(), data.size());
  SendOrQueue(buf, cookie, placement);
}

void Qp::RcResponderError(NakCode code, uint32_t psn, QpErrorEvent event) {
  if (type_ == IBV_QPT_UC) {
    UcDrop(psn);
    return;
  }
  RcSendResponse(VerbsOp::kNak, psn, static_cast<uint8_t>(code), 0, {}, 0);
  EnterError(event);
}

void Qp::RcNoReceive(uint32_t psn) {
  if (type_ == IBV_QPT_UC) {
    UcDrop(psn);  // UC never waits out RNR
    return;
  }
  ++counters_.rnr_naks_sent;
  RcSendResponse(VerbsOp::kNak, psn, static_cast<uint8_t>(NakCode::kRnr),
                 attr_.min_rnr_timer, {}, 0);
}

void Qp::UcDrop(uint32_t psn) {
  // UC has no NAK: the message is lost to the responder and the requester
  // completes it as sent. The ACK only lets braid0's requester retire it.
  ++counters_.uc_dropped;
  ++ctx_->counters().uc_dropped;
  expected_psn_ = PsnAdd(psn, 1);
  ctx_->NeedAck(this);
}

void Qp::FlushAck() {
  if (state_ != IBV_QPS_RTR && state_ != IBV_QPS_RTS && state_ != IBV_QPS_SQD) {
    return;
  }
  if (!ack_owed()) return;
  ++counters_.acks_sent;
  const uint32_t psn = LastProcessedPsn();
  RcSendResponse(VerbsOp::kAck, psn, 0, 0, {}, 0);
}

void Qp::RcOnRequest(const VerbsHeader& h, absl::Span<const uint8_t> payload,
                     const Arrival& arrival) {
  const int32_t d = PsnDiff(h.psn, expected_psn_);
  if (d != 0) {
    // Later than expected: dropped after an RNR NAK, the requester resends
    // it. Earlier: a duplicate; acknowledge again.
    ++counters_.dropped_out_of_sequence;
    if (d < 0) {
      last_ack_sent_ = PsnAdd(last_ack_sent_, kPsnMask);
      ctx_->NeedAck(this);
    }
    return;
  }
  ++counters_.requests_received;
  switch (h.op) {
    case VerbsOp::kSend:
    case VerbsOp::kSendImm: {
      RecvWqe* r = PeekRecv();
      if (r == nullptr) {
        RcNoReceive(h.psn);
        return;
      }
      const WcCause st = Scatter(*r, {payload});
      if (st != WcCause::kSuccess) {
        CompleteRecv(*r, st, IBV_WC_RECV, 0, false, 0, h.src_qpn, remote_.port,
                     false, false);
        PopRecv();
        // The receive's completion reports the error.
        RcResponderError(st == WcCause::kLocalLength ? NakCode::kInvalidRequest
                                                     : NakCode::kRemoteOp,
                         h.psn, QpErrorEvent::kNone);
        return;
      }
      ctx_->counters().bytes_copied += payload.size();
      CompleteRecv(*r, WcCause::kSuccess, IBV_WC_RECV,
                   static_cast<uint32_t>(payload.size()),
                   h.op == VerbsOp::kSendImm, h.imm, h.src_qpn, remote_.port,
                   false, (h.flags & kFlagSolicited) != 0);
      PopRecv();
      break;
    }
    case VerbsOp::kWrite:
    case VerbsOp::kWriteImm:
      if (!RcOnWrite(h, payload, arrival)) return;
      break;
    case VerbsOp::kReadReq: {
      if (type_ == IBV_QPT_UC) {  // not a UC operation
        RcResponderError(NakCode::kInvalidRequest, h.psn,
                         QpErrorEvent::kReqErr);
        return;
      }
      uint8_t* src = nullptr;
      if (h.length > 0) {
        const AccessResult a = RemoteAccess(h.rkey, h.remote_addr, h.length,
                                            IBV_ACCESS_REMOTE_READ, &src);
        if (a != AccessResult::kOk) {
          RcAccessError(a, h.psn);
          return;
        }
      }
      if (h.length > ctx_->max_message_bytes() - kMaxHeaderBytes) {
        RcResponderError(NakCode::kInvalidRequest, h.psn,
                         QpErrorEvent::kReqErr);
        return;
      }
      expected_psn_ = PsnAdd(expected_psn_, 1);
      RcSendResponse(VerbsOp::kReadResp, h.psn, 0, 0,
                     absl::MakeConstSpan(src, h.length), 0,
                     (h.flags & kFlagPlaceResponse) != 0);
      return;
    }
    case VerbsOp::kCmpSwap:
    case VerbsOp::kFetchAdd: {
      if (type_ == IBV_QPT_UC || h.remote_addr % 8 != 0) {
        RcResponderError(NakCode::kInvalidRequest, h.psn,
                         QpErrorEvent::kReqErr);
        return;
      }
      uint8_t* p = nullptr;
      const AccessResult a =
          RemoteAccess(h.rkey, h.remote_addr, 8, IBV_ACCESS_REMOTE_ATOMIC, &p);
      if (a != AccessResult::kOk) {
        RcAccessError(a, h.psn);
        return;
      }
      auto* target = reinterpret_cast<uint64_t*>(p);
      uint64_t orig;
      if (h.op == VerbsOp::kFetchAdd) {
        orig = __atomic_fetch_add(target, h.compare_add, __ATOMIC_SEQ_CST);
      } else {
        orig = h.compare_add;
        __atomic_compare_exchange_n(target, &orig, h.swap, false,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      }
      expected_psn_ = PsnAdd(expected_psn_, 1);
      RcSendResponse(VerbsOp::kAtomicResp, h.psn, 0, 0, {}, orig);
      return;
    }
    default:
      return;
  }
  expected_psn_ = PsnAdd(expected_psn_, 1);
  ctx_->NeedAck(this);
}

bool Qp::RcOnWrite(const VerbsHeader& h, absl::Span<const uint8_t> payload,
                   const Arrival& arrival) {
  uint8_t* dst = nullptr;
  if (h.length > 0) {
    const AccessResult a = RemoteAccess(h.rkey, h.remote_addr, h.length,
                                        IBV_ACCESS_REMOTE_WRITE, &dst);
    if (a != AccessResult::kOk) {
      RcAccessError(a, h.psn);
      return false;
    }
  }
  const bool placed = arrival.placement != PlacementStatus::kNone;
  if (placed) {
    // PlaceTarget made the same checks per fragment before writing; a
    // refusal (or a descriptor that is not this header's target: a forged
    // message) is a remote access error.
    if (arrival.placement == PlacementStatus::kRefused ||
        arrival.descriptor.key != PlaceKey(PlaceKind::kWrite, qpn_, h.rkey) ||
        arrival.descriptor.offset != h.remote_addr) {
      RcAccessError(AccessResult::kBadKey, h.psn);
      return false;
    }
  }
  RecvWqe* r = nullptr;
  if (h.op == VerbsOp::kWriteImm) {
    r = PeekRecv();
    if (r == nullptr) {
      // The payload may already be in place: RC's requester sends the whole
      // WRITE_IMM again after the RNR timer (same bytes); UC's is done.
      RcNoReceive(h.psn);
      return false;
    }
  }
  if (placed) {
    ctx_->counters().bytes_placed += h.length;
  } else if (h.length > 0) {
    std::memcpy(dst, payload.data(), h.length);
    ctx_->counters().bytes_copied += h.length;
  }
  if (r != nullptr) {
    CompleteRecv(*r, WcCause::kSuccess, IBV_WC_RECV_RDMA_WITH_IMM, h.length,
                 true, h.imm, h.src_qpn, remote_.port, false,
                 (h.flags & kFlagSolicited) != 0);
    PopRecv();
  }
  return true;
}

}  // namespace braid::verbs_compat

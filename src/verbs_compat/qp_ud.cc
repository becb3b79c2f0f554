// Qp, unreliable datagram: sends go unordered (stream 0) to the address
// handle's endpoint, on the path its GRH flow label names (Ah::flow), and
// complete as soon as they are handed to the endpoint; receives carry a
// 40-byte GRH in front of the payload.
#include <cstring>

#include "verbs_compat/context.h"
#include "verbs_compat/gid.h"
#include "verbs_compat/limits.h"
#include "verbs_compat/qp.h"

namespace braid::verbs_compat {

Qp::TxResult Qp::UdTransmit(SendWqe& w) {
  if (w.length > kUdMaxPayload) {
    FailWqe(w, WcCause::kLocalLength);
    return TxResult::kSent;
  }
  VerbsHeader h;
  h.op =
      w.opcode == IBV_WR_SEND_WITH_IMM ? VerbsOp::kUdSendImm : VerbsOp::kUdSend;
  h.flags = (w.send_flags & IBV_SEND_SOLICITED) ? kFlagSolicited : 0;
  h.dst_qpn = w.ud_qpn;
  h.src_qpn = qpn_;
  h.imm = w.imm;
  h.qkey = w.ud_qkey;
  std::vector<uint8_t>& buf = ctx_->sends().scratch();
  const size_t hdr = HeaderBytes(h.op);
  const WcCause st = Gather(w, hdr, &buf);
  if (st != WcCause::kSuccess) {
    FailWqe(w, st);
    return TxResult::kSent;
  }
  EncodeHeader(h, buf.data());
  // The AH's flow label picks the path (one UDP source port per label).
  const SendResult r =
      ctx_->sends().Send(w.ud_dest, /*stream=*/0, buf,
                         MakeCookie(qpn_, false, 0), std::nullopt, w.ud_flow);
  if (r == SendResult::kRetry) return TxResult::kRetry;
  w.sent = true;
  w.done = true;
  w.status = WcStatus(r == SendResult::kOk ? WcCause::kSuccess
                                           : WcCause::kUdSendRefused);
  ++counters_.requests_sent;
  return TxResult::kSent;
}

void Qp::UdOnMessage(const NetAddr& from, const VerbsHeader& h,
                     absl::Span<const uint8_t> payload) {
  if (h.op != VerbsOp::kUdSend && h.op != VerbsOp::kUdSendImm) {
    ++counters_.unexpected_responses;
    return;
  }
  if (state_ != IBV_QPS_RTR && state_ != IBV_QPS_RTS && state_ != IBV_QPS_SQD) {
    ++counters_.dropped_bad_state;
    return;
  }
  if (h.qkey != attr_.qkey) {
    ++counters_.dropped_bad_qkey;
    return;
  }
  RecvWqe* r = PeekRecv();
  if (r == nullptr) {
    ++counters_.dropped_no_recv;
    return;
  }
  // GRH: IPv6-style header as RoCE/IB deliver it in the first 40 bytes.
  uint8_t grh[kGrhBytes] = {0};
  grh[0] = 0x60;  // IP version 6
  grh[4] = static_cast<uint8_t>(payload.size() >> 8);
  grh[5] = static_cast<uint8_t>(payload.size());
  grh[6] = 0x1b;  // next header: IB BTH
  grh[7] = 64;    // hop limit
  const ibv_gid sgid = EncodeGid(from);
  const ibv_gid dgid = ctx_->gid();
  std::memcpy(grh + 8, sgid.raw, 16);
  std::memcpy(grh + 24, dgid.raw, 16);
  const WcCause st =
      Scatter(*r, {absl::MakeConstSpan(grh, kGrhBytes), payload});
  if (st == WcCause::kLocalLength) ++counters_.dropped_too_long;
  ++counters_.requests_received;
  CompleteRecv(*r, st, IBV_WC_RECV,
               static_cast<uint32_t>(kGrhBytes + payload.size()),
               h.op == VerbsOp::kUdSendImm, h.imm, h.src_qpn, from.port, true,
               (h.flags & kFlagSolicited) != 0);
  PopRecv();
}

}  // namespace braid::verbs_compat

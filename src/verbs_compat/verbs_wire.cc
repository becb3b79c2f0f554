#include "verbs_compat/verbs_wire.h"

#include <cstring>

namespace braid::verbs_compat {
namespace {

void Put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}
void Put64(uint8_t* p, uint64_t v) {
  Put32(p, static_cast<uint32_t>(v));
  Put32(p + 4, static_cast<uint32_t>(v >> 32));
}
uint32_t Get32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) |
         (uint32_t{p[3]} << 24);
}
uint64_t Get64(const uint8_t* p) {
  return uint64_t{Get32(p)} | (uint64_t{Get32(p + 4)} << 32);
}

bool KnownOp(uint8_t op) {
  switch (static_cast<VerbsOp>(op)) {
    case VerbsOp::kSend:
    case VerbsOp::kSendImm:
    case VerbsOp::kWrite:
    case VerbsOp::kWriteImm:
    case VerbsOp::kReadReq:
    case VerbsOp::kCmpSwap:
    case VerbsOp::kFetchAdd:
    case VerbsOp::kAck:
    case VerbsOp::kReadResp:
    case VerbsOp::kAtomicResp:
    case VerbsOp::kNak:
    case VerbsOp::kUdSend:
    case VerbsOp::kUdSendImm:
      return true;
  }
  return false;
}

}  // namespace

size_t HeaderBytes(VerbsOp op) {
  switch (op) {
    case VerbsOp::kWrite:
    case VerbsOp::kWriteImm:
    case VerbsOp::kReadReq:
      return kBaseHeaderBytes + kRethBytes;
    case VerbsOp::kCmpSwap:
    case VerbsOp::kFetchAdd:
      return kBaseHeaderBytes + kRethBytes + kAtomicEthBytes;
    case VerbsOp::kAtomicResp:
      return kBaseHeaderBytes + 8;
    case VerbsOp::kUdSend:
    case VerbsOp::kUdSendImm:
      return kBaseHeaderBytes + kDethBytes;
    default:
      return kBaseHeaderBytes;
  }
}

bool IsRcRequest(VerbsOp op) {
  return static_cast<uint8_t>(op) >= static_cast<uint8_t>(VerbsOp::kSend) &&
         static_cast<uint8_t>(op) <= static_cast<uint8_t>(VerbsOp::kFetchAdd);
}

size_t EncodeHeader(const VerbsHeader& h, uint8_t* out) {
  out[0] = static_cast<uint8_t>(h.op);
  out[1] = h.flags;
  out[2] = h.syndrome;
  out[3] = kVerbsWireVersion;
  Put32(out + 4, h.dst_qpn);
  Put32(out + 8, h.src_qpn);
  Put32(out + 12, h.psn);
  Put32(out + 16, h.ack_psn);
  std::memcpy(out + 20, &h.imm, 4);  // raw: already in the app's byte order
  uint8_t* p = out + kBaseHeaderBytes;
  switch (h.op) {
    case VerbsOp::kWrite:
    case VerbsOp::kWriteImm:
    case VerbsOp::kReadReq:
    case VerbsOp::kCmpSwap:
    case VerbsOp::kFetchAdd:
      Put64(p, h.remote_addr);
      Put32(p + 8, h.rkey);
      Put32(p + 12, h.length);
      p += kRethBytes;
      if (h.op == VerbsOp::kCmpSwap || h.op == VerbsOp::kFetchAdd) {
        Put64(p, h.compare_add);
        Put64(p + 8, h.swap);
        p += kAtomicEthBytes;
      }
      break;
    case VerbsOp::kAtomicResp:
      Put64(p, h.orig);
      p += 8;
      break;
    case VerbsOp::kUdSend:
    case VerbsOp::kUdSendImm:
      Put32(p, h.qkey);
      Put32(p + 4, 0);
      p += kDethBytes;
      break;
    default:
      break;
  }
  return static_cast<size_t>(p - out);
}

bool DecodeMessage(absl::Span<const uint8_t> msg, VerbsHeader* h,
                   absl::Span<const uint8_t>* payload, uint64_t placed_len) {
  if (msg.size() < kBaseHeaderBytes) return false;
  const uint8_t* in = msg.data();
  if (!KnownOp(in[0]) || in[3] != kVerbsWireVersion) return false;
  h->op = static_cast<VerbsOp>(in[0]);
  const size_t hdr = HeaderBytes(h->op);
  if (msg.size() < hdr) return false;
  h->flags = in[1];
  h->syndrome = in[2];
  h->dst_qpn = Get32(in + 4);
  h->src_qpn = Get32(in + 8);
  h->psn = Get32(in + 12) & kPsnMask;
  h->ack_psn = Get32(in + 16) & kPsnMask;
  std::memcpy(&h->imm, in + 20, 4);
  const uint8_t* p = in + kBaseHeaderBytes;
  switch (h->op) {
    case VerbsOp::kWrite:
    case VerbsOp::kWriteImm:
    case VerbsOp::kReadReq:
    case VerbsOp::kCmpSwap:
    case VerbsOp::kFetchAdd:
      h->remote_addr = Get64(p);
      h->rkey = Get32(p + 8);
      h->length = Get32(p + 12);
      if (h->op == VerbsOp::kCmpSwap || h->op == VerbsOp::kFetchAdd) {
        h->compare_add = Get64(p + 16);
        h->swap = Get64(p + 24);
      }
      break;
    case VerbsOp::kAtomicResp:
      h->orig = Get64(p);
      break;
    case VerbsOp::kUdSend:
    case VerbsOp::kUdSendImm:
      h->qkey = Get32(p);
      break;
    default:
      break;
  }
  *payload = msg.subspan(hdr);
  const bool may_place = h->op == VerbsOp::kWrite ||
                         h->op == VerbsOp::kWriteImm ||
                         h->op == VerbsOp::kReadResp;
  if (placed_len > 0 && !may_place) return false;
  const uint64_t total = payload->size() + placed_len;
  // Length fields are never trusted: they must agree with what arrived.
  if ((h->op == VerbsOp::kWrite || h->op == VerbsOp::kWriteImm) &&
      h->length != total) {
    return false;
  }
  if ((h->op == VerbsOp::kReadReq || h->op == VerbsOp::kCmpSwap ||
       h->op == VerbsOp::kFetchAdd || h->op == VerbsOp::kAck ||
       h->op == VerbsOp::kNak || h->op == VerbsOp::kAtomicResp) &&
      total != 0) {
    return false;
  }
  if ((h->op == VerbsOp::kCmpSwap || h->op == VerbsOp::kFetchAdd) &&
      h->length != 8) {
    return false;
  }
  return true;
}

}  // namespace braid::verbs_compat

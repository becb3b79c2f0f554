// Ep's RMA: the initiator's writes and reads (RmaOp, completed by the
// target's answers), the target's checks against the domain's memory
// regions, and the placement handler that lets braid put a write's or a
// read response's bytes straight where they belong. Messages:
// wire_header.h. Every remote access is checked (key, bounds, the
// region's and the endpoint's access flags) for every fragment before a
// byte is written; a refused access is answered with the reason, fails
// only its own operation, and touches nothing.
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libfabric/config.h"
#include "libfabric/ep.h"
#include "libfabric/provider.h"

namespace braid::libfabric {
namespace {

constexpr uint64_t kSlotMask = 0xffffffffull;
constexpr uint32_t kGenMask = 0x7fffffff;  // keeps bit 63 for kRmaCookie

uint32_t SlotOf(uint64_t id) { return static_cast<uint32_t>(id & kSlotMask); }
uint32_t GenOf(uint64_t id) { return static_cast<uint32_t>(id >> 32); }

int ErrnoOf(RmaStatus s) {
  return s == RmaStatus::kRefused ? FI_EIO : FI_EACCES;
}

// Copies `from` over the iovs, in order.
void Scatter(absl::Span<const uint8_t> from, const iovec* iov, size_t count) {
  size_t done = 0;
  for (size_t i = 0; i < count && done < from.size(); ++i) {
    const size_t n = std::min(iov[i].iov_len, from.size() - done);
    if (n) std::memcpy(iov[i].iov_base, from.data() + done, n);
    done += n;
  }
}

}  // namespace

uint64_t Ep::AllocOp() {
  uint32_t slot;
  if (ops_free_.empty()) {
    slot = static_cast<uint32_t>(ops_.size());
    ops_.emplace_back();
  } else {
    slot = ops_free_.back();
    ops_free_.pop_back();
  }
  RmaOp& op = ops_[slot];
  const uint32_t gen = (op.gen + 1) & kGenMask;
  std::vector<uint8_t> bounce = std::move(op.bounce);
  op = RmaOp();
  op.gen = gen;
  op.live = true;
  op.bounce = std::move(bounce);
  ++live_ops_;
  return (uint64_t{gen} << 32) | slot;
}

void Ep::DropOp(uint64_t id) {
  ops_[SlotOf(id)].live = false;
  --live_ops_;
  ops_free_.push_back(SlotOf(id));
}

RmaOp* Ep::FindOp(uint64_t id) {
  const uint32_t slot = SlotOf(id);
  if (slot >= ops_.size()) return nullptr;
  RmaOp& op = ops_[slot];
  if (!op.live || op.gen != GenOf(id)) return nullptr;
  return &op;
}

bool Ep::TargetAllows(uint64_t remote_cap) const {
  return RmaAllowed(caps, remote_cap);
}

ssize_t Ep::Write(const iovec* iov, size_t count, fi_addr_t dest, uint64_t addr,
                  uint64_t key, uint64_t data, void* context, uint64_t flags,
                  bool inject_call) {
  if (!enabled || !endpoint) return -FI_EOPBADSTATE;
  if (!RmaAllowed(caps, FI_WRITE)) return -FI_EOPNOTSUPP;
  const NetAddr* peer = nullptr;
  size_t len = 0;
  bool inject = false;
  if (const ssize_t r =
          CheckTx(iov, count, dest, flags, inject_call, &peer, &len, &inject)) {
    return r;
  }
  const uint64_t id = AllocOp();
  RmaOp& op = ops_[SlotOf(id)];
  op.want_completion =
      !inject_call && tx_cq && (!tx_selective || (flags & FI_COMPLETION));
  op.context = inject_call ? nullptr : context;
  op.peer = *peer;
  op.addr = addr;
  op.len = len;
  const bool has_data = (flags & FI_REMOTE_CQ_DATA) != 0;
  const auto hdr = EncodeHeader(
      {.kind = MsgKind::kWrite, .has_data = has_data, .tag = id, .data = data});
  SendOptions o{.stream = kStream,
                .cookie = kRmaCookie | id,
                .placement = PlacementDescriptor{
                    .key = key, .offset = addr, .head_bytes = kHeaderBytes}};
  const absl::Status s =
      SendWithHeader(*peer, hdr, iov, count, len, !inject, o);
  if (s.ok()) return 0;
  DropOp(id);
  if (absl::IsResourceExhausted(s)) return -FI_EAGAIN;
  FI_WARN(Provider(), FI_LOG_EP_DATA, "RMA write to %s: %s\n",
          peer->ToString().c_str(), std::string(s.message()).c_str());
  return absl::IsInvalidArgument(s) ? -FI_EINVAL : -FI_EIO;
}

ssize_t Ep::Read(const iovec* iov, size_t count, fi_addr_t src, uint64_t addr,
                 uint64_t key, void* context, uint64_t flags) {
  if (!enabled || !endpoint) return -FI_EOPBADSTATE;
  if (!RmaAllowed(caps, FI_READ)) return -FI_EOPNOTSUPP;
  if (count > kIovLimit) return -FI_EINVAL;
  const NetAddr* peer = av ? av->Lookup(src) : nullptr;
  if (peer == nullptr) return -FI_EINVAL;
  const size_t len = IovBytes(iov, count);
  if (len > kMaxMessageBytes - kHeaderBytes) return -FI_EMSGSIZE;
  const uint64_t id = AllocOp();
  RmaOp& op = ops_[SlotOf(id)];
  op.is_read = true;
  op.want_completion = tx_cq && (!tx_selective || (flags & FI_COMPLETION));
  op.context = context;
  op.peer = *peer;
  op.addr = addr;
  op.len = len;
  std::copy(iov, iov + count, op.iov.begin());
  op.iov_count = count;
  if (count > 1) {
    if (op.bounce.capacity() < len) op.bounce = endpoint->TakeBuffer(len);
    op.bounce.resize(len);
  }
  const auto hdr = EncodeHeader({.kind = MsgKind::kReadReq, .tag = id});
  const auto body = EncodeReadReq({.key = key, .addr = addr, .len = len});
  SendOptions o{.stream = kStream, .cookie = kRmaCookie | id, .prefix = hdr};
  absl::Status s = endpoint->Send(*peer, body, o);
  if (s.ok()) return 0;
  DropOp(id);
  if (absl::IsResourceExhausted(s)) return -FI_EAGAIN;
  FI_WARN(Provider(), FI_LOG_EP_DATA, "RMA read from %s: %s\n",
          peer->ToString().c_str(), std::string(s.message()).c_str());
  return absl::IsInvalidArgument(s) ? -FI_EINVAL : -FI_EIO;
}

bool Ep::Place(const PlacementRequest& req, absl::Span<uint8_t>* dest) {
  if (req.stream != kStream || req.descriptor.head_bytes != kHeaderBytes ||
      req.msg_len < kHeaderBytes) {
    return false;
  }
  const uint64_t len = req.msg_len - kHeaderBytes;
  if (req.descriptor.key == 0) {  // a read response: into our own buffer
    RmaOp* op = FindOp(req.descriptor.offset);
    if (op == nullptr || !op->is_read || op->peer != req.peer ||
        op->len != len) {
      return false;
    }
    ++op->placed;
    auto* p = op->iov_count == 1 ? static_cast<uint8_t*>(op->iov[0].iov_base)
                                 : op->bounce.data();
    *dest = absl::MakeSpan(p, len);
    return true;
  }
  uint8_t* p = nullptr;
  if (!TargetAllows(FI_REMOTE_WRITE) ||
      domain->mrs.Check(req.descriptor.key, req.descriptor.offset, len,
                        FI_REMOTE_WRITE, &p) != RmaStatus::kOk) {
    return false;
  }
  *dest = absl::MakeSpan(p, len);
  return true;
}

void Ep::HandleRma(const Completion& c, const MsgHeader& h) {
  switch (h.kind) {
    case MsgKind::kWrite:
      TargetWrite(c, h);
      return;
    case MsgKind::kReadReq:
      TargetRead(c, h);
      return;
    case MsgKind::kReadResp:
      ReadResponse(c, h);
      return;
    case MsgKind::kRmaResp:
      RmaAnswer(c, h);
      return;
    case MsgKind::kAtomicReq:
      TargetAtomic(c, h);
      return;
    case MsgKind::kAtomicResp:
      AtomicResponse(c, h);
      return;
    default:
      ++counters.rma_malformed;
  }
}

void Ep::TargetWrite(const Completion& c, const MsgHeader& h) {
  if (c.placement == PlacementStatus::kNone || c.msg_len < kHeaderBytes) {
    ++counters.rma_malformed;  // a write without a target
    Answer(c.peer, h.tag, RmaStatus::kRefused);
    return;
  }
  const uint64_t len = c.msg_len - kHeaderBytes;
  RmaStatus st = RmaStatus::kOk;
  if (c.placement == PlacementStatus::kRefused || len == 0) {
    // Nothing was asked of the handler for an empty write: check it here.
    // A refused one: say why (or that it was refused part-way).
    uint8_t* p = nullptr;
    st = !TargetAllows(FI_REMOTE_WRITE)
             ? RmaStatus::kNoPermission
             : domain->mrs.Check(c.descriptor.key, c.descriptor.offset, len,
                                 FI_REMOTE_WRITE, &p);
    if (c.placement == PlacementStatus::kRefused && st == RmaStatus::kOk) {
      st = RmaStatus::kRefused;
    }
  }
  if (st != RmaStatus::kOk) {
    ++counters.rma_refused[static_cast<size_t>(st)];
    FI_INFO(Provider(), FI_LOG_EP_DATA,
            "refused an RMA write of %lu bytes from %s: %s\n",
            static_cast<unsigned long>(len), c.peer.ToString().c_str(),
            RmaStatusName(st));
  } else if (h.has_data && rx_cq) {
    CqEntry e;
    e.e.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA;
    e.e.len = len;
    e.e.data = h.data;
    e.src = av ? av->Reverse(c.peer) : FI_ADDR_NOTAVAIL;
    rx_cq->Push(e);
  }
  Answer(c.peer, h.tag, st);
}

void Ep::TargetRead(const Completion& c, const MsgHeader& h) {
  if (c.placement != PlacementStatus::kNone) {
    ++counters.rma_malformed;
    Answer(c.peer, h.tag, RmaStatus::kRefused);
    return;
  }
  const ReadReq r = DecodeReadReq(c.data);
  uint8_t* p = nullptr;
  RmaStatus st = RmaStatus::kOk;
  if (!TargetAllows(FI_REMOTE_READ)) {
    st = RmaStatus::kNoPermission;
  } else if (r.len > kMaxMessageBytes - kHeaderBytes) {
    st = RmaStatus::kRefused;
  } else {
    st = domain->mrs.Check(r.key, r.addr, r.len, FI_REMOTE_READ, &p);
  }
  if (st != RmaStatus::kOk) {
    ++counters.rma_refused[static_cast<size_t>(st)];
    FI_INFO(Provider(), FI_LOG_EP_DATA,
            "refused an RMA read of %lu bytes from %s: %s\n",
            static_cast<unsigned long>(r.len), c.peer.ToString().c_str(),
            RmaStatusName(st));
    Answer(c.peer, h.tag, st);
    return;
  }
  // The bytes are copied now: the region may change or close afterwards.
  PendingResponse resp{
      .peer = c.peer,
      .buf = endpoint->TakeBuffer(kHeaderBytes + r.len),
      .placement = PlacementDescriptor{
          .key = 0, .offset = h.tag, .head_bytes = kHeaderBytes}};
  const auto hdr = EncodeHeader({.kind = MsgKind::kReadResp, .tag = h.tag});
  resp.buf.insert(resp.buf.end(), hdr.begin(), hdr.end());
  resp.buf.insert(resp.buf.end(), p, p + r.len);
  Respond(std::move(resp));
}

void Ep::ReadResponse(const Completion& c, const MsgHeader& h) {
  RmaOp* op = FindOp(h.tag);
  if (op == nullptr || !op->is_read || op->peer != c.peer) {
    ++counters.rma_stale;
    return;
  }
  const bool whole = c.placement == PlacementStatus::kPlaced &&
                     c.msg_len >= kHeaderBytes &&
                     c.msg_len - kHeaderBytes == op->len;
  if (!whole) ++counters.rma_malformed;
  FinishOp(h.tag, {.status = whole ? RmaStatus::kOk : RmaStatus::kRefused});
}

void Ep::RmaAnswer(const Completion& c, const MsgHeader& h) {
  RmaOp* op = FindOp(h.tag);
  if (op == nullptr || op->peer != c.peer || op->answered ||
      c.placement != PlacementStatus::kNone) {
    ++counters.rma_stale;
    return;
  }
  RmaStatus st = h.data < kRmaStatusCount ? static_cast<RmaStatus>(h.data)
                                          : RmaStatus::kRefused;
  if (op->is_read || op->is_atomic) {  // answered with data, or a refusal
    FinishOp(h.tag,
             {.status = st == RmaStatus::kOk ? RmaStatus::kRefused : st});
    return;
  }
  op->answered = true;
  op->status = st;
  MaybeFinishWrite(h.tag);
}

void Ep::RmaSendDone(const Completion& c) {
  const uint64_t id = c.cookie & ~kRmaCookie;
  RmaOp* op = FindOp(id);
  if (op == nullptr) return;  // a read already answered
  if (c.type == CompletionType::kSendFailed) {
    ++counters.send_failures;
    FinishOp(id, {.cause = c.cause});
    return;
  }
  op->sent = true;
  op->deadline = std::chrono::steady_clock::now() +
                 std::chrono::nanoseconds(Config().peer_timeout.ns());
  if (!op->is_read && !op->is_atomic) MaybeFinishWrite(id);
}

void Ep::MaybeFinishWrite(uint64_t id) {
  RmaOp* op = FindOp(id);
  if (op != nullptr && op->sent && op->answered) {
    FinishOp(id, {.status = op->status});
  }
}

void Ep::ExpireOps() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_expiry_scan_) return;
  next_expiry_scan_ = now + std::chrono::milliseconds(1);
  const auto timeout = std::chrono::nanoseconds(Config().peer_timeout.ns());
  for (uint32_t slot = 0; slot < ops_.size(); ++slot) {
    RmaOp& op = ops_[slot];
    if (!op.live || !op.sent) continue;
    if (op.placed != op.placed_seen) {  // a read response is arriving
      op.placed_seen = op.placed;
      op.deadline = now + timeout;
    } else if (now >= op.deadline) {
      FinishOp((uint64_t{op.gen} << 32) | slot, {.timed_out = true});
    }
  }
}

void Ep::FinishOp(uint64_t id, RmaEnd end) {
  RmaOp& op = ops_[SlotOf(id)];
  const bool reads =
      op.is_read || (op.is_atomic && op.atomic_kind != AtomicKind::kWrite);
  const uint64_t flags =
      (op.is_atomic ? FI_ATOMIC : FI_RMA) | (reads ? FI_READ : FI_WRITE);
  const RmaStatus status = end.status;
  const FailureCause cause = end.cause;
  const bool ok = status == RmaStatus::kOk && cause == FailureCause::kNone &&
                  !end.timed_out;
  if (ok) {
    if ((op.is_read && op.iov_count > 1) || op.is_atomic) {
      Scatter(op.bounce, op.iov.data(), op.iov_count);
    }
    if (op.want_completion) {
      CqEntry e;
      e.e.op_context = op.context;
      e.e.flags = flags;
      e.e.len = op.len;
      tx_cq->Push(e);
    }
  } else {
    const std::string why =
        end.timed_out ? absl::StrCat(
                            "the target took the request and did not "
                            "answer within ",
                            Config().peer_timeout.ns() / 1000000, " ms")
        : cause != FailureCause::kNone ? FailureCauseName(cause)
                                       : RmaStatusName(status);
    std::string text = absl::StrFormat(
        "braid: %s of %u bytes %s %s at 0x%x failed: %s",
        op.is_atomic ? "atomic"
        : op.is_read ? "RMA read"
                     : "RMA write",
        op.len, op.is_read ? "from" : "to", op.peer.ToString(), op.addr, why);
    FI_WARN(Provider(), FI_LOG_EP_DATA, "%s\n", text.c_str());
    if (tx_cq) {
      CqError e;
      e.e.op_context = op.context;
      e.e.flags = flags;
      if (end.timed_out) {
        e.e.err = FI_ETIMEDOUT;
        e.e.prov_errno = kProvErrRmaTimeout;
      } else if (cause != FailureCause::kNone) {
        e.e.err = ErrnoOf(cause);
        e.e.prov_errno = static_cast<int>(cause);
      } else {
        e.e.err = ErrnoOf(status);
        e.e.prov_errno = kProvErrRma + static_cast<int>(status);
      }
      e.text = std::move(text);
      tx_cq->PushError(std::move(e));
    }
  }
  op.live = false;
  --live_ops_;
  ops_free_.push_back(SlotOf(id));
}

void Ep::Answer(const NetAddr& peer, uint64_t id, RmaStatus status) {
  PendingResponse r{.peer = peer,
                    .buf = endpoint->TakeBuffer(kHeaderBytes),
                    .placement = std::nullopt};
  const auto hdr = EncodeHeader({.kind = MsgKind::kRmaResp,
                                 .has_data = true,
                                 .tag = id,
                                 .data = static_cast<uint64_t>(status)});
  r.buf.insert(r.buf.end(), hdr.begin(), hdr.end());
  Respond(std::move(r));
}

void Ep::Respond(PendingResponse&& r) {
  responses_.push_back(std::move(r));
  FlushResponses();
}

void Ep::FlushResponses() {
  while (!responses_.empty() && endpoint) {
    PendingResponse& r = responses_.front();
    SendOptions o{
        .stream = kStream, .cookie = kResponseCookie, .placement = r.placement};
    absl::Status s = endpoint->SendOwned(r.peer, std::move(r.buf), o);
    if (absl::IsResourceExhausted(s)) return;  // the buffer is still ours
    if (!s.ok()) {
      ++counters.send_failures;
      FI_WARN(Provider(), FI_LOG_EP_DATA, "RMA answer to %s: %s\n",
              r.peer.ToString().c_str(), std::string(s.message()).c_str());
    }
    responses_.pop_front();
  }
}

}  // namespace braid::libfabric

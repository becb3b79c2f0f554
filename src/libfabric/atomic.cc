// Ep's atomics: the initiator sends one atomic request (operands and
// compare values in the message, atomic_math.h for what is offered); the
// target checks it as an RMA access (key, bounds; FI_REMOTE_WRITE to
// change memory, FI_REMOTE_READ to return it), applies it under the
// domain lock, so atomics through one domain are atomic with respect to
// each other, and answers with the old values or the reason it refused.
// The operation completes on that answer (RmaOp, rma.cc).
#include <rdma/fi_errno.h>

#include <cstring>

#include "libfabric/ep.h"
#include "libfabric/provider.h"

namespace braid::libfabric {
namespace {

// Total elements of `count` iocs.
size_t Elements(const fi_ioc* ioc, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) n += ioc[i].count;
  return n;
}

// Appends the elements of the iocs to `out`.
void Gather(const fi_ioc* ioc, size_t count, size_t elem,
            std::vector<uint8_t>* out) {
  for (size_t i = 0; i < count; ++i) {
    const auto* p = static_cast<const uint8_t*>(ioc[i].addr);
    out->insert(out->end(), p, p + ioc[i].count * elem);
  }
}

// The region access an atomic needs at the target.
uint64_t RemoteNeed(AtomicKind kind, int op) {
  if (op == FI_ATOMIC_READ) return FI_REMOTE_READ;
  return kind == AtomicKind::kWrite ? FI_REMOTE_WRITE
                                    : FI_REMOTE_READ | FI_REMOTE_WRITE;
}

}  // namespace

ssize_t Ep::Atomic(AtomicKind kind, const fi_ioc* buf, size_t buf_count,
                   const fi_ioc* cmp, size_t cmp_count, const fi_ioc* res,
                   size_t res_count, fi_addr_t dest, uint64_t addr,
                   uint64_t key, int dt, int op, void* context, uint64_t flags,
                   bool inject_call) {
  if (!enabled || !endpoint) return -FI_EOPBADSTATE;
  const uint64_t dir = kind == AtomicKind::kWrite ? FI_WRITE : FI_READ;
  if (!AtomicAllowed(caps, dir) || !AtomicOffered(kind, dt, op)) {
    return -FI_EOPNOTSUPP;
  }
  if (buf_count > kIovLimit || cmp_count > kIovLimit || res_count > kIovLimit) {
    return -FI_EINVAL;
  }
  const size_t elem = AtomicTypeSize(dt);
  const size_t n = Elements(buf, buf_count);
  const size_t bytes = n * elem;
  if (n == 0 || bytes > kMaxAtomicBytes) return -FI_EINVAL;
  if (AtomicHasCompare(op) && Elements(cmp, cmp_count) != n) return -FI_EINVAL;
  if (kind != AtomicKind::kWrite && Elements(res, res_count) != n) {
    return -FI_EINVAL;
  }
  const NetAddr* peer = av ? av->Lookup(dest) : nullptr;
  if (peer == nullptr) return -FI_EINVAL;
  const uint64_t id = AllocOp();
  RmaOp& o = *FindOp(id);
  o.is_atomic = true;
  o.atomic_kind = kind;
  o.want_completion =
      !inject_call && tx_cq && (!tx_selective || (flags & FI_COMPLETION));
  o.context = inject_call ? nullptr : context;
  o.peer = *peer;
  o.addr = addr;
  o.len = bytes;
  if (kind != AtomicKind::kWrite) {
    for (size_t i = 0; i < res_count; ++i) {
      o.iov[i] = iovec{res[i].addr, res[i].count * elem};
    }
    o.iov_count = res_count;
  }
  std::vector<uint8_t> msg = endpoint->TakeBuffer(kAtomicReqBytes + 2 * bytes);
  const auto hdr = EncodeHeader({.kind = MsgKind::kAtomicReq, .tag = id});
  const auto body = EncodeAtomicReq({.key = key,
                                     .addr = addr,
                                     .count = static_cast<uint32_t>(n),
                                     .datatype = static_cast<uint8_t>(dt),
                                     .op = static_cast<uint8_t>(op),
                                     .kind = static_cast<uint8_t>(kind)});
  msg.insert(msg.end(), hdr.begin(), hdr.end());
  msg.insert(msg.end(), body.begin(), body.end());
  if (AtomicHasOperand(op)) Gather(buf, buf_count, elem, &msg);
  if (AtomicHasCompare(op)) Gather(cmp, cmp_count, elem, &msg);
  absl::Status s = endpoint->SendOwned(
      *peer, std::move(msg), {.stream = kStream, .cookie = kRmaCookie | id});
  if (s.ok()) return 0;
  DropOp(id);
  if (absl::IsResourceExhausted(s)) return -FI_EAGAIN;
  FI_WARN(Provider(), FI_LOG_EP_DATA, "atomic to %s: %s\n",
          peer->ToString().c_str(), std::string(s.message()).c_str());
  return absl::IsInvalidArgument(s) ? -FI_EINVAL : -FI_EIO;
}

void Ep::TargetAtomic(const Completion& c, const MsgHeader& h) {
  const AtomicReq r = DecodeAtomicReq(c.data);
  const auto kind = static_cast<AtomicKind>(r.kind);
  const size_t elem = AtomicTypeSize(r.datatype);
  const uint64_t bytes = uint64_t{r.count} * elem;
  const size_t want = kAtomicReqBytes + (AtomicHasOperand(r.op) ? bytes : 0) +
                      (AtomicHasCompare(r.op) ? bytes : 0);
  RmaStatus st = RmaStatus::kOk;
  uint8_t* p = nullptr;
  if (c.placement != PlacementStatus::kNone ||
      !AtomicOffered(kind, r.datatype, r.op) || r.count == 0 ||
      bytes > kMaxAtomicBytes || c.data.size() != want) {
    ++counters.rma_malformed;
    st = RmaStatus::kRefused;
  } else if (!AtomicAllowed(caps, RemoteNeed(kind, r.op))) {
    st = RmaStatus::kNoPermission;
  } else {
    st = domain->mrs.Check(r.key, r.addr, bytes, RemoteNeed(kind, r.op), &p);
  }
  if (st != RmaStatus::kOk) {
    ++counters.rma_refused[static_cast<size_t>(st)];
    FI_INFO(Provider(), FI_LOG_EP_DATA,
            "refused an atomic of %lu bytes from %s: %s\n",
            static_cast<unsigned long>(bytes), c.peer.ToString().c_str(),
            RmaStatusName(st));
    Answer(c.peer, h.tag, st);
    return;
  }
  const uint8_t* operand =
      AtomicHasOperand(r.op) ? c.data.data() + kAtomicReqBytes : nullptr;
  const uint8_t* compare = AtomicHasCompare(r.op)
                               ? c.data.data() + kAtomicReqBytes + bytes
                               : nullptr;
  const bool fetch = kind != AtomicKind::kWrite;
  PendingResponse resp{
      .peer = c.peer,
      .buf = endpoint->TakeBuffer(kHeaderBytes + (fetch ? bytes : 0)),
      .placement = std::nullopt};
  const auto hdr = EncodeHeader({.kind = MsgKind::kAtomicResp, .tag = h.tag});
  resp.buf.insert(resp.buf.end(), hdr.begin(), hdr.end());
  resp.buf.resize(kHeaderBytes + (fetch ? bytes : 0));
  ApplyAtomic(r.datatype, r.op, p, operand, compare, r.count,
              fetch ? resp.buf.data() + kHeaderBytes : nullptr);
  Respond(std::move(resp));
}

void Ep::AtomicResponse(const Completion& c, const MsgHeader& h) {
  RmaOp* op = FindOp(h.tag);
  if (op == nullptr || !op->is_atomic || op->peer != c.peer ||
      c.placement != PlacementStatus::kNone) {
    ++counters.rma_stale;
    return;
  }
  const size_t fetched = op->atomic_kind == AtomicKind::kWrite ? 0 : op->len;
  if (c.data.size() != kHeaderBytes + fetched) {
    ++counters.rma_malformed;
    FinishOp(h.tag, {.status = RmaStatus::kRefused});
    return;
  }
  op->bounce.assign(c.data.begin() + kHeaderBytes, c.data.end());
  FinishOp(h.tag, {});
}

}  // namespace braid::libfabric

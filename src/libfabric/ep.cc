#include "libfabric/ep.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "braid/stats.h"
#include "libfabric/config.h"
#include "libfabric/provider.h"

namespace braid::libfabric {
namespace {

uint64_t KindFlag(MsgKind k) {
  return k == MsgKind::kTagged ? FI_TAGGED : FI_MSG;
}

}  // namespace

int ErrnoOf(FailureCause c) {
  switch (c) {
    case FailureCause::kPeerUnreachable:
      return FI_EHOSTUNREACH;
    case FailureCause::kPeerRestarted:
      return FI_ECONNRESET;
    case FailureCause::kClosed:
      return FI_ECANCELED;
    default:
      return FI_EIO;
  }
}

size_t IovBytes(const iovec* iov, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) n += iov[i].iov_len;
  return n;
}

bool RmaAllowed(uint64_t caps, uint64_t bit) {
  constexpr uint64_t kDirs =
      FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  return (caps & FI_RMA) && ((caps & kDirs) == 0 || (caps & bit));
}

bool AtomicAllowed(uint64_t caps, uint64_t bits) {
  constexpr uint64_t kDirs =
      FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  return (caps & FI_ATOMIC) && ((caps & kDirs) == 0 || (caps & bits) == bits);
}

const char* Ep::KindName(MsgKind k) const {
  return k == MsgKind::kTagged ? "tagged message" : "message";
}

uint64_t Ep::AllocTx(const TxRequest& r) {
  uint32_t i;
  if (tx_free_.empty()) {
    i = static_cast<uint32_t>(tx_.size());
    tx_.push_back(r);
  } else {
    i = tx_free_.back();
    tx_free_.pop_back();
    tx_[i] = r;
  }
  return static_cast<uint64_t>(i) + 1;
}

absl::Status Ep::SendWithHeader(const NetAddr& peer,
                                absl::Span<const uint8_t> hdr, const iovec* iov,
                                size_t count, size_t len, bool zero_copy,
                                SendOptions& o) {
  if (count <= 1) {
    absl::Span<const uint8_t> body(
        count ? static_cast<const uint8_t*>(iov[0].iov_base) : nullptr, len);
    o.prefix = hdr;
    return zero_copy && len >= kZeroCopyMin
               ? endpoint->SendZeroCopy(peer, body, o)
               : endpoint->Send(peer, body, o);
  }
  std::vector<uint8_t> buf = endpoint->TakeBuffer(hdr.size() + len);
  buf.insert(buf.end(), hdr.begin(), hdr.end());
  for (size_t i = 0; i < count; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    buf.insert(buf.end(), p, p + iov[i].iov_len);
  }
  return endpoint->SendOwned(peer, std::move(buf), o);
}

ssize_t Ep::CheckTx(const iovec* iov, size_t count, fi_addr_t dest,
                    uint64_t flags, bool inject_call, const NetAddr** peer,
                    size_t* len, bool* inject) const {
  if (count > kIovLimit) return -FI_EINVAL;
  *peer = av ? av->Lookup(dest) : nullptr;
  if (*peer == nullptr) return -FI_EINVAL;
  *len = IovBytes(iov, count);
  if (*len > kMaxMessageBytes - kHeaderBytes) return -FI_EMSGSIZE;
  *inject = inject_call || (flags & FI_INJECT) != 0;
  if (*inject && *len > kInjectSize) return -FI_EINVAL;
  return 0;
}

ssize_t Ep::Send(MsgKind kind, const iovec* iov, size_t count, fi_addr_t dest,
                 uint64_t tag, uint64_t data, void* context, uint64_t flags,
                 bool inject_call) {
  if (!enabled || !endpoint) return -FI_EOPBADSTATE;
  const NetAddr* peer = nullptr;
  size_t len = 0;
  bool inject = false;
  if (const ssize_t r =
          CheckTx(iov, count, dest, flags, inject_call, &peer, &len, &inject)) {
    return r;
  }
  const bool want =
      !inject_call && tx_cq && (!tx_selective || (flags & FI_COMPLETION));
  const bool has_data = (flags & FI_REMOTE_CQ_DATA) != 0;
  const auto hdr = EncodeHeader(
      {.kind = kind, .has_data = has_data, .tag = tag, .data = data});
  SendOptions o{.stream = kStream};
  if (want) {
    o.cookie = AllocTx({.context = context,
                        .flags = FI_SEND | KindFlag(kind),
                        .len = len,
                        .tag = tag,
                        .data = data,
                        .want_completion = true});
  }
  const absl::Status s =
      SendWithHeader(*peer, hdr, iov, count, len, want && !inject, o);
  if (s.ok()) return 0;
  if (o.cookie) tx_free_.push_back(static_cast<uint32_t>(o.cookie - 1));
  if (absl::IsResourceExhausted(s)) return -FI_EAGAIN;
  FI_WARN(Provider(), FI_LOG_EP_DATA, "send to %s: %s\n",
          peer->ToString().c_str(), std::string(s.message()).c_str());
  return absl::IsInvalidArgument(s) ? -FI_EINVAL : -FI_EIO;
}

ssize_t Ep::Recv(MsgKind kind, const iovec* iov, size_t count, fi_addr_t src,
                 uint64_t tag, uint64_t ignore, void* context, uint64_t flags) {
  if (!enabled || !endpoint) return -FI_EOPBADSTATE;
  if (count > kIovLimit) return -FI_EINVAL;
  if (flags & FI_MULTI_RECV) return -FI_EBADFLAGS;
  if ((flags & (FI_PEEK | FI_CLAIM | FI_DISCARD)) && kind != MsgKind::kTagged) {
    return -FI_EBADFLAGS;
  }
  PostedRecv r;
  r.context = context;
  r.flags = flags;
  r.iov.assign(iov, iov + count);
  if (kind == MsgKind::kTagged) {
    r.spec.tag = tag;
    r.spec.ignore = ignore;
  }
  if ((caps & FI_DIRECTED_RECV) && src != FI_ADDR_UNSPEC) {
    const NetAddr* a = av ? av->Lookup(src) : nullptr;
    if (a == nullptr) return -FI_EINVAL;
    r.spec.src = *a;
  }
  if (flags & FI_PEEK) return Peek(r);
  if (flags & FI_CLAIM) return Claim(r);
  if (flags & FI_DISCARD) return -FI_EBADFLAGS;  // only with PEEK or CLAIM
  const int k = kind == MsgKind::kTagged ? 1 : 0;
  UnexpectedMsg m;
  if (unexpected_[k].TakeMatch(r.spec, &m)) {
    Deliver(r, kind, m.peer, m.header,
            absl::MakeConstSpan(m.data).subspan(kHeaderBytes));
    endpoint->Recycle(std::move(m.data));
    return 0;
  }
  posted_[k].Post(std::move(r));
  return 0;
}

void Ep::PushRecvError(const PostedRecv& r, int err, int prov_errno,
                       std::string text) {
  if (rx_cq == nullptr) return;
  CqError e;
  e.e.op_context = r.context;
  e.e.flags = FI_RECV | FI_TAGGED;
  e.e.tag = r.spec.tag;
  e.e.err = err;
  e.e.prov_errno = prov_errno;
  e.text = std::move(text);
  rx_cq->PushError(std::move(e));
}

ssize_t Ep::Peek(const PostedRecv& r) {
  Progress();  // what has arrived by now is there to be seen
  const UnexpectedMsg* found = unexpected_[1].Peek(r.spec);
  if (found == nullptr) {
    PushRecvError(r, FI_ENOMSG, kProvErrNoMessage,
                  "braid: no unexpected tagged message matches the peek");
    return 0;
  }
  const MsgHeader h = found->header;
  const size_t len = found->payload_bytes();
  const NetAddr peer = found->peer;
  if (r.flags & (FI_CLAIM | FI_DISCARD)) {
    UnexpectedMsg m;
    unexpected_[1].TakeMatch(r.spec, &m);  // the same, oldest match
    if (r.flags & FI_CLAIM) {
      claimed_[r.context] = std::move(m);
    } else {
      endpoint->Recycle(std::move(m.data));
    }
  }
  PushRecvEntry(r.context, MsgKind::kTagged, h, len, peer);
  return 0;
}

ssize_t Ep::Claim(const PostedRecv& r) {
  auto it = claimed_.find(r.context);
  if (it == claimed_.end()) return -FI_EINVAL;  // nothing claimed with it
  UnexpectedMsg m = std::move(it->second);
  claimed_.erase(it);
  if (r.flags & FI_DISCARD) {
    if (rx_cq) {
      CqEntry c;
      c.e.op_context = r.context;
      c.e.flags = FI_RECV | FI_TAGGED;
      c.e.tag = m.header.tag;
      rx_cq->Push(c);
    }
  } else {
    Deliver(r, MsgKind::kTagged, m.peer, m.header,
            absl::MakeConstSpan(m.data).subspan(kHeaderBytes));
  }
  endpoint->Recycle(std::move(m.data));
  return 0;
}

ssize_t Ep::Cancel(void* context) {
  for (int k = 0; k < 2; ++k) {
    PostedRecv r;
    if (!posted_[k].TakeByContext(context, &r)) continue;
    if (rx_cq) {
      CqError e;
      e.e.op_context = context;
      e.e.flags = FI_RECV | (k ? FI_TAGGED : FI_MSG);
      e.e.tag = r.spec.tag;
      e.e.err = FI_ECANCELED;
      e.e.prov_errno = kProvErrCanceled;
      e.text = "braid: receive canceled by fi_cancel";
      rx_cq->PushError(std::move(e));
    }
    return 0;
  }
  return -FI_ENOENT;
}

void Ep::Deliver(const PostedRecv& r, MsgKind kind, const NetAddr& peer,
                 const MsgHeader& h, absl::Span<const uint8_t> payload) {
  size_t done = 0;
  for (const iovec& v : r.iov) {
    size_t n = std::min(v.iov_len, payload.size() - done);
    if (n) std::memcpy(v.iov_base, payload.data() + done, n);
    done += n;
    if (done == payload.size()) break;
  }
  if (rx_cq == nullptr) return;
  const uint64_t flags =
      FI_RECV | KindFlag(kind) | (h.has_data ? FI_REMOTE_CQ_DATA : 0);
  if (done < payload.size()) {
    CqError e;
    e.e.op_context = r.context;
    e.e.flags = flags;
    e.e.len = done;
    e.e.data = h.data;
    e.e.tag = h.tag;
    e.e.olen = payload.size() - done;
    e.e.err = FI_ETRUNC;
    e.e.prov_errno = kProvErrTruncated;
    e.text = absl::StrCat(
        "braid: ", KindName(kind), " of ", payload.size(), " bytes from ",
        peer.ToString(), " truncated to the receive buffer's ", done, " bytes");
    rx_cq->PushError(std::move(e));
    return;
  }
  if (rx_selective && !(r.flags & FI_COMPLETION)) return;
  PushRecvEntry(r.context, kind, h, done, peer);
}

void Ep::PushRecvEntry(void* context, MsgKind kind, const MsgHeader& h,
                       size_t len, const NetAddr& peer) {
  if (rx_cq == nullptr) return;
  CqEntry c;
  c.e.op_context = context;
  c.e.flags = FI_RECV | KindFlag(kind) | (h.has_data ? FI_REMOTE_CQ_DATA : 0);
  c.e.len = len;
  c.e.data = h.data;
  c.e.tag = h.tag;
  c.src = av ? av->Reverse(peer) : FI_ADDR_NOTAVAIL;
  rx_cq->Push(c);
}

void Ep::HandleRecv(Completion& c) {
  MsgHeader h;
  HeaderError err = DecodeHeader(c.data, &h);
  if (err != HeaderError::kNone) {
    ++counters.dropped[static_cast<size_t>(err)];
    FI_INFO(Provider(), FI_LOG_EP_DATA, "dropped a message from %s: %s\n",
            c.peer.ToString().c_str(), HeaderErrorName(err));
    return;
  }
  if (h.kind != MsgKind::kMsg && h.kind != MsgKind::kTagged) {
    HandleRma(c, h);
    return;
  }
  if (c.placement != PlacementStatus::kNone) {
    ++counters.dropped_placed;
    return;
  }
  const int k = h.kind == MsgKind::kTagged ? 1 : 0;
  PostedRecv r;
  if (posted_[k].TakeMatch(c.peer, h.tag, &r)) {
    Deliver(r, h.kind, c.peer, h,
            absl::MakeConstSpan(c.data).subspan(kHeaderBytes));
    return;
  }
  ++counters.unexpected;
  unexpected_[k].Push({.peer = c.peer, .header = h, .data = std::move(c.data)});
}

void Ep::HandleSendDone(const Completion& c) {
  if (c.cookie & kRmaCookie) {
    RmaSendDone(c);
    return;
  }
  if (c.cookie == kResponseCookie) {  // a target's answer: nobody waits
    if (c.type == CompletionType::kSendFailed) ++counters.send_failures;
    return;
  }
  TxRequest r;
  if (c.cookie != 0 && c.cookie <= tx_.size()) {
    r = tx_[c.cookie - 1];
    tx_free_.push_back(static_cast<uint32_t>(c.cookie - 1));
  }
  if (c.type == CompletionType::kSendDone) {
    if (r.want_completion && tx_cq) {
      CqEntry e;
      e.e.op_context = r.context;
      e.e.flags = r.flags;
      e.e.len = r.len;
      e.e.tag = r.tag;
      tx_cq->Push(e);
    }
    return;
  }
  ++counters.send_failures;
  std::string text = absl::StrCat("braid: send to ", c.peer.ToString(),
                                  " failed: ", FailureCauseName(c.cause));
  FI_WARN(Provider(), FI_LOG_EP_DATA, "%s\n", text.c_str());
  if (tx_cq == nullptr) return;
  CqError e;
  e.e.op_context = r.context;  // null for an inject or unsignalled send
  e.e.flags = r.flags ? r.flags : FI_SEND;
  e.e.len = r.len;
  e.e.tag = r.tag;
  e.e.data = r.data;
  e.e.err = ErrnoOf(c.cause);
  e.e.prov_errno = static_cast<int>(c.cause);
  e.text = std::move(text);
  tx_cq->PushError(std::move(e));
}

void Ep::Progress() {
  if (!endpoint) return;
  const bool full = (unexpected_[0].bytes() + unexpected_[1].bytes()) >=
                    Config().unexpected_bytes;
  if (full) ++counters.backpressure_polls;
  FlushResponses();
  endpoint->Poll(&polled_, full ? 0 : 256);
  for (Completion& c : polled_) {
    if (c.type == CompletionType::kRecv) {
      HandleRecv(c);
    } else {
      HandleSendDone(c);
    }
  }
  endpoint->Recycle(&polled_);
  FlushResponses();
  if (live_ops_ > 0) ExpireOps();
}

void Ep::Flush() {
  if (endpoint) endpoint->Wait(DurationNs::Zero());
}

void Ep::Close() {
  if (!endpoint) return;
  if (fi_log_enabled(Provider(), FI_LOG_INFO, FI_LOG_EP_CTRL)) {
    std::string drops;
    for (size_t i = 1; i < kHeaderErrorCount; ++i) {
      absl::StrAppend(&drops, " ", HeaderErrorName(static_cast<HeaderError>(i)),
                      "=", counters.dropped[i]);
    }
    const std::string local = local_address().ToString();
    FI_INFO(Provider(), FI_LOG_EP_CTRL,
            "endpoint %s closing: unexpected=%lu send_failures=%lu "
            "backpressure_polls=%lu dropped:%s placed=%lu rma_refused: "
            "bad_key=%lu out_of_bounds=%lu no_permission=%lu refused=%lu "
            "rma_stale=%lu rma_malformed=%lu\n",
            local.c_str(), counters.unexpected, counters.send_failures,
            counters.backpressure_polls, drops.c_str(), counters.dropped_placed,
            counters.rma_refused[1], counters.rma_refused[2],
            counters.rma_refused[3], counters.rma_refused[4],
            counters.rma_stale, counters.rma_malformed);
    // One log call per line of the table: libfabric cuts a log message at
    // about 1 KiB, and the table is longer.
    for (absl::string_view line : absl::StrSplit(
             FormatStatsTable(endpoint->stats()), '\n', absl::SkipEmpty())) {
      FI_INFO(Provider(), FI_LOG_EP_CTRL, "endpoint %s: %.*s\n", local.c_str(),
              static_cast<int>(line.size()), line.data());
    }
  }
  // Linger briefly so that acks owed to peers (for messages this side has
  // delivered) go out: otherwise a peer whose last message was received
  // here would see it unacknowledged and fail it after its peer timeout.
  const auto linger_end =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  endpoint->Wait(DurationNs::Zero());
  while (std::chrono::steady_clock::now() < linger_end) {
    endpoint->Poll(&polled_, 0);
    std::this_thread::yield();
  }
  endpoint->Close();
  endpoint->Poll(&polled_);  // the failed sends' buffers come back
  polled_.clear();
  for (auto& q : unexpected_) q.TakeAll();
  claimed_.clear();
  ops_.clear();
  ops_free_.clear();
  live_ops_ = 0;
  responses_.clear();
  endpoint.reset();
}

}  // namespace braid::libfabric

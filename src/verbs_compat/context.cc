#include "verbs_compat/context.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/monotonic_clock.h"
#include "verbs_compat/cq.h"
#include "verbs_compat/gid.h"
#include "verbs_compat/ops.h"
#include "verbs_compat/qp.h"
#include "verbs_compat/verbs_wire.h"

namespace braid::verbs_compat {
namespace {

// Linger: how long the peer must have been quiet before a closing context
// stops answering it. Covers the peer's tail probe and a few backed-off
// RTOs at the default min_rto (1 ms); a peer much slower than that is
// still answered if its re-send comes within the window of the previous.
constexpr DurationNs kLingerQuiet = DurationNs::Millis(10);
constexpr int kCookieResponseBit = 31;

// Only EADDRINUSE ("port N in use", udp_setup's SyscallError) moves on to
// the next port; absl maps EADDRNOTAVAIL (a bind IP not on this host) to a
// code that once made every one of the 2000 ports be tried in vain.
bool PortInUse(const absl::Status& s) {
  return absl::StrContains(s.message(), " in use");
}

}  // namespace

TimeNs Context::Now() { return MonotonicNow(); }

absl::StatusOr<Context*> Context::Open(ibv_device* device,
                                       const VerbsConfig& config) {
  if (config.backend == BackendKind::kVerbsUd) {
    absl::StatusOr<std::unique_ptr<Endpoint>> ep = config.OpenEndpoint(0);
    if (!ep.ok()) {
      return absl::UnavailableError(
          absl::StrCat(config.device_name, ": cannot open a UD endpoint on ",
                       config.ud.device, ": ", ep.status().message()));
    }
    if (!CarriesUd((*ep)->local_address())) {
      return absl::InvalidArgumentError(absl::StrCat(
          config.device_name, ": GID ", config.ud.gid_index, " of ",
          config.ud.device, " (", (*ep)->local_address().ToString(),
          ") is not IPv4-mapped; choose the RoCE v2 IPv4 GID with "
          "BRAID_VERBS_UD_GID_INDEX"));
    }
    return new Context(device, std::move(*ep), config.min_ack_timeout,
                       config.progress_spin);
  }
  absl::Status last = absl::UnavailableError("no port tried");
  uint32_t tried = 0;
  for (uint32_t i = 0; i < config.port_count; ++i) {
    ++tried;
    const uint16_t port = static_cast<uint16_t>(config.port_base + i);
    absl::StatusOr<std::unique_ptr<Endpoint>> ep = config.OpenEndpoint(port);
    if (ep.ok()) {
      return new Context(device, std::move(*ep), config.min_ack_timeout,
                         config.progress_spin);
    }
    last = ep.status();
    if (!PortInUse(last)) break;
  }
  // Ports are tried in turn only while they are in use; any other error
  // (an address not on this host, say) ends the search at once.
  const NetAddr first = NetAddr::Ipv4(config.bind_ipv4, config.port_base);
  return absl::UnavailableError(absl::StrCat(
      "braid0: cannot open an endpoint on ", first.ToString(),
      tried > 1 ? absl::StrCat(" or the next ", tried - 1, " ports") : "", ": ",
      last.message()));
}

Context::Context(ibv_device* device, std::unique_ptr<Endpoint> ep,
                 DurationNs min_ack_timeout, DurationNs progress_spin)
    : ep_(std::move(ep)),
      min_ack_timeout_(min_ack_timeout),
      sends_(ep_.get(), &counters_),
      driver_(this, &mu_, ep_->wait_fd(), progress_spin, &counters_) {
  std::memset(&shell_, 0, sizeof(shell_));
  shell_.owner = this;
  local_ = ep_->local_address();
  max_message_ = ep_->max_message_bytes();
  verbs_context& v = shell_.vctx;
  v.sz = sizeof(verbs_context);
  ibv_context& c = v.context;
  c.device = device;
  c.cmd_fd = -1;
  c.async_fd = async_.fd();
  c.num_comp_vectors = 1;
  pthread_mutex_init(&c.mutex, nullptr);
  c.abi_compat = __VERBS_ABI_IS_EXTENDED;
  FillContextOps(&v);
  ep_->SetPlacementHandler(
      [this](const PlacementRequest& req, absl::Span<uint8_t>* dest) {
        return Place(req, dest);
      });
}

bool Context::Place(const PlacementRequest& req, absl::Span<uint8_t>* dest) {
  Qp* qp = FindQp(PlaceQpnOf(req.descriptor.key));
  if (qp != nullptr && qp->PlaceTarget(req, dest)) return true;
  ++counters_.placement_refused;
  return false;
}

Context::~Context() {
  driver_.Stop();
  if (const char* s = getenv("BRAID_VERBS_STATS"); s && *s && *s != '0') {
    PrintContextStats(local_, counters_, ep_->stats());
  }
  ep_->Close();
  std::vector<Completion> last;
  ep_->Poll(&last);
  ep_.reset();
}

Context* Context::From(const ibv_context* c) {
  const auto* v = reinterpret_cast<const verbs_context*>(
      reinterpret_cast<const char*>(c) - offsetof(verbs_context, context));
  return reinterpret_cast<const ShellT*>(v)->owner;
}

ibv_gid Context::gid() const { return EncodeGid(local_); }

uint32_t Context::AllocQpn() {
  // 24-bit QPNs; skip 0 and 1 (special in IB) and numbers in use.
  for (;;) {
    const uint32_t q = next_qpn_;
    next_qpn_ = (next_qpn_ + 1) & kPsnMask;
    if (next_qpn_ < 2) next_qpn_ = 2;
    if (!qps_.contains(q)) return q;
  }
}

uint32_t Context::RegisterQp(Qp* qp) {
  qps_[qp->qpn()] = qp;
  return qp->qpn();
}

void Context::UnregisterQp(Qp* qp) {
  qps_.erase(qp->qpn());
  std::erase(pump_list_, qp);
  std::erase(ack_list_, qp);
}

Qp* Context::FindQp(uint32_t qpn) const {
  auto it = qps_.find(qpn);
  return it == qps_.end() ? nullptr : it->second;
}

void Context::DrainZeroCopy(std::unique_lock<std::mutex>& lk,
                            DurationNs limit) {
  if (sends_.zero_copy_in_flight() == 0) return;
  const TimeNs deadline = Now() + limit;
  Progress(/*flush_acks=*/true);
  while (sends_.zero_copy_in_flight() > 0 && Now() < deadline) {
    // The progress thread may run in between; the endpoint is only ever
    // touched with the lock held.
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    lk.lock();
    Progress(/*flush_acks=*/true);
  }
}

void Context::NeedPump(Qp* qp) {
  if (!qp->in_pump_list) {
    qp->in_pump_list = true;
    pump_list_.push_back(qp);
  }
}

void Context::NeedAck(Qp* qp) {
  if (!qp->in_ack_list) {
    qp->in_ack_list = true;
    ack_list_.push_back(qp);
  }
}

void Context::HoldAcks() {
  // Replies already carried some (Qp::ack_owed): only the others wait.
  size_t keep = 0;
  for (Qp* qp : ack_list_) {
    if (qp->ack_owed()) {
      ack_list_[keep++] = qp;
    } else {
      qp->in_ack_list = false;
    }
  }
  ack_list_.resize(keep);
  if (ack_list_.empty()) return;
  const TimeNs now = Now();
  if (ack_hold_until_ > now) return;  // a hold runs: never extended
  answers_.Handed(now);
  // Not through polls: until the next call (FlushDueAcks finds it due).
  ack_hold_through_polls_ = answers_.MayHoldThroughPolls();
  ack_hold_until_ = ack_hold_through_polls_ ? now + answers_.limit() : now;
}

void Context::FlushDueAcks() {
  if (ack_list_.empty() || Now() < ack_hold_until_) return;
  if (ack_hold_through_polls_) answers_.HoldExpired();
  FlushAcks();
}

void Context::FlushAcks() {
  ack_hold_until_ = TimeNs::Zero();
  ack_hold_through_polls_ = false;
  if (ack_list_.empty()) return;
  // FlushAck may not add to the list; iterate a stable copy by index.
  for (size_t i = 0; i < ack_list_.size(); ++i) {
    Qp* qp = ack_list_[i];
    qp->in_ack_list = false;
    qp->FlushAck();
  }
  ack_list_.clear();
}

void Context::BeforeAppSleeps() {
  FlushAcks();
  ep_->Wait(DurationNs::Zero());
  driver_.NoteAppBlocked();
}

void Context::PumpAll() {
  if (pump_list_.empty()) return;
  const TimeNs now = Now();
  size_t keep = 0;
  for (size_t i = 0; i < pump_list_.size(); ++i) {
    Qp* qp = pump_list_[i];
    if (qp->Pump(now)) {
      pump_list_[keep++] = qp;
    } else {
      qp->in_pump_list = false;
    }
  }
  pump_list_.resize(keep);
}

void Context::HandleMessage(Completion& c) {
  ++counters_.messages_received;
  VerbsHeader h;
  absl::Span<const uint8_t> payload;
  Arrival arrival;
  if (c.placement != PlacementStatus::kNone) {
    // The head is the verbs header; the rest was placed (or refused).
    arrival.placement = c.placement;
    arrival.descriptor = c.descriptor;
    arrival.placed_len = c.msg_len > c.data.size()
                             ? static_cast<uint32_t>(c.msg_len - c.data.size())
                             : 0;
  }
  if (!DecodeMessage(c.data, &h, &payload, arrival.placed_len) ||
      (arrival.placement != PlacementStatus::kNone &&
       (!payload.empty() ||
        (h.op != VerbsOp::kWrite && h.op != VerbsOp::kWriteImm &&
         h.op != VerbsOp::kReadResp)))) {
    ++counters_.malformed;
    return;
  }
  Qp* qp = FindQp(h.dst_qpn);
  if (qp == nullptr) {
    ++counters_.unknown_qp;
    return;
  }
  qp->OnMessage(c.peer, h, payload, arrival);
}

void Context::Handle(Completion& c) {
  if (c.type == CompletionType::kRecv) {
    HandleMessage(c);
    return;
  }
  // A send completion: the cookie names the QP, whether the message was a
  // response, and the PSN (MakeCookie).
  Qp* qp = FindQp(static_cast<uint32_t>(c.cookie >> 32));
  const uint32_t psn = static_cast<uint32_t>(c.cookie) & kPsnMask;
  const bool response = (c.cookie >> kCookieResponseBit) & 1;
  // Ended reading application memory: the WR may complete (a response's
  // end only lets the drain of ibv_dereg_mr go on).
  if (sends_.OnSendCompletion(&c) && qp != nullptr && !response) {
    qp->ReleaseZeroCopy(psn);
  }
  if (c.type == CompletionType::kSendFailed) {
    ++counters_.transport_failures;
    if (qp != nullptr) qp->OnTransportFailure(psn, response, c.cause);
  } else if (!response && qp != nullptr) {
    qp->OnRequestDelivered(psn, Now());
  }
}

size_t Context::Progress(bool flush_acks) {
  in_step_ = true;
  FlushDueAcks();
  comps_.clear();
  ep_->Poll(&comps_, 512);
  for (Completion& c : comps_) Handle(c);
  PumpAll();
  CheckRetryTimeouts();
  FailOverrunCqs();
  if (flush_acks) FlushAcks();
  in_step_ = false;
  for (CompChannel* ch : held_events_) ch->SignalHeld();
  held_events_.clear();
  return comps_.size();
}

bool Context::HoldEvent(CompChannel* channel) {
  if (!in_step_) return false;
  if (std::find(held_events_.begin(), held_events_.end(), channel) ==
      held_events_.end()) {
    held_events_.push_back(channel);
  }
  return true;
}

int Context::PollTimeoutMs() const {
  if (!ack_list_.empty()) return 0;
  return pump_list_.empty() ? kIdlePollMs : 1;
}

void Context::OnCqOverrun(Cq* cq) {
  ibv_async_event ev{};
  ev.element.cq = cq->ibv();
  ev.event_type = IBV_EVENT_CQ_ERR;
  async_.Raise(ev);
  overrun_cqs_.push_back(cq);
}

void Context::FailOverrunCqs() {
  if (overrun_cqs_.empty()) return;
  const std::vector<Cq*> cqs = std::move(overrun_cqs_);
  overrun_cqs_.clear();
  for (const auto& [qpn, qp] : qps_) {
    const bool uses =
        std::find(cqs.begin(), cqs.end(), qp->send_cq()) != cqs.end() ||
        std::find(cqs.begin(), cqs.end(), qp->recv_cq()) != cqs.end();
    if (uses && qp->state() != IBV_QPS_ERR && qp->state() != IBV_QPS_RESET) {
      qp->EnterError(QpErrorEvent::kFatal);  // WRs flushed
    }
  }
}

void Context::CheckRetryTimeouts() {
  const TimeNs now = Now();
  if (now < next_retry_check_) return;
  next_retry_check_ = now + DurationNs::Millis(1);
  retry_candidates_.clear();
  for (const auto& [qpn, qp] : qps_) {
    if (qp->RetryCandidate(now)) retry_candidates_.push_back(qp);
  }
  if (retry_candidates_.empty()) return;
  // Rare (a request waited out its timeout): ask the endpoint whether
  // packets still come from each peer.
  const std::vector<PeerStats> peers = ep_->peer_stats(/*with_paths=*/false);
  for (Qp* qp : retry_candidates_) {
    uint64_t packets = 0;
    for (const PeerStats& p : peers) {
      if (p.addr == qp->remote()) packets = p.packets_received;
    }
    qp->ResolveRetry(now, packets);
  }
}

void Context::Linger(DurationNs limit) {
  const TimeNs deadline = Now() + limit;
  driver_.Stop();  // this thread owns the endpoint from here on
  std::unique_lock<std::mutex> lk(mu_);
  Progress(/*flush_acks=*/true);
  // Our last ACK may be lost, and the peer then re-sends (tail probe, RTO)
  // until it hears one: keep answering until the peer has been quiet for
  // kLingerQuiet, else its last send fails after peer_timeout although the
  // message arrived (seen with ibv_rc_pingpong at 1-5 % loss). So a close
  // after traffic takes at least kLingerQuiet (the endpoint does not tell
  // when the last datagram came before this call), at most `limit`; a
  // context that never heard from anyone (ibv_devinfo) does not wait.
  uint64_t received = ep_->stats().datagrams_received;
  if (received == 0 && sends_.unacked() == 0) return;
  TimeNs last_rx = Now();
  while (Now() < deadline) {
    const TimeNs now = Now();
    if (sends_.unacked() == 0 && now - last_rx >= kLingerQuiet) break;
    lk.unlock();
    ep_->Wait(DurationNs::Millis(1));
    lk.lock();
    Progress(/*flush_acks=*/true);
    const uint64_t r = ep_->stats().datagrams_received;
    if (r != received) {
      received = r;
      last_rx = Now();
    }
  }
}

void Context::FillStats(braid_verbs_stats* out) {
  std::lock_guard<std::mutex> lk(mu_);
  FillVerbsStats(ep_->stats(), counters_, sends_.zero_copy_in_flight(), out);
  for (const auto& [qpn, qp] : qps_) {
    out->rnr_naks_sent += qp->counters().rnr_naks_sent;
    out->rnr_naks_received += qp->counters().rnr_naks_received;
    out->acks_sent += qp->counters().acks_sent;
  }
}

}  // namespace braid::verbs_compat

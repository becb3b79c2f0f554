#include "verbs_compat/context.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
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

// The thread leaves progress to the application while it called in within
// this window.
constexpr int64_t kAppActiveNs = 100 * 1000;
// While the application drives progress the thread naps this long between
// checks, on the wake eventfd only: polling the endpoint's fd (readable
// nearly always under traffic) and napping 50 us, as before, woke it ~20k
// times a second, and each wake-up preempted a busy-polling application on
// a small machine. A verbs call that blocks ends the nap (NoteAppBlocked);
// an application that just stops calling is taken over within this nap
// plus kAppActiveNs.
constexpr int kAppNapMs = 1;
// Linger: how long the peer must have been quiet before a closing context
// stops answering it. Covers the peer's tail probe and a few backed-off
// RTOs at the default min_rto (1 ms); a peer much slower than that is
// still answered if its re-send comes within the window of the previous.
constexpr DurationNs kLingerQuiet = DurationNs::Millis(10);
// Longest block without a progress step, for the progress thread and an
// application waiting in ibv_get_cq_event alike: a backstop (the endpoint's
// wait fd wakes them for datagrams and protocol timers).
constexpr int kIdlePollMs = 5;
constexpr int kCookieResponseBit = 31;
// Cookies of zero-copy sends are tokens with this bit set (QP cookies
// carry a 24-bit QPN in bits 32..55, so they never have it).
constexpr uint64_t kTokenBit = 1ull << 63;
constexpr size_t kMaxPooledBuffers = 16;

// Only EADDRINUSE ("port N in use", udp_setup's SyscallError) moves on to
// the next port; absl maps EADDRNOTAVAIL (a bind IP not on this host) to a
// code that once made every one of the 2000 ports be tried in vain.
bool PortInUse(const absl::Status& s) {
  return absl::StrContains(s.message(), " in use");
}

// The object an asynchronous event is about.
enum class AsyncKind : uint8_t { kQp, kCq, kSrq, kOther };

AsyncKind AsyncKindOf(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_CQ_ERR:
      return AsyncKind::kCq;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      return AsyncKind::kSrq;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return AsyncKind::kQp;
    default:
      return AsyncKind::kOther;
  }
}

// The ibv_qp, ibv_cq or ibv_srq of `ev`, or nullptr (a port event).
const void* AsyncElementOf(const ibv_async_event& ev) {
  switch (AsyncKindOf(ev.event_type)) {
    case AsyncKind::kQp:
      return ev.element.qp;
    case AsyncKind::kCq:
      return ev.element.cq;
    case AsyncKind::kSrq:
      return ev.element.srq;
    case AsyncKind::kOther:
      break;
  }
  return nullptr;
}

}  // namespace

TimeNs Context::Now() { return MonotonicNow(); }

absl::StatusOr<Context*> Context::Open(ibv_device* device,
                                       const VerbsConfig& config) {
  absl::Status last = absl::UnavailableError("no port tried");
  uint32_t tried = 0;
  for (uint32_t i = 0; i < config.port_count; ++i) {
    ++tried;
    const uint16_t port = static_cast<uint16_t>(config.port_base + i);
    absl::StatusOr<std::unique_ptr<Endpoint>> ep = config.OpenEndpoint(port);
    if (ep.ok()) {
      std::random_device rd;
      return new Context(device, std::move(*ep), rd(), config.min_ack_timeout,
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
                 uint32_t salt, DurationNs min_ack_timeout,
                 DurationNs progress_spin)
    : ep_(std::move(ep)),
      min_ack_timeout_(min_ack_timeout),
      progress_spin_ns_(progress_spin.ns()),
      mrs_(salt) {
  std::memset(&shell_, 0, sizeof(shell_));
  shell_.owner = this;
  local_ = ep_->local_address();
  max_message_ = ep_->max_message_bytes();
  verbs_context& v = shell_.vctx;
  v.sz = sizeof(verbs_context);
  ibv_context& c = v.context;
  c.device = device;
  c.cmd_fd = -1;
  c.async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  c.num_comp_vectors = 1;
  pthread_mutex_init(&c.mutex, nullptr);
  c.abi_compat = __VERBS_ABI_IS_EXTENDED;
  FillContextOps(&v);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  scratch_.reserve(64 * 1024);
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

void Context::StopThread() {
  if (thread_.joinable()) {
    stop_.store(true);
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t r = write(stop_fd_, &one, sizeof(one));
    thread_.join();
  }
}

Context::~Context() {
  StopThread();
  if (const char* s = getenv("BRAID_VERBS_STATS"); s && *s && *s != '0') {
    PrintStats();
  }
  ep_->Close();
  std::vector<Completion> last;
  ep_->Poll(&last);
  ep_.reset();  // before the in-flight buffers it may still point at
  if (shell_.vctx.context.async_fd >= 0) close(shell_.vctx.context.async_fd);
  if (stop_fd_ >= 0) close(stop_fd_);
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

Context::SendResult Context::Send(
    const NetAddr& peer, uint16_t stream, absl::Span<const uint8_t> msg,
    uint64_t cookie, const std::optional<PlacementDescriptor>& placement) {
  if (msg.size() >= kZeroCopyMinBytes && msg.data() == scratch_.data() &&
      msg.size() == scratch_.size()) {
    const uint64_t token = kTokenBit | next_token_++;
    absl::Status s = ep_->SendZeroCopy(
        peer, msg, {.stream = stream, .cookie = token, .placement = placement});
    if (s.ok()) {
      ++unacked_sends_;
      in_flight_.emplace(token, InFlight{std::move(scratch_), cookie});
      if (!free_bufs_.empty()) {
        scratch_ = std::move(free_bufs_.back());
        free_bufs_.pop_back();
      } else {
        scratch_ = std::vector<uint8_t>();
      }
      return SendResult::kOk;
    }
    return SendFailure(s);
  }
  absl::Status s = ep_->Send(
      peer, msg, {.stream = stream, .cookie = cookie, .placement = placement});
  if (s.ok()) {
    ++unacked_sends_;
    return SendResult::kOk;
  }
  return SendFailure(s);
}

Context::SendResult Context::SendZeroCopy(
    const NetAddr& peer, uint16_t stream, absl::Span<const uint8_t> header,
    absl::Span<const uint8_t> body, uint64_t cookie,
    const std::optional<PlacementDescriptor>& placement) {
  absl::Status s =
      ep_->SendZeroCopy(peer, body,
                        {.stream = stream,
                         .cookie = cookie | (1ull << kCookieZeroCopyBit),
                         .placement = placement,
                         .prefix = header});
  if (!s.ok()) return SendFailure(s);
  ++unacked_sends_;
  ++zero_copy_in_flight_;
  ++counters_.zero_copy_sends;
  return SendResult::kOk;
}

void Context::DrainZeroCopy(std::unique_lock<std::mutex>& lk,
                            DurationNs limit) {
  if (zero_copy_in_flight_ == 0) return;
  const TimeNs deadline = Now() + limit;
  Progress(/*flush_acks=*/true);
  while (zero_copy_in_flight_ > 0 && Now() < deadline) {
    // The progress thread may run in between; the endpoint is only ever
    // touched with the lock held.
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    lk.lock();
    Progress(/*flush_acks=*/true);
  }
}

Context::SendResult Context::SendFailure(const absl::Status& s) {
  if (s.code() == absl::StatusCode::kResourceExhausted) {
    ++counters_.send_retries;
    return SendResult::kRetry;
  }
  ++counters_.transport_failures;
  return SendResult::kFailed;
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

void Context::FlushAcks() {
  if (ack_list_.empty()) return;
  // FlushAck may not add to the list; iterate a stable copy by index.
  for (size_t i = 0; i < ack_list_.size(); ++i) {
    Qp* qp = ack_list_[i];
    qp->in_ack_list = false;
    qp->FlushAck();
  }
  ack_list_.clear();
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

void Context::ReleaseZeroCopy(uint64_t cookie) {
  if (!((cookie >> kCookieZeroCopyBit) & 1) || (cookie & kTokenBit)) return;
  if (zero_copy_in_flight_ > 0) --zero_copy_in_flight_;
  Qp* qp = FindQp(static_cast<uint32_t>(cookie >> 32));
  if (qp != nullptr)
    qp->ReleaseZeroCopy(static_cast<uint32_t>(cookie) & kPsnMask);
}

void Context::Handle(Completion& c) {
  if (c.type != CompletionType::kRecv && (c.cookie & kTokenBit)) {
    auto it = in_flight_.find(c.cookie);
    if (it != in_flight_.end()) {
      c.cookie = it->second.cookie;
      if (free_bufs_.size() < kMaxPooledBuffers) {
        free_bufs_.push_back(std::move(it->second.buf));
      }
      in_flight_.erase(it);
    }
  }
  switch (c.type) {
    case CompletionType::kRecv: {
      ++counters_.messages_received;
      VerbsHeader h;
      absl::Span<const uint8_t> payload;
      Arrival arrival;
      if (c.placement != PlacementStatus::kNone) {
        // The head is the verbs header; the rest was placed (or refused).
        arrival.placement = c.placement;
        arrival.descriptor = c.descriptor;
        arrival.placed_len =
            c.msg_len > c.data.size()
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
      return;
    }
    case CompletionType::kSendFailed: {
      if (unacked_sends_ > 0) --unacked_sends_;
      ReleaseZeroCopy(c.cookie);
      ++counters_.transport_failures;
      Qp* qp = FindQp(static_cast<uint32_t>(c.cookie >> 32));
      if (qp != nullptr) {
        qp->OnTransportFailure(static_cast<uint32_t>(c.cookie) & kPsnMask,
                               (c.cookie >> kCookieResponseBit) & 1);
      }
      return;
    }
    case CompletionType::kSendDone: {
      if (unacked_sends_ > 0) --unacked_sends_;
      ReleaseZeroCopy(c.cookie);
      if ((c.cookie >> kCookieResponseBit) & 1) return;
      Qp* qp = FindQp(static_cast<uint32_t>(c.cookie >> 32));
      if (qp != nullptr) {
        qp->OnRequestDelivered(static_cast<uint32_t>(c.cookie) & kPsnMask,
                               Now());
      }
      return;
    }
  }
}

size_t Context::Progress(bool flush_acks) {
  FlushAcks();
  comps_.clear();
  ep_->Poll(&comps_, 512);
  for (Completion& c : comps_) Handle(c);
  PumpAll();
  CheckRetryTimeouts();
  FailOverrunCqs();
  if (flush_acks) FlushAcks();
  return comps_.size();
}

void Context::OnCqOverrun(Cq* cq) {
  ibv_async_event ev{};
  ev.element.cq = cq->ibv();
  ev.event_type = IBV_EVENT_CQ_ERR;
  RaiseAsync(ev);
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
  StopThread();  // this thread owns the endpoint from here on
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
  if (received == 0 && unacked_sends_ == 0) return;
  TimeNs last_rx = Now();
  while (Now() < deadline) {
    const TimeNs now = Now();
    if (unacked_sends_ == 0 && now - last_rx >= kLingerQuiet) break;
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

void Context::NoteAppActivity() {
  last_app_ns_.store(Now().ns(), std::memory_order_relaxed);
}

void Context::EnsureThread() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { ThreadMain(); });
}

void Context::ThreadMain() {
  pollfd fds[2];
  // wait_fd, not fd: the endpoint keeps batching Sends and holding acks
  // for the replies of a busy-polling application (with fd() every ack
  // left alone and each Poll and Send re-armed the timerfd: two sendmsg
  // and two timerfd_settime per ping-pong). So every block below follows
  // a Wait(Zero), which flushes what is held and arms the timer.
  fds[0].fd = ep_->wait_fd();
  fds[0].events = POLLIN;
  fds[1].fd = stop_fd_;
  fds[1].events = POLLIN;
  // False while the application may have left acks held or the timer
  // unarmed since the thread last called Wait(Zero).
  bool flushed = false;
  // Until then the thread polls without blocking (progress_spin after the
  // last step that handled work).
  int64_t spin_until = 0;
  while (!stop_.load()) {
    const int64_t now = Now().ns();
    const int64_t since_app = now - last_app_ns_.load();
    if (now < spin_until && since_app >= kAppActiveNs &&
        app_waiters_.load() == 0) {
      std::unique_lock<std::mutex> lk(mu_, std::try_to_lock);
      if (!lk.owns_lock()) {
        sched_yield();
        continue;
      }
      ++counters_.thread_progress;
      ++counters_.thread_spin_steps;
      // Endpoint::Poll receives and runs due protocol timers itself; the
      // timerfd is armed (Wait(Zero)) before the thread blocks again.
      const bool worked = Progress(/*flush_acks=*/true) > 0;
      if (worked) spin_until = Now().ns() + progress_spin_ns_;
      flushed = false;
      lk.unlock();
      // Spinning must not hold a CPU another thread wants (the
      // application, which may spin on memory for an RDMA WRITE).
      if (!worked) sched_yield();
      continue;
    }
    if (since_app < kAppActiveNs || app_waiters_.load() > 0) {
      // The application is polling: it drives progress. Nap, then check.
      napping_.store(true);
      if (Now().ns() - last_app_ns_.load() < kAppActiveNs ||
          app_waiters_.load() > 0) {
        [[maybe_unused]] int n = poll(&fds[1], 1, kAppNapMs);
      }
      napping_.store(false);
      DrainWake();
      flushed = false;
      continue;
    }
    int timeout_ms = kIdlePollMs;
    {
      std::unique_lock<std::mutex> lk(mu_, std::try_to_lock);
      if (lk.owns_lock()) {
        if (!flushed) {
          ep_->Wait(DurationNs::Zero());
          flushed = true;
        }
        timeout_ms = PollTimeoutMsLocked();
      }
    }
    const int n = poll(fds, 2, timeout_ms);
    if (stop_.load()) break;
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && (fds[1].revents & POLLIN)) DrainWake();
    if (Now().ns() - last_app_ns_.load() < kAppActiveNs) continue;
    std::unique_lock<std::mutex> lk(mu_, std::try_to_lock);
    if (!lk.owns_lock()) {
      sched_yield();
      continue;
    }
    ++counters_.thread_progress;
    if (StepLocked() > 0 && progress_spin_ns_ > 0) {
      spin_until = Now().ns() + progress_spin_ns_;
    }
    flushed = true;
  }
}

Context::WakeFd::WakeFd() : fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Context::WakeFd::~WakeFd() {
  if (fd >= 0) close(fd);
}

bool Context::WaitReadableDrivingProgress(int fd) {
  // While this thread waits here, the progress thread naps: datagrams and
  // the protocol timer (armed in the endpoint's wait fd by Wait(Zero))
  // wake a waiter, which then makes the progress step itself.
  app_waiters_.fetch_add(1);
  if (!napping_.load()) {
    // The thread may be in its own poll of the endpoint (ReqNotifyCq woke
    // it): make it look again, and nap.
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t r = write(stop_fd_, &one, sizeof(one));
  }
  struct Leave {
    std::atomic<int>& n;
    ~Leave() { n.fetch_sub(1); }
  } leave{app_waiters_};
  // One waiter at a time drives the endpoint. The others sleep on their
  // own fd and the hand-off fd: polling the endpoint's wait fd too, each
  // of them woke for every datagram and, finding the lock taken, polled
  // again at once while the fd stayed readable (4 threads blocked in
  // ibv_get_cq_event spent most of their time in poll()).
  pollfd fds[2];
  fds[0].fd = fd;
  fds[0].events = POLLIN;
  fds[1].fd = driver_wake_.fd;
  fds[1].events = POLLIN;
  for (;;) {
    // Consume a hand-off before claiming: a driver that leaves after a
    // failed claim writes the fd again, so no hand-off is lost.
    uint64_t v;
    [[maybe_unused]] ssize_t r = read(driver_wake_.fd, &v, sizeof(v));
    if (!driving_.exchange(true)) {
      const bool ok = DriveProgressUntilReadable(fd);
      driving_.store(false);
      if (app_waiters_.load() > 1) {
        const uint64_t one = 1;
        r = write(driver_wake_.fd, &one, sizeof(one));
      }
      return ok;
    }
    // The poll timeout is a backstop only: the leaving driver wakes us.
    const int n = poll(fds, 2, kIdlePollMs);
    if (n < 0 && errno != EINTR) return false;
    if (n > 0 && (fds[0].revents & (POLLIN | POLLERR | POLLHUP))) return true;
  }
}

bool Context::DriveProgressUntilReadable(int fd) {
  pollfd fds[2];
  fds[0].fd = fd;
  fds[0].events = POLLIN;
  fds[1].fd = ep_->wait_fd();
  fds[1].events = POLLIN;
  int timeout_ms;
  {
    std::unique_lock<std::mutex> lk(mu_);
    ep_->Wait(DurationNs::Zero());  // held acks out, timer armed
    timeout_ms = PollTimeoutMsLocked();
  }
  for (;;) {
    const int n = poll(fds, 2, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (fds[0].revents & (POLLIN | POLLERR | POLLHUP)) return true;
    // A timeout is due too: like the progress thread, make a step at least
    // every kIdlePollMs. (Without it, ibv_rc_pingpong -e under 1 % loss
    // hung in 2 of 6 runs: the timer expiry that should re-send a lost
    // packet was consumed by a Wait(Zero) with no step after it.)
    if (n > 0 && !(fds[1].revents & POLLIN)) continue;
    // Blocks: the holder is an application call (a post, a poll, which
    // drive progress themselves) and lets go soon; going back to poll()
    // instead would spin while the wait fd stays readable.
    std::unique_lock<std::mutex> lk(mu_);
    ++counters_.app_progress;
    StepLocked();
    timeout_ms = PollTimeoutMsLocked();
  }
}

int Context::PollTimeoutMsLocked() const {
  // Owed ACKs go out at once; queued work (an RNR wait, endpoint
  // backpressure) is retried every millisecond.
  if (!ack_list_.empty()) return 0;
  return pump_list_.empty() ? kIdlePollMs : 1;
}

size_t Context::StepLocked() {
  ep_->Wait(DurationNs::Zero());  // consumes an expired protocol timer
  const size_t n = Progress(/*flush_acks=*/true);
  ep_->Wait(DurationNs::Zero());  // held acks out, timer armed: may block
  return n;
}

void Context::DrainWake() {
  uint64_t v;
  [[maybe_unused]] ssize_t r = read(stop_fd_, &v, sizeof(v));
}

void Context::NoteAppBlocked() {
  last_app_ns_.store(0, std::memory_order_relaxed);
  if (napping_.exchange(false)) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t r = write(stop_fd_, &one, sizeof(one));
  }
}

void Context::RaiseAsync(const ibv_async_event& ev) {
  if (async_.size() >= 4096) return;  // an application that never reads
  async_.push_back(ev);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t r =
      write(shell_.vctx.context.async_fd, &one, sizeof(one));
}

bool Context::TakeAsync(ibv_async_event* ev) {
  if (async_.empty()) return false;
  // The count is there: only this and ForgetAsync read it, lock held.
  uint64_t v;
  while (read(shell_.vctx.context.async_fd, &v, sizeof(v)) < 0 &&
         errno == EINTR) {
  }
  *ev = async_.front();
  async_.pop_front();
  if (const void* e = AsyncElementOf(*ev)) ++async_reported_[e];
  return true;
}

uint32_t Context::ForgetAsync(const void* element) {
  const size_t before = async_.size();
  std::erase_if(async_, [element](const ibv_async_event& ev) {
    return AsyncElementOf(ev) == element;
  });
  for (size_t i = async_.size(); i < before; ++i) {
    uint64_t v;
    while (read(shell_.vctx.context.async_fd, &v, sizeof(v)) < 0 &&
           errno == EINTR) {
    }
  }
  const auto it = async_reported_.find(element);
  if (it == async_reported_.end()) return 0;
  const uint32_t reported = it->second;
  async_reported_.erase(it);
  return reported;
}

const ibv_context* AsyncEventContext(const ibv_async_event& ev) {
  switch (AsyncKindOf(ev.event_type)) {
    case AsyncKind::kQp:
      return ev.element.qp->context;
    case AsyncKind::kCq:
      return ev.element.cq->context;
    case AsyncKind::kSrq:
      return ev.element.srq->context;
    case AsyncKind::kOther:
      break;
  }
  return nullptr;
}

void AckAsyncEvent(const ibv_async_event& ev) {
  pthread_mutex_t* mu = nullptr;
  pthread_cond_t* cond = nullptr;
  uint32_t* completed = nullptr;
  switch (AsyncKindOf(ev.event_type)) {
    case AsyncKind::kQp:
      mu = &ev.element.qp->mutex;
      cond = &ev.element.qp->cond;
      completed = &ev.element.qp->events_completed;
      break;
    case AsyncKind::kCq:
      mu = &ev.element.cq->mutex;
      cond = &ev.element.cq->cond;
      completed = &ev.element.cq->async_events_completed;
      break;
    case AsyncKind::kSrq:
      mu = &ev.element.srq->mutex;
      cond = &ev.element.srq->cond;
      completed = &ev.element.srq->events_completed;
      break;
    case AsyncKind::kOther:
      return;
  }
  pthread_mutex_lock(mu);
  ++*completed;
  pthread_cond_broadcast(cond);
  pthread_mutex_unlock(mu);
}

void WaitAsyncAcks(pthread_mutex_t* mu, pthread_cond_t* cond,
                   const uint32_t* completed, uint32_t reported) {
  pthread_mutex_lock(mu);
  while (*completed != reported) pthread_cond_wait(cond, mu);
  pthread_mutex_unlock(mu);
}

void Context::FillStats(braid_verbs_stats* out) {
  std::lock_guard<std::mutex> lk(mu_);
  std::memset(out, 0, sizeof(*out));
  const EndpointStats s = ep_->stats();
  out->datagrams_sent = s.datagrams_sent;
  out->datagrams_received = s.datagrams_received;
  out->retransmits = s.reliability.retransmits;
  out->messages_sent = s.messages_sent;
  out->messages_received = s.messages_received;
  out->malformed = counters_.malformed;
  out->bytes_placed = counters_.bytes_placed;
  out->bytes_copied = counters_.bytes_copied;
  out->endpoint_bytes_placed = s.bytes_placed;
  out->endpoint_bytes_reassembled = s.bytes_reassembled;
  out->zero_copy_sends = counters_.zero_copy_sends;
  out->zero_copy_in_flight = zero_copy_in_flight_;
  for (const auto& [qpn, qp] : qps_) {
    out->rnr_naks_sent += qp->counters().rnr_naks_sent;
    out->rnr_naks_received += qp->counters().rnr_naks_received;
    out->remote_access_errors += qp->counters().access_errors;
  }
}

void Context::PrintStats() {
  const ContextCounters& c = counters_;
  std::fprintf(stderr,
               "braid0 %s: messages %llu malformed %llu unknown_qp %llu "
               "send_retries %llu transport_failures %llu progress app %llu "
               "thread %llu (spinning %llu) bytes placed %llu copied %llu "
               "refused %llu zero_copy_sends %llu uc_dropped %llu\n",
               local_.ToString().c_str(),
               static_cast<unsigned long long>(c.messages_received),
               static_cast<unsigned long long>(c.malformed),
               static_cast<unsigned long long>(c.unknown_qp),
               static_cast<unsigned long long>(c.send_retries),
               static_cast<unsigned long long>(c.transport_failures),
               static_cast<unsigned long long>(c.app_progress),
               static_cast<unsigned long long>(c.thread_progress),
               static_cast<unsigned long long>(c.thread_spin_steps),
               static_cast<unsigned long long>(c.bytes_placed),
               static_cast<unsigned long long>(c.bytes_copied),
               static_cast<unsigned long long>(c.placement_refused),
               static_cast<unsigned long long>(c.zero_copy_sends),
               static_cast<unsigned long long>(c.uc_dropped));
  const EndpointStats s = ep_->stats();
  std::fprintf(stderr,
               "braid0 %s: datagrams sent %llu received %llu retransmits "
               "%llu\n",
               local_.ToString().c_str(),
               static_cast<unsigned long long>(s.datagrams_sent),
               static_cast<unsigned long long>(s.datagrams_received),
               static_cast<unsigned long long>(s.reliability.retransmits));
}

}  // namespace braid::verbs_compat

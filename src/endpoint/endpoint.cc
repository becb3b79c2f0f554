// Endpoint: binds the drive loop (DriveLoop: receive, core, timers,
// transmit, ack-hold policy) to the backend its options name
// (backend::MakeBackend) and to CLOCK_MONOTONIC. What is real-world only
// lives here: fd() is an epoll set of the backend's socket and a timerfd
// armed at the loop's next wake time; Wait blocks on it.
#include "braid/endpoint.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <random>

#include "absl/strings/str_cat.h"
#include "backend/backend_factory.h"
#include "backend/impair/impair_backend.h"
#include "base/monotonic_clock.h"
#include "braid/testing/impairment.h"
#include "endpoint/drive_loop.h"
#include "endpoint/endpoint_core.h"
#include "endpoint/options_check.h"

namespace braid {
namespace {

uint64_t RandomSeed() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

constexpr size_t kBurst = 256;

}  // namespace

class Endpoint::Impl {
 public:
  Impl(std::unique_ptr<backend::Backend> be, const endpoint::CoreConfig& cfg,
       const endpoint::DriveLoopOptions& loop_options, int epfd, int tfd)
      : backend_(std::move(be)),
        core_(cfg),
        loop_(backend_.get(), &core_, &clock_, loop_options),
        epfd_(epfd),
        timerfd_(tfd) {}
  ~Impl() {
    // The backend goes first: it may still reference messages' bytes and
    // holds (zero-copy by reference), which the core owns.
    backend_.reset();
    if (timerfd_ >= 0) close(timerfd_);
    if (epfd_ >= 0) close(epfd_);
  }

  // Endpoint::Open, with test impairments applied to the backend when
  // `impair` is set (braid::OpenEndpointForTesting).
  static absl::StatusOr<std::unique_ptr<Endpoint>> Open(
      const EndpointOptions& options, const TestImpairments* impair);

  absl::Status Send(const NetAddr& peer_in, endpoint::OutMessage&& m) {
    const NetAddr peer = peer_in.Canonical();  // [::ffff:a.b.c.d] is IPv4
    if (!backend_->Reaches(peer.family)) {
      return absl::InvalidArgumentError(
          absl::StrCat("peer ", peer.ToString(),
                       " is not of the endpoint's address family (",
                       backend_->LocalAddress().ToString(),
                       "; an endpoint bound to [::] on a dual-stack host "
                       "also reaches IPv4 peers)"));
    }
    absl::Status s = loop_.Send(peer, std::move(m));
    // The send started protocol timers (RTO, peer_timeout): an fd() the
    // caller blocks on must wake for them (Wait arms them itself).
    if (s.ok() && fd_exported_ && !loop_.closed()) ArmTimer();
    return s;
  }

  size_t Poll(std::vector<Completion>* out, size_t max) {
    const size_t n = loop_.Poll(out, max);
    // After the completions are taken: those left (more than `max`) keep
    // the fd readable (ArmTimer).
    if (fd_exported_ && !loop_.closed()) ArmTimer();
    return n;
  }

  // Keeps the timerfd armed no later than the loop's next wake time. Arming
  // earlier than needed is harmless (one early wake, after which the next
  // call re-arms), so the timer is re-armed only when the wake time moved
  // earlier or the armed time has passed — not on every call, which cost two
  // timerfd_settime calls per ping-pong.
  //
  // Completions that a Poll left (it takes at most `max`) are work too: the
  // timer is then armed in the past, so fd() stays readable until a Poll
  // has taken them (fd()'s contract; a caller that polls with a small max
  // slept on the fd with completions waiting).
  void ArmTimer() {
    const TimeNs wake = core_.HasCompletions() ? TimeNs(1) : loop_.NextWake();
    if (wake == armed_) return;
    if (!armed_.IsInfinite() && wake > armed_ && armed_ > MonotonicNow()) {
      return;
    }
    armed_ = wake;
    itimerspec its{};
    if (!wake.IsInfinite()) {
      // timerfd uses CLOCK_MONOTONIC absolute time, like MonotonicNow().
      const int64_t ns = std::max<int64_t>(wake.ns(), 1);
      its.it_value.tv_sec = ns / 1000000000;
      its.it_value.tv_nsec = ns % 1000000000;
    }
    // Re-arming also clears an expiration nobody read.
    timerfd_settime(timerfd_, TFD_TIMER_ABSTIME, &its, nullptr);
    ++timer_arms_;
  }

  // epoll_wait for at most `timeout` (Infinite: no limit), to the
  // nanosecond where the kernel has epoll_pwait2 (5.11+), else rounded up
  // to whole milliseconds — never down: Wait(200 us) returning at once
  // made a caller's wait loop spin.
  int EpollWait(epoll_event* ev, int max, DurationNs timeout) {
    if (timeout.IsInfinite()) return epoll_wait(epfd_, ev, max, -1);
    const int64_t ns = std::max<int64_t>(0, timeout.ns());
    if (have_pwait2_) {
      timespec ts;
      ts.tv_sec = static_cast<time_t>(ns / 1000000000);
      ts.tv_nsec = static_cast<long>(ns % 1000000000);
      const int n = epoll_pwait2(epfd_, ev, max, &ts, nullptr);
      if (n >= 0 || errno != ENOSYS) return n;
      have_pwait2_ = false;
    }
    const int64_t ms = std::min<int64_t>((ns + 999999) / 1000000, INT_MAX);
    return epoll_wait(epfd_, ev, max, static_cast<int>(ms));
  }

  void Wait(DurationNs timeout) {
    // RxTimestamps::kAuto: the application blocks from now on, so a
    // datagram may wait in the socket while it sleeps; ask the kernel when
    // each came.
    loop_.StartRxTimestamps();
    if (!loop_.closed()) {
      loop_.Flush();
      ArmTimer();
    }
    // Completions already wait for Poll: nothing to wait for. A busy-polled
    // backend cannot wake anyone: the caller's next Poll reads it.
    if (core_.HasCompletions() || polled()) return;
    epoll_event ev[2];
    ++waits_;
    const int n = EpollWait(ev, 2, timeout);
    bool expired = false;
    for (int i = 0; i < n; ++i) {
      if (ev[i].data.fd == timerfd_) {
        uint64_t expirations;
        [[maybe_unused]] ssize_t r =
            read(timerfd_, &expirations, sizeof(expirations));
        armed_ = TimeNs(-1);  // force re-arm
        expired = true;
      }
    }
    // Wait(Zero) comes right before the caller blocks on the fd itself
    // (wait_fd()'s contract): an expiry read here, which no Poll has acted
    // on yet, must keep the fd readable, or the caller sleeps through it.
    // Re-arming for the same (past) deadline fires the timer again at once.
    // (As before epoll_pwait2: any timeout under 1 ms counts as such.)
    if (expired && !timeout.IsInfinite() && timeout < DurationNs::Millis(1) &&
        !loop_.closed()) {
      ArmTimer();
    }
  }

  void Close() { loop_.Close(); }

  // From the first call on, the caller may block on the fd itself: keep the
  // timer armed after every Poll and Send, and hold no acks.
  int fd() {
    fd_exported_ = true;
    loop_.set_caller_blocks();
    loop_.StartRxTimestamps();
    if (!loop_.closed()) ArmTimer();
    return polled() ? -1 : epfd_;
  }
  // fd() without its switch (Endpoint::wait_fd).
  int wait_fd() const { return polled() ? -1 : epfd_; }
  // The backend has no wait descriptor (it must be busy-polled).
  bool polled() const { return backend_->WaitFd() < 0; }
  NetAddr local() const { return backend_->LocalAddress(); }
  backend::Backend& backend() { return *backend_; }
  std::vector<uint8_t> TakeBuffer(size_t n) { return core_.TakeBuffer(n); }
  // A copy TakeBuffer gave out that no message kept, back to its pool.
  void ReturnBuffer(std::vector<uint8_t>&& b) {
    core_.RecycleBuffer(std::move(b));
  }
  uint32_t max_message_bytes() const { return core_max_message_; }
  void set_max_message(uint32_t m) { core_max_message_ = m; }

  EndpointStats stats() const {
    EndpointStats s = core_.stats();
    const backend::BackendCounters b = backend_->counters();
    s.tx_syscalls = b.tx_syscalls;
    s.rx_syscalls = b.rx_syscalls;
    s.tx_backpressure = loop_.tx_backpressure();
    s.timer_syscalls = timer_arms_;
    s.wait_syscalls = waits_;
    s.gso_sends = b.gso_sends;
    s.gso_segments = b.gso_segments;
    s.rx_timestamps = b.rx_timestamps;
    s.rx_timestamp_switches = loop_.rx_timestamp_switches();
    s.connected_sockets = b.connected_sockets;
    s.tx_icmp_errors = b.tx_icmp_errors;
    s.rx_backend_drops = b.rx_dropped;
    s.rx_over_mtu = b.rx_over_mtu;
    s.frames = b.frames;
    s.ud = b.ud;
    s.impair_dropped = b.impair_dropped;
    s.impair_corrupted = b.impair_corrupted;
    s.impair_duplicated = b.impair_duplicated;
    s.impair_reordered = b.impair_reordered;
    return s;
  }
  std::vector<PeerStats> peer_stats(bool with_paths) const {
    return core_.peer_stats(with_paths);
  }
  bool closed() const { return core_.closed(); }
  endpoint::EndpointCore& core() { return core_; }

 private:
  std::unique_ptr<backend::Backend> backend_;
  endpoint::EndpointCore core_;
  MonotonicClock clock_;
  endpoint::DriveLoop loop_;
  int epfd_;
  int timerfd_;
  bool have_pwait2_ = true;            // cleared on ENOSYS (kernel before 5.11)
  TimeNs armed_ = TimeNs::Infinite();  // the timerfd starts disarmed
  uint64_t timer_arms_ = 0;            // timerfd_settime calls
  uint64_t waits_ = 0;                 // epoll_wait calls
  bool fd_exported_ = false;           // fd() was called
  uint32_t core_max_message_ = 0;
};

absl::StatusOr<std::unique_ptr<Endpoint>> Endpoint::Open(
    const EndpointOptions& options) {
  return Impl::Open(options, /*impair=*/nullptr);
}

absl::StatusOr<std::unique_ptr<Endpoint>> Endpoint::Impl::Open(
    const EndpointOptions& options, const TestImpairments* impair) {
  if (absl::Status s = endpoint::CheckEndpointOptions(options); !s.ok())
    return s;
  if (impair != nullptr) {
    if (absl::Status s = endpoint::CheckImpairments(*impair); !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<NetAddr> bind =
      NetAddr::Parse(options.bind, /*allow_port_zero=*/true);
  if (!bind.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("EndpointOptions.bind: ", bind.status().message()));
  }
  if (bind->IsMulticastOrBroadcast()) {
    // The kernel binds such an address, but the endpoint's replies would
    // leave from a unicast one its peers do not know.
    return absl::InvalidArgumentError(absl::StrCat(
        "EndpointOptions.bind: ", bind->ToString(),
        " is a multicast or broadcast address; bind a unicast address of "
        "this host or the any-address"));
  }
  absl::StatusOr<std::unique_ptr<backend::Backend>> built =
      backend::MakeBackend(options, *bind);
  if (!built.ok()) return built.status();
  std::unique_ptr<backend::Backend> be = std::move(*built);
  if (impair != nullptr && impair->any()) {
    be = std::make_unique<backend::ImpairBackend>(std::move(be), *impair);
  }

  const int epfd = epoll_create1(EPOLL_CLOEXEC);
  const int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epfd < 0 || tfd < 0) {
    const int err = errno;
    if (epfd >= 0) close(epfd);
    if (tfd >= 0) close(tfd);
    return absl::InternalError(
        absl::StrCat("epoll/timerfd setup failed: ", std::strerror(err)));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  // A busy-polled backend (dpdk) has no descriptor: only the timer is
  // watched, and fd() reports -1.
  if (be->WaitFd() >= 0) {
    ev.data.fd = be->WaitFd();
    epoll_ctl(epfd, EPOLL_CTL_ADD, be->WaitFd(), &ev);
  }
  ev.data.fd = tfd;
  epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev);

  if (absl::Status s = endpoint::EndpointSecret::CheckAvailable(); !s.ok()) {
    return s;
  }
  const uint64_t seed = options.seed ? options.seed : RandomSeed();
  Rng rng(seed);
  endpoint::CoreConfig cfg;
  cfg.proto = options.protocol;
  if (cfg.proto.spray_run == 0) {
    // One run per path = one UDP GSO super-datagram (DefaultSprayRun):
    // each run leaves in one sendmmsg as one skb, the fewest kernel
    // crossings per byte. Measured on loopback (docs/
    // performance.md, bench/spray_run_sweep.sh): against the former 8, the
    // sender makes ~3x fewer sendmmsg calls per datagram, GSO super-
    // datagrams carry ~2x more segments, and the client spends less kernel
    // time per byte. A fabric that needs finer spraying sets spray_run.
    cfg.proto.spray_run = endpoint::DefaultSprayRun(be->MaxDatagram());
  }
  if (cfg.proto.cc_target_delay == DurationNs::Zero()) {
    cfg.proto.cc_target_delay = DurationNs::Millis(1);
  }
  cfg.incarnation = rng.Next() | 1;  // never 0
  cfg.seed = rng.Next();
  if (options.seed != 0) {
    // A fixed seed reproduces a run, incarnations included: predictable
    // to anyone who knows it (EndpointOptions::seed says so).
    for (auto& b : cfg.secret) b = static_cast<uint8_t>(rng.Next());
  } else {
    cfg.secret = endpoint::EndpointSecret::RandomKey();
  }
  if (options.security.mode != SecurityMode::kNone) {
    absl::StatusOr<std::unique_ptr<endpoint::PacketGuard>> guard =
        endpoint::PacketGuard::Create(options.security.mode,
                                      options.security.domain_key);
    if (!guard.ok()) {
      return absl::Status(guard.status().code(),
                          absl::StrCat("security: ", guard.status().message()));
    }
    cfg.guard = std::move(*guard);
  }
  cfg.entropy_count = be->EntropyCount();
  cfg.max_datagram = be->MaxDatagram();
  cfg.local_port = be->LocalAddress().port;
  cfg.keep_tails = be->KeepsTails();
  if (be->MinUncopiedTail() != 0) {
    cfg.min_uncopied_payload = be->MinUncopiedTail();
  }
  endpoint::DriveLoopOptions lo;
  lo.burst = kBurst;
  lo.auto_rx_timestamps = options.udp.rx_timestamps == RxTimestamps::kAuto;
  lo.late_poll_gap = options.udp.rx_timestamps_poll_gap;
  lo.rx_timestamps_linger = options.udp.rx_timestamps_linger;
  auto impl = std::make_unique<Impl>(std::move(be), cfg, lo, epfd, tfd);
  impl->set_max_message(options.protocol.max_message_bytes);
  return std::unique_ptr<Endpoint>(new Endpoint(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<Endpoint>> OpenEndpointForTesting(
    const EndpointOptions& options, const TestImpairments& impairments) {
  return Endpoint::Impl::Open(options, &impairments);
}

Endpoint::Endpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Endpoint::~Endpoint() { Close(); }

NetAddr Endpoint::local_address() const { return impl_->local(); }

namespace {

// `copy_buf`: for a copying send, the buffer to copy into (recycled from an
// earlier send when one fits; else empty and allocated here); null for a
// zero-copy send.
absl::StatusOr<endpoint::OutMessage> MakeMessage(
    absl::Span<const uint8_t> message, const SendOptions& opts,
    uint32_t max_bytes, std::vector<uint8_t>* copy_buf,
    std::vector<uint8_t>* prefix_buf = nullptr) {
  if (opts.prefix.size() > kMaxPrefixBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefix of ", opts.prefix.size(),
                     " bytes exceeds kMaxPrefixBytes (", kMaxPrefixBytes, ")"));
  }
  const size_t total = opts.prefix.size() + message.size();
  if (total > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("message of ", total, " bytes",
                     opts.prefix.empty() ? "" : " (prefix included)",
                     " exceeds max_message_bytes (", max_bytes, ")"));
  }
  const uint32_t n = static_cast<uint32_t>(total);
  endpoint::OutMessage m = endpoint::OutMessage::Borrow(message.data(), n);
  if (copy_buf != nullptr) {
    m.owned = std::move(*copy_buf);
    m.owned.assign(opts.prefix.begin(), opts.prefix.end());
    m.owned.insert(m.owned.end(), message.begin(), message.end());
    m.data = m.owned.data();
  } else if (!opts.prefix.empty()) {
    m.owned = std::move(*prefix_buf);
    m.owned.assign(opts.prefix.begin(), opts.prefix.end());
    m.prefix_len = static_cast<uint32_t>(opts.prefix.size());
  }
  m.stream = opts.stream;
  m.cookie = opts.cookie;
  m.flow = opts.flow;
  if (opts.placement.has_value()) {
    m.placed = true;
    m.placement.key = opts.placement->key;
    m.placement.offset = opts.placement->offset;
    m.placement.head_len = opts.placement->head_bytes;
  }
  return m;
}

}  // namespace

absl::Status Endpoint::Send(const NetAddr& peer,
                            absl::Span<const uint8_t> message,
                            const SendOptions& opts) {
  std::vector<uint8_t> buf =
      impl_->TakeBuffer(opts.prefix.size() + message.size());
  absl::StatusOr<endpoint::OutMessage> m =
      MakeMessage(message, opts, max_message_bytes(), &buf);
  if (!m.ok()) {
    impl_->ReturnBuffer(std::move(buf));
    return m.status();
  }
  absl::Status s = impl_->Send(peer, std::move(*m));
  // Refused (e.g. the queue is full, and the caller will retry): the copy
  // goes back to the pool instead of being freed, so a retry allocates
  // nothing. (Send moves the message only when it accepts it.)
  if (!s.ok()) impl_->ReturnBuffer(std::move(m->owned));
  return s;
}

absl::Status Endpoint::SendZeroCopy(const NetAddr& peer,
                                    absl::Span<const uint8_t> message,
                                    const SendOptions& opts) {
  std::vector<uint8_t> prefix_buf;
  if (!opts.prefix.empty()) prefix_buf = impl_->TakeBuffer(opts.prefix.size());
  absl::StatusOr<endpoint::OutMessage> m = MakeMessage(
      message, opts, max_message_bytes(), /*copy_buf=*/nullptr, &prefix_buf);
  if (!m.ok()) return m.status();
  return impl_->Send(peer, std::move(*m));
}

absl::Status Endpoint::SendOwned(const NetAddr& peer,
                                 std::vector<uint8_t>&& buffer,
                                 const SendOptions& opts) {
  if (!opts.prefix.empty()) {
    return absl::InvalidArgumentError(
        "SendOwned takes no SendOptions::prefix: build the prefix into the "
        "buffer");
  }
  absl::StatusOr<endpoint::OutMessage> m = MakeMessage(
      absl::MakeConstSpan(buffer), opts, max_message_bytes(), nullptr);
  if (!m.ok()) return m.status();
  // The message sends from the buffer itself (moving a vector keeps its
  // bytes where they are) and its completion hands it back.
  m->owned = std::move(buffer);
  m->give_back = true;
  absl::Status s = impl_->Send(peer, std::move(*m));
  // Refused: Send moved nothing; the buffer goes back to the caller as it
  // came, for a retry.
  if (!s.ok()) buffer = std::move(m->owned);
  return s;
}

std::vector<uint8_t> Endpoint::TakeBuffer(size_t capacity) {
  return impl_->core().TakePooled(capacity);
}

absl::Status Endpoint::RegisterMemory(absl::Span<const uint8_t> region) {
  if (region.empty()) {
    return absl::InvalidArgumentError("RegisterMemory: empty region");
  }
  return impl_->backend().RegisterMemory(region.data(), region.size());
}

absl::Status Endpoint::DeregisterMemory(const void* start) {
  return impl_->backend().DeregisterMemory(start);
}

void Endpoint::Recycle(std::vector<uint8_t>&& buffer) {
  impl_->core().RecycleReceived(std::move(buffer));
}

void Endpoint::Recycle(std::vector<Completion>* completions) {
  for (Completion& c : *completions) {
    if (c.data.capacity() > 0) impl_->core().RecycleReceived(std::move(c.data));
  }
  completions->clear();
}

void Endpoint::SetPlacementHandler(PlacementHandler handler) {
  impl_->core().SetPlacementHandler(std::move(handler));
}

size_t Endpoint::Poll(std::vector<Completion>* out, size_t max) {
  return impl_->Poll(out, max);
}
int Endpoint::fd() const { return impl_->fd(); }
int Endpoint::wait_fd() const { return impl_->wait_fd(); }
void Endpoint::Wait(DurationNs timeout) { impl_->Wait(timeout); }
void Endpoint::Close() { impl_->Close(); }
uint32_t Endpoint::max_message_bytes() const {
  return impl_->max_message_bytes();
}
EndpointStats Endpoint::stats() const { return impl_->stats(); }
std::vector<PeerStats> Endpoint::peer_stats(bool with_paths) const {
  return impl_->peer_stats(with_paths);
}

}  // namespace braid

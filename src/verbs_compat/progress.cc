#include "verbs_compat/progress.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "base/monotonic_clock.h"

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

int64_t NowNs() { return MonotonicNow().ns(); }

}  // namespace

ProgressDriver::WakeFd::WakeFd() : fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

ProgressDriver::WakeFd::~WakeFd() {
  if (fd >= 0) close(fd);
}

void ProgressDriver::WakeFd::Signal() const {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t r = write(fd, &one, sizeof(one));
}

void ProgressDriver::WakeFd::Drain() const {
  uint64_t v;
  [[maybe_unused]] ssize_t r = read(fd, &v, sizeof(v));
}

ProgressDriver::ProgressDriver(ProgressTarget* target, std::mutex* mu,
                               int wait_fd, DurationNs spin,
                               ContextCounters* counters)
    : target_(target),
      mu_(mu),
      wait_fd_(wait_fd),
      spin_ns_(spin.ns()),
      counters_(counters) {}

ProgressDriver::~ProgressDriver() { Stop(); }

void ProgressDriver::EnsureThread() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { ThreadMain(); });
}

void ProgressDriver::Stop() {
  if (thread_.joinable()) {
    stop_.store(true);
    thread_wake_.Signal();
    thread_.join();
  }
}

void ProgressDriver::NoteAppActivity() {
  last_app_ns_.store(NowNs(), std::memory_order_relaxed);
}

void ProgressDriver::NoteAppBlocked() {
  last_app_ns_.store(0, std::memory_order_relaxed);
  if (napping_.exchange(false)) thread_wake_.Signal();
}

void ProgressDriver::ThreadMain() {
  pollfd fds[2];
  // wait_fd, not fd: the endpoint keeps batching Sends and holding acks
  // for the replies of a busy-polling application (with fd() every ack
  // left alone and each Poll and Send re-armed the timerfd: two sendmsg
  // and two timerfd_settime per ping-pong). So every block below follows
  // a FlushEndpoint (Wait(Zero)), which flushes what is held and arms the
  // timer.
  fds[0].fd = wait_fd_;
  fds[0].events = POLLIN;
  fds[1].fd = thread_wake_.fd;
  fds[1].events = POLLIN;
  // False while the application may have left acks held or the timer
  // unarmed since the thread last flushed.
  bool flushed = false;
  // Until then the thread polls without blocking (spin_ns_ after the last
  // step that handled work). A busy-polled endpoint (no wait fd: dpdk)
  // has nothing to block on: the thread always spins.
  const bool polled = wait_fd_ < 0;
  int64_t spin_until = polled ? INT64_MAX : 0;
  while (!stop_.load()) {
    const int64_t now = NowNs();
    const int64_t since_app = now - last_app_ns_.load();
    if (now < spin_until && since_app >= kAppActiveNs &&
        app_waiters_.load() == 0) {
      std::unique_lock<std::mutex> lk(*mu_, std::try_to_lock);
      if (!lk.owns_lock()) {
        sched_yield();
        continue;
      }
      ++counters_->thread_progress;
      ++counters_->thread_spin_steps;
      // Endpoint::Poll receives and runs due protocol timers itself; the
      // timer is armed (FlushEndpoint) before the thread blocks again.
      const bool worked = target_->ProgressStep() > 0;
      if (worked && !polled) spin_until = NowNs() + spin_ns_;
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
      if (NowNs() - last_app_ns_.load() < kAppActiveNs ||
          app_waiters_.load() > 0) {
        [[maybe_unused]] int n = poll(&fds[1], 1, kAppNapMs);
      }
      napping_.store(false);
      thread_wake_.Drain();
      flushed = false;
      continue;
    }
    int timeout_ms = kIdlePollMs;
    {
      std::unique_lock<std::mutex> lk(*mu_, std::try_to_lock);
      if (lk.owns_lock()) {
        if (!flushed) {
          target_->FlushEndpoint();
          flushed = true;
        }
        // A busy-polled endpoint (no wait fd) cannot wake this poll: step.
        timeout_ms = wait_fd_ < 0 ? 0 : target_->PollTimeoutMs();
      }
    }
    const int n = poll(fds, 2, timeout_ms);
    if (stop_.load()) break;
    if (n < 0 && errno != EINTR) break;
    if (n > 0 && (fds[1].revents & POLLIN)) thread_wake_.Drain();
    if (NowNs() - last_app_ns_.load() < kAppActiveNs) continue;
    std::unique_lock<std::mutex> lk(*mu_, std::try_to_lock);
    if (!lk.owns_lock()) {
      sched_yield();
      continue;
    }
    ++counters_->thread_progress;
    if (StepLocked() > 0 && spin_ns_ > 0) spin_until = NowNs() + spin_ns_;
    flushed = true;
  }
}

bool ProgressDriver::WaitReadableDrivingProgress(int fd) {
  // While this thread waits here, the progress thread naps: datagrams and
  // the protocol timer (armed in the endpoint's wait fd by FlushEndpoint)
  // wake a waiter, which then makes the progress step itself.
  app_waiters_.fetch_add(1);
  // The thread may be in its own poll of the endpoint (ReqNotifyCq woke
  // it): make it look again, and nap.
  if (!napping_.load()) thread_wake_.Signal();
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
    driver_wake_.Drain();
    if (!driving_.exchange(true)) {
      const bool ok = DriveProgressUntilReadable(fd);
      driving_.store(false);
      if (app_waiters_.load() > 1) driver_wake_.Signal();
      return ok;
    }
    // The poll timeout is a backstop only: the leaving driver wakes us.
    const int n = poll(fds, 2, kIdlePollMs);
    if (n < 0 && errno != EINTR) return false;
    if (n > 0 && (fds[0].revents & (POLLIN | POLLERR | POLLHUP))) return true;
  }
}

bool ProgressDriver::DriveProgressUntilReadable(int fd) {
  pollfd fds[2];
  fds[0].fd = fd;
  fds[0].events = POLLIN;
  fds[1].fd = wait_fd_;
  fds[1].events = POLLIN;
  int timeout_ms;
  {
    std::unique_lock<std::mutex> lk(*mu_);
    target_->FlushEndpoint();  // held acks out, timer armed
    // A busy-polled endpoint (no wait fd) cannot wake this poll: step.
    timeout_ms = wait_fd_ < 0 ? 0 : target_->PollTimeoutMs();
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
    std::unique_lock<std::mutex> lk(*mu_);
    ++counters_->app_progress;
    StepLocked();
    // A busy-polled endpoint (no wait fd) cannot wake this poll: step.
    timeout_ms = wait_fd_ < 0 ? 0 : target_->PollTimeoutMs();
  }
}

size_t ProgressDriver::StepLocked() {
  target_->FlushEndpoint();  // consumes an expired protocol timer
  const size_t n = target_->ProgressStep();
  target_->FlushEndpoint();  // held acks out, timer armed: may block
  return n;
}

}  // namespace braid::verbs_compat

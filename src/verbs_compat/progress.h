// Who drives a braid0 context's progress, and when. Application calls
// (post, poll, ...) step inline under the context lock, so a busy-polling
// application gets its completions without a thread hand-off. The
// ProgressDriver covers the rest: a background thread that steps only
// while the application is not calling in (it serves a passive responder,
// the target of RDMA WRITE/READ/atomics, which never calls verbs; delivers
// events while the application sleeps; flushes deferred ACKs), and the
// waits of applications blocked on a completion channel, one of which
// drives the endpoint itself meanwhile (docs/verbs.md, "Progress and
// threading").
#ifndef BRAID_VERBS_COMPAT_PROGRESS_H_
#define BRAID_VERBS_COMPAT_PROGRESS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#include "braid/time.h"
#include "verbs_compat/context_stats.h"

namespace braid::verbs_compat {

// Longest block without a progress step, for the progress thread and an
// application waiting in ibv_get_cq_event alike: a backstop (the endpoint's
// wait fd wakes them for datagrams and protocol timers).
inline constexpr int kIdlePollMs = 5;

// What a ProgressDriver drives (the Context). Every method is called with
// the context lock held.
class ProgressTarget {
 public:
  virtual ~ProgressTarget() = default;
  // One progress step: receive and dispatch, transmit queued work, send
  // owed ACKs. Returns the endpoint completions it handled.
  virtual size_t ProgressStep() = 0;
  // Sends what the endpoint holds back (acks, batched sends) and arms its
  // timer for the next protocol deadline: Endpoint::Wait(Zero), which also
  // consumes an expired timer. Due before each block on wait_fd.
  virtual void FlushEndpoint() = 0;
  // How long the driver may block before its next step, in milliseconds
  // (0: step again at once; kIdlePollMs when nothing waits).
  virtual int PollTimeoutMs() const = 0;
};

class ProgressDriver {
 public:
  // `mu`: the context lock. `wait_fd`: the endpoint's wait_fd() (readable:
  // datagrams came, or a protocol timer is due). `spin`: how long the
  // thread keeps polling without blocking after a step that handled work
  // (VerbsConfig::progress_spin). Steps are counted in *counters (under
  // `mu`). All of them outlive the driver.
  ProgressDriver(ProgressTarget* target, std::mutex* mu, int wait_fd,
                 DurationNs spin, ContextCounters* counters);
  // Stops the thread.
  ~ProgressDriver();
  ProgressDriver(const ProgressDriver&) = delete;
  ProgressDriver& operator=(const ProgressDriver&) = delete;

  // Starts the background thread if not yet running. Lock held or not.
  void EnsureThread();
  // Stops and joins the thread, if running; from then on only the caller
  // drives progress. Call without the lock.
  void Stop();

  // The application is driving progress (the thread backs off for 100
  // us). Lock-free.
  void NoteAppActivity();
  // The application now sleeps in a verbs call or is about to wait for a
  // CQ event: the thread takes over progress at once (woken from its nap
  // if it naps). Lock-free; one eventfd write when it naps.
  void NoteAppBlocked();

  // Blocks until `fd` (a completion channel's) is readable, driving
  // progress meanwhile: one waiting thread at a time (the driver) waits on
  // the endpoint's fd as well and, when a datagram comes, makes the
  // progress step itself. The event then costs one thread wake-up instead
  // of two (the progress thread's, then the waiter's). Other waiters sleep
  // on their own fd until it is readable or the driver leaves (then one of
  // them takes over). Returns false if poll failed (errno set). Call
  // without the lock.
  bool WaitReadableDrivingProgress(int fd);

 private:
  // A non-blocking eventfd, closed with the driver.
  struct WakeFd {
    WakeFd();
    ~WakeFd();
    void Signal() const;
    void Drain() const;  // consumes pending signals
    int fd;
  };

  void ThreadMain();
  // WaitReadableDrivingProgress's driver: polls `fd` and the endpoint's
  // wait fd, stepping (lock taken) when the endpoint has work or a timer is
  // due, until `fd` is readable. False if poll failed.
  bool DriveProgressUntilReadable(int fd);
  // Lock held: a step by whoever blocks between steps: the endpoint's
  // expired timer consumed, the step, held acks out and the timer armed.
  size_t StepLocked();

  ProgressTarget* const target_;
  std::mutex* const mu_;
  const int wait_fd_;
  const int64_t spin_ns_;
  ContextCounters* const counters_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> last_app_ns_{0};
  // Set while the thread naps because the application drives progress.
  std::atomic<bool> napping_{false};
  // Threads in WaitReadableDrivingProgress: they drive progress (and the
  // protocol timer, armed in the endpoint's wait fd), so the progress
  // thread naps instead of racing them for each datagram and the lock.
  std::atomic<int> app_waiters_{0};
  // Set while a waiter drives the endpoint; the others leave it alone.
  std::atomic<bool> driving_{false};
  // Written by a leaving driver while others wait: one of them takes over.
  WakeFd driver_wake_;
  WakeFd thread_wake_;  // wakes the thread (to stop, or from a nap)
};

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_PROGRESS_H_

// A braid0 device context: one braid Endpoint, the objects created on it,
// and the progress engine that moves verbs messages.
//
// Threading. One mutex guards the whole context (endpoint, queues, keys).
// Application calls (post, poll, modify...) take it and drive progress
// inline, so a busy-polling application gets its completions without a
// thread hand-off. A background thread drives progress only while the
// application is not calling in: it serves a passive responder (the target
// of RDMA WRITE/READ/atomics never calls verbs), delivers events to
// completion channels while the application sleeps in ibv_get_cq_event or
// poll(), and flushes deferred ACKs.
#ifndef BRAID_VERBS_COMPAT_CONTEXT_H_
#define BRAID_VERBS_COMPAT_CONTEXT_H_

#include <infiniband/verbs.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "braid/address.h"
#include "braid/completion.h"
#include "braid/endpoint.h"
#include "braid/time.h"
#include "braid/verbs.h"
#include "verbs_compat/config.h"
#include "verbs_compat/pd_mr.h"

namespace braid::verbs_compat {

class Cq;
class Qp;

inline constexpr size_t kZeroCopyMinBytes = 8192;
// Longest ibv_dereg_mr / ibv_destroy_qp wait for zero-copy sends to end
// (the endpoint ends every send within its peer timeout, 2 s by default).
inline constexpr DurationNs kZeroCopyDrainLimit = DurationNs::Seconds(30);

// Counters of a context (BRAID_VERBS_STATS=1 prints them at close).
struct ContextCounters {
  uint64_t messages_received = 0;
  uint64_t malformed = 0;     // did not decode as a verbs message
  uint64_t unknown_qp = 0;    // no QP with that number
  uint64_t send_retries = 0;  // endpoint backpressure, retried later
  uint64_t transport_failures = 0;
  uint64_t thread_progress = 0;  // progress steps run by the thread
  // Of those, steps taken polling without blocking (progress_spin).
  uint64_t thread_spin_steps = 0;
  // UC messages this responder dropped where RC would NAK (Qp::UcDrop).
  uint64_t uc_dropped = 0;
  uint64_t app_progress = 0;  // progress steps run by app calls
  // Receive-side payload bytes: placed directly into registered memory by
  // the endpoint (WRITE, WRITE_IMM, single-SGE READ responses), or copied
  // by braid0 out of a reassembled message (SEND, multi-SGE READ
  // responses, atomics' results).
  uint64_t bytes_placed = 0;
  uint64_t bytes_copied = 0;
  uint64_t placement_refused = 0;  // fragments' targets refused
  // Sends whose payload went from the application's registered buffer
  // without a copy (one SGE, >= kZeroCopyMinBytes; the verbs header is the
  // endpoint's copied prefix).
  uint64_t zero_copy_sends = 0;
};

class Context {
 public:
  // Opens a context on braid0: binds an endpoint on the first free port of
  // the configured range.
  static absl::StatusOr<Context*> Open(ibv_device* device,
                                       const VerbsConfig& config);
  ~Context();

  ibv_context* ibv() { return &shell_.vctx.context; }
  static Context* From(const ibv_context* c);

  std::mutex& mu() { return mu_; }
  uint32_t NextHandle() { return next_handle_++; }
  const NetAddr& local() const { return local_; }
  ibv_gid gid() const;
  MrTable& mrs() { return mrs_; }
  uint32_t max_message_bytes() const { return max_message_; }
  // Floor of the QPs' local ACK timeout (VerbsConfig::min_ack_timeout).
  DurationNs min_ack_timeout() const { return min_ack_timeout_; }

  // QP numbers. Context lock held.
  uint32_t RegisterQp(Qp* qp);  // call with the number from AllocQpn
  uint32_t AllocQpn();
  void UnregisterQp(Qp* qp);
  Qp* FindQp(uint32_t qpn) const;

  enum class SendResult : uint8_t { kOk, kRetry, kFailed };
  // Sends one verbs message. A message built in scratch() of at least
  // kZeroCopyMinBytes is handed to the endpoint without a copy (the buffer
  // moves to an in-flight table until the send completes, and scratch()
  // gets a pooled one); others are copied. kRetry: endpoint backpressure,
  // try again after progress. Context lock held.
  // `placement`: the receiver places the payload after the verbs header
  // directly (see verbs_wire.h).
  SendResult Send(const NetAddr& peer, uint16_t stream,
                  absl::Span<const uint8_t> msg, uint64_t cookie,
                  const std::optional<PlacementDescriptor>& placement = {});
  // Sends a verbs header (copied) followed by `body` straight from the
  // application's memory: the endpoint reads `body` until the send
  // completes, and the Context tells the QP (Qp::ReleaseZeroCopy) when it
  // has (kSendDone or kSendFailed). Context lock held.
  SendResult SendZeroCopy(const NetAddr& peer, uint16_t stream,
                          absl::Span<const uint8_t> header,
                          absl::Span<const uint8_t> body, uint64_t cookie,
                          const std::optional<PlacementDescriptor>& placement);
  // Waits (making progress, the lock released between steps) until the
  // endpoint holds no application buffer, at most `limit`; before memory
  // the application may free goes away (dereg MR, destroy QP).
  void DrainZeroCopy(std::unique_lock<std::mutex>& lk, DurationNs limit);
  // Reusable buffer for building outgoing messages. Context lock held.
  std::vector<uint8_t>& scratch() { return scratch_; }
  // Maps a refused endpoint send to kRetry (backpressure) or kFailed, and
  // counts it.
  SendResult SendFailure(const absl::Status& s);

  // One progress step: receive and dispatch, transmit queued work, and (if
  // flush_acks) send owed ACKs. Context lock held.
  // Returns the endpoint completions it handled.
  size_t Progress(bool flush_acks);
  // Work lists. Context lock held.
  void NeedPump(Qp* qp);
  void NeedAck(Qp* qp);
  void FlushAcks();
  // Records that the application is driving progress (the thread backs
  // off). Lock-free.
  void NoteAppActivity();
  // Records that the application now sleeps in a verbs call or is about
  // to wait for a CQ event: the thread takes over progress at once (woken
  // from its nap if it naps). Lock-free; one eventfd write when it naps.
  void NoteAppBlocked();
  static TimeNs Now();
  // Blocks until `fd` (a completion channel's) is readable, driving
  // progress meanwhile: one waiting thread at a time (the driver) waits on
  // the endpoint's fd as well and, when a datagram comes, makes the
  // progress step itself. The event then costs one thread wake-up instead
  // of two (the progress thread's, then the waiter's). Other waiters sleep
  // on their own fd until it is readable or the driver leaves (then one of
  // them takes over). Returns false if poll failed (errno set). Call
  // without the lock.
  bool WaitReadableDrivingProgress(int fd);
  // Starts the background progress thread if not yet running.
  void EnsureThread();

  // Before the context goes away: sends owed ACKs and keeps making
  // progress until the peer acknowledged every message sent (so a peer's
  // last send completes, as a hardware ACK would have let it) or `limit`
  // passes. Takes the lock.
  void Linger(DurationNs limit);

  // A CQ overran: raises IBV_EVENT_CQ_ERR now; its QPs go to ERR at the
  // next progress step (not inside the Push that overran). Lock held.
  void OnCqOverrun(Cq* cq);
  // Forgets a CQ being destroyed. Context lock held.
  void ForgetCq(Cq* cq) { std::erase(overrun_cqs_, cq); }

  // Asynchronous events (ibv_get_async_event), kept as libibverbs and the
  // kernel keep them. async_fd (an eventfd in semaphore mode) counts the
  // queued events; its counts are read only with the lock held and only
  // for a queued event, so a read never blocks.
  // Queues `ev` and makes async_fd readable. Context lock held.
  void RaiseAsync(const ibv_async_event& ev);
  // Takes the oldest event and its async_fd count, and counts it as
  // reported for its QP, CQ or SRQ. False if none is queued. Context lock
  // held.
  bool TakeAsync(ibv_async_event* ev);
  // Before `element` (an ibv_qp, ibv_cq or ibv_srq) is destroyed: drops
  // its events not yet taken, with their async_fd counts. Returns how many
  // TakeAsync reported for it: the destroy waits for as many
  // ibv_ack_async_event (WaitAsyncAcks) before freeing it, as libibverbs
  // does. Context lock held.
  uint32_t ForgetAsync(const void* element);

  ContextCounters& counters() { return counters_; }
  // Endpoint counters plus the live QPs' counters (braid_verbs_query_stats).
  // Takes the lock.
  void FillStats(struct braid_verbs_stats* out);

 private:
  struct ShellT {
    verbs_context vctx;
    Context* owner;
  };

  Context(ibv_device* device, std::unique_ptr<Endpoint> ep, uint32_t salt,
          DurationNs min_ack_timeout, DurationNs progress_spin);
  void ThreadMain();
  // WaitReadableDrivingProgress's driver: polls `fd` and the endpoint's
  // wait fd, stepping (lock taken) when the endpoint has work or a timer is
  // due, until `fd` is readable. False if poll failed.
  bool DriveProgressUntilReadable(int fd);
  // Consumes pending wake-ups of stop_fd_ (non-blocking).
  void DrainWake();
  // With mu() held, by whoever drives progress: how long it may block
  // before its next step, and the step itself (the endpoint's expired timer
  // consumed, Progress, held acks out and the timer armed).
  int PollTimeoutMsLocked() const;
  size_t StepLocked();  // as Progress
  void StopThread();
  void PumpAll();
  void FailOverrunCqs();
  // Runs the QPs' ACK-timeout checks, at most once a millisecond.
  void CheckRetryTimeouts();
  void Handle(Completion& c);
  // A send completion: if its payload was read from application memory,
  // tell the QP the endpoint is done with it.
  void ReleaseZeroCopy(uint64_t cookie);
  // The endpoint's placement handler (runs inside Poll, lock held).
  bool Place(const PlacementRequest& req, absl::Span<uint8_t>* dest);
  void PrintStats();

  ShellT shell_;
  std::mutex mu_;
  std::unique_ptr<Endpoint> ep_;
  NetAddr local_;
  uint32_t max_message_;
  DurationNs min_ack_timeout_;
  int64_t progress_spin_ns_;  // VerbsConfig::progress_spin
  MrTable mrs_;
  uint32_t next_handle_ = 1;
  uint32_t next_qpn_ = 0x100;
  absl::flat_hash_map<uint32_t, Qp*> qps_;
  std::vector<Qp*> pump_list_;
  std::vector<Cq*> overrun_cqs_;  // QPs still to move to ERR
  TimeNs next_retry_check_ = TimeNs::Zero();
  std::vector<Qp*> retry_candidates_;  // scratch
  std::vector<Qp*> ack_list_;
  std::vector<Completion> comps_;
  uint64_t unacked_sends_ = 0;        // messages the endpoint has not completed
  uint64_t zero_copy_in_flight_ = 0;  // of which hold application memory
  std::vector<uint8_t> scratch_;
  struct InFlight {
    std::vector<uint8_t> buf;
    uint64_t cookie;  // the caller's
  };
  absl::flat_hash_map<uint64_t, InFlight> in_flight_;  // by token
  std::vector<std::vector<uint8_t>> free_bufs_;
  uint64_t next_token_ = 0;
  std::deque<ibv_async_event> async_;
  // Events TakeAsync returned, by object (until ForgetAsync).
  absl::flat_hash_map<const void*, uint32_t> async_reported_;
  ContextCounters counters_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> last_app_ns_{0};
  // Set while the thread naps because the application drives progress.
  std::atomic<bool> napping_{false};
  // Threads in WaitReadableDrivingProgress: they drive progress (and the
  // protocol timer, armed in the endpoint's wait fd), so the progress
  // thread naps instead of racing them for each datagram and the lock.
  std::atomic<int> app_waiters_{0};
  // An eventfd (non-blocking) closed with the context.
  struct WakeFd {
    WakeFd();
    ~WakeFd();
    int fd;
  };
  // Set while a waiter drives the endpoint; the others leave it alone.
  std::atomic<bool> driving_{false};
  // Written by a leaving driver while others wait: one of them takes over.
  WakeFd driver_wake_;
  int stop_fd_ = -1;  // eventfd: wakes the thread (to stop, or from a nap)
};

// The context of the QP, CQ or SRQ an asynchronous event is about, or
// nullptr (a port or device event).
const ibv_context* AsyncEventContext(const ibv_async_event& ev);

// ibv_ack_async_event of a braid0 event: counts the ack in its object's
// events_completed (a CQ's async_events_completed) under the object's
// mutex and wakes a destroy waiting in WaitAsyncAcks. Takes no context
// lock.
void AckAsyncEvent(const ibv_async_event& ev);

// Blocks until `*completed` (guarded by `mu`, signalled on `cond`: the
// fields of an ibv_qp, ibv_cq or ibv_srq) reaches `reported`. Call without
// the context lock: the application may make verbs calls before it acks.
void WaitAsyncAcks(pthread_mutex_t* mu, pthread_cond_t* cond,
                   const uint32_t* completed, uint32_t reported);

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_CONTEXT_H_

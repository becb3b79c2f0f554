// A braid0 device context: one braid Endpoint, the objects created on it,
// and the dispatch of the endpoint's completions to them. Its other jobs
// are parts it composes, each in its own files:
//   progress.h      who drives progress, and when (the background thread,
//                   applications waiting on completion channels);
//   async_events.h  the asynchronous event queue (ibv_get_async_event);
//   send_buffers.h  who owns the bytes of a send while the endpoint sends
//                   them (owned and zero-copy sends in flight);
//   context_stats.h the counters and how they are reported.
//
// Threading. One mutex guards the whole context (endpoint, queues, keys,
// and the parts above). Application calls (post, poll, modify...) take it
// and drive progress inline, so a busy-polling application gets its
// completions without a thread hand-off; the ProgressDriver covers the
// times the application does not call in.
#ifndef BRAID_VERBS_COMPAT_CONTEXT_H_
#define BRAID_VERBS_COMPAT_CONTEXT_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/answer_clock.h"
#include "braid/address.h"
#include "braid/completion.h"
#include "braid/endpoint.h"
#include "braid/time.h"
#include "braid/verbs.h"
#include "verbs_compat/async_events.h"
#include "verbs_compat/config.h"
#include "verbs_compat/context_stats.h"
#include "verbs_compat/pd_mr.h"
#include "verbs_compat/progress.h"
#include "verbs_compat/send_buffers.h"

namespace braid::verbs_compat {

class CompChannel;
class Cq;
class Qp;

class Context : private ProgressTarget {
 public:
  // Opens a context on braid0: binds an endpoint on the first free port of
  // the configured range.
  static absl::StatusOr<Context*> Open(ibv_device* device,
                                       const VerbsConfig& config);
  // Stops the progress thread, prints the counters (BRAID_VERBS_STATS=1)
  // and closes the endpoint.
  ~Context() override;

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
  static TimeNs Now();

  // The parts (see the top of this file). Context lock held, except for
  // the ProgressDriver's lock-free and lock-taking calls.
  AsyncEvents& async() { return async_; }
  SendBuffers& sends() { return sends_; }
  ProgressDriver& driver() { return driver_; }
  ContextCounters& counters() { return counters_; }

  // QP numbers. Context lock held.
  uint32_t RegisterQp(Qp* qp);  // call with the number from AllocQpn
  uint32_t AllocQpn();
  void UnregisterQp(Qp* qp);
  Qp* FindQp(uint32_t qpn) const;

  // Waits (making progress, the lock released between steps) until the
  // endpoint holds no application buffer (sends().zero_copy_in_flight() is
  // 0), at most `limit`; before memory the application may free goes away
  // (dereg MR, destroy QP). Every zero-copy send of the context counts,
  // whatever its QP or MR.
  void DrainZeroCopy(std::unique_lock<std::mutex>& lk, DurationNs limit);

  // One progress step: receive and dispatch, transmit queued work, and (if
  // flush_acks) send owed ACKs. Context lock held.
  // Returns the endpoint completions it handled.
  size_t Progress(bool flush_acks);
  // Work lists. Context lock held.
  void NeedPump(Qp* qp);
  void NeedAck(Qp* qp);
  // Sends every owed ACK now.
  void FlushAcks();
  // ACKs held for a busy-polling application's reply. A poll that hands
  // it completions while ACKs are owed starts a hold (HoldAcks): the reply
  // it posts carries them (Qp::PostSend calls NoteAnswer). Later calls —
  // empty polls, polls of other CQs, progress steps — send them
  // (FlushDueAcks) at once, or, while the application's replies usually
  // come within the transport's ack delay of the poll
  // (AnswerClock::MayHoldThroughPolls), only once that delay has passed.
  // Lock held for all three.
  void HoldAcks();
  void FlushDueAcks();
  void NoteAnswer() {
    if (answers_.awaiting()) answers_.Answered(Now());
  }
  // During a progress step: keeps `channel`'s event for the end of the
  // step and returns true (CompChannel::Raise). The step's owed ACKs leave
  // first, so the peer hears them before this application can act on what
  // they acknowledge, and the woken application does not compete with the
  // step for the CPU. False outside a step: raise it now. Lock held.
  bool HoldEvent(CompChannel* channel);
  // The application is about to sleep on a completion channel (an
  // event-driven call: a poll that drained an armed CQ, a post on a QP whose
  // CQ is armed). Nothing may wait for its next call: owed ACKs go out now,
  // as a NIC's would, with whatever the endpoint holds back (Wait(Zero)),
  // and the progress thread takes over at once instead of napping. Lock
  // held.
  void BeforeAppSleeps();

  // Before the context goes away: sends owed ACKs and keeps making
  // progress until the peer acknowledged every message sent (so a peer's
  // last send completes, as a hardware ACK would have let it) or `limit`
  // passes. Stops the progress thread; takes the lock.
  void Linger(DurationNs limit);

  // A CQ overran: raises IBV_EVENT_CQ_ERR now; its QPs go to ERR at the
  // next progress step (not inside the Push that overran). Lock held.
  void OnCqOverrun(Cq* cq);
  // Forgets a CQ being destroyed. Context lock held.
  void ForgetCq(Cq* cq) { std::erase(overrun_cqs_, cq); }

  // Endpoint counters plus the live QPs' counters (braid_verbs_query_stats).
  // Takes the lock.
  void FillStats(struct braid_verbs_stats* out);

 private:
  struct ShellT {
    verbs_context vctx;
    Context* owner;
  };

  Context(ibv_device* device, std::unique_ptr<Endpoint> ep,
          DurationNs min_ack_timeout, DurationNs progress_spin);
  // ProgressTarget (lock held).
  size_t ProgressStep() override { return Progress(/*flush_acks=*/true); }
  void FlushEndpoint() override { ep_->Wait(DurationNs::Zero()); }
  // Owed ACKs go out at once; queued work (an RNR wait, endpoint
  // backpressure) is retried every millisecond.
  int PollTimeoutMs() const override;

  void PumpAll();
  void FailOverrunCqs();
  // Runs the QPs' ACK-timeout checks, at most once a millisecond.
  void CheckRetryTimeouts();
  void Handle(Completion& c);
  // A received verbs message, to its QP.
  void HandleMessage(Completion& c);
  // The endpoint's placement handler (runs inside Poll, lock held).
  bool Place(const PlacementRequest& req, absl::Span<uint8_t>* dest);

  ShellT shell_;
  std::mutex mu_;
  std::unique_ptr<Endpoint> ep_;
  NetAddr local_;
  uint32_t max_message_;
  DurationNs min_ack_timeout_;
  MrTable mrs_;
  uint32_t next_handle_ = 1;
  uint32_t next_qpn_ = 0x100;
  absl::flat_hash_map<uint32_t, Qp*> qps_;
  std::vector<Qp*> pump_list_;
  std::vector<Cq*> overrun_cqs_;  // QPs still to move to ERR
  TimeNs next_retry_check_ = TimeNs::Zero();
  std::vector<Qp*> retry_candidates_;  // scratch
  std::vector<Qp*> ack_list_;
  // The application's time from poll to post; at most the transport's
  // default ack delay.
  AnswerClock answers_{ProtocolOptions().ack_delay};
  TimeNs ack_hold_until_ = TimeNs::Zero();  // owed ACKs wait until then
  bool ack_hold_through_polls_ = false;     // for an answer
  bool in_step_ = false;                    // Progress is running
  std::vector<CompChannel*> held_events_;   // channels to signal after it
  std::vector<Completion> comps_;
  ContextCounters counters_;
  AsyncEvents async_;
  SendBuffers sends_;
  // Last: stopped (its thread joined) before the rest goes.
  ProgressDriver driver_;
};

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_CONTEXT_H_

// Completion queues and completion channels of braid0.
//
// A Cq is a ring of ibv_wc. Work completions are pushed by the context's
// progress engine (under the context lock) and popped by ibv_poll_cq. A CQ
// armed with ibv_req_notify_cq raises one event on its channel at the next
// completion (solicited-only: the next solicited receive or any error).
// The channel's fd is an eventfd in semaphore mode: readable while events
// are pending, so applications may poll()/epoll it.
#ifndef BRAID_VERBS_COMPAT_CQ_H_
#define BRAID_VERBS_COMPAT_CQ_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "verbs_compat/shell.h"

namespace braid::verbs_compat {

class Context;
class Cq;

class CompChannel {
 public:
  // Creates the eventfd; ok() is false if that failed.
  explicit CompChannel(Context* ctx);
  ~CompChannel();
  bool ok() const { return shell_.ibv.fd >= 0; }
  ibv_comp_channel* ibv() { return &shell_.ibv; }
  static CompChannel* From(const ibv_comp_channel* p) {
    return Shell<ibv_comp_channel, CompChannel>::OwnerOf(p);
  }
  Context* context() const { return ctx_; }

  // Queues an event for `cq` and makes the fd readable: at once, or, during
  // a progress step of the context, when the step ends (SignalHeld), after
  // the ACKs the step owes have left. Context lock held.
  void Raise(Cq* cq);
  // Makes the fd readable for the events Raise queued during a step.
  // Context lock held.
  void SignalHeld();
  // Takes the oldest queued event and its count on the fd (one per queued
  // event, so the read never blocks). Context lock held. nullptr if none
  // is queued (another thread took it).
  Cq* Take();
  // Drops queued events of a CQ being destroyed. Context lock held.
  void Forget(Cq* cq);

  int cqs = 0;  // CQs attached; destroy fails (EBUSY) while non-zero

 private:
  Shell<ibv_comp_channel, CompChannel> shell_;
  Context* ctx_;
  std::deque<Cq*> pending_;
  uint64_t held_ = 0;  // events queued, not yet counted on the fd
};

class Cq {
 public:
  Cq(Context* ctx, int cqe, void* cq_context, CompChannel* channel,
     int comp_vector);
  ibv_cq* ibv() { return reinterpret_cast<ibv_cq*>(&shell_.ibv); }
  ibv_cq_ex* ibv_ex() { return &shell_.ibv; }
  static Cq* From(const ibv_cq* p) {
    return Shell<ibv_cq_ex, Cq>::OwnerOf(reinterpret_cast<const ibv_cq_ex*>(p));
  }
  Context* context() const { return ctx_; }
  CompChannel* channel() const { return channel_; }

  // Appends a completion. `solicited` marks a receive of a solicited
  // message. A completion that finds the CQ full (cqe entries unpolled) is
  // an overrun, as on hardware: it is dropped, the CQ goes into error
  // (every later completion is dropped too and counted), and the context
  // raises IBV_EVENT_CQ_ERR and moves the CQ's QPs to ERR. Entries already
  // in the CQ can still be polled. Context lock held.
  // Each completion is stamped with CLOCK_REALTIME when it is pushed (the
  // moment a NIC would write its CQE), for
  // IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK.
  void Push(const ibv_wc& wc, bool solicited);
  bool in_error() const { return error_; }
  // Pops up to n completions into wc (and their stamps into `stamps_ns`
  // when given). Context lock held.
  int Pop(int n, ibv_wc* wc, uint64_t* stamps_ns = nullptr);
  size_t size() const { return count_; }
  // Arms the CQ for one event. `fd_waiter`: the channel's fd is
  // non-blocking, so the application waits for the event in its own
  // poll()/epoll on the fd, not in ibv_get_cq_event (which drives progress
  // while it waits). Context lock held.
  void Arm(bool solicited_only, bool fd_waiter) {
    armed_ = true;
    solicited_only_ = solicited_only;
    fd_waiter_ = fd_waiter;
  }
  // Armed (no event raised since) by an application that then waits on
  // the channel's fd itself: until the event nothing runs braid0 on its
  // behalf but the progress thread (Context::BeforeAppSleeps). Context
  // lock held.
  bool awaited_on_fd() const { return armed_ && fd_waiter_; }
  // Resizes the nominal capacity (ibv_resize_cq).
  void set_capacity(int cqe) {
    cqe_ = cqe;
    shell_.ibv.cqe = cqe;
  }
  uint64_t overruns() const { return overruns_; }
  int users = 0;  // QPs using this CQ (destroy fails with EBUSY)

  // The completion an extended-CQ poll is on: ibv_start_poll and
  // ibv_next_poll pop it (context lock held, then released, so the batch
  // may post); the ibv_wc_read_* accessors read it without the lock. Only
  // the thread polling the CQ touches it (verbs serialises polling of a
  // CQ); entries not yet reached stay in the ring for the next poll.
  ibv_wc current{};
  uint64_t current_stamp_ns = 0;

 private:
  void Grow();

  Shell<ibv_cq_ex, Cq> shell_;
  Context* ctx_;
  CompChannel* channel_;
  int cqe_;
  std::vector<ibv_wc> ring_;
  std::vector<uint64_t> stamps_;  // CLOCK_REALTIME ns, parallel to ring_
  size_t head_ = 0;
  size_t count_ = 0;
  bool armed_ = false;
  bool solicited_only_ = false;
  bool fd_waiter_ = false;
  uint64_t overruns_ = 0;  // completions dropped (overrun, then error)
  bool error_ = false;
};

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_CQ_H_

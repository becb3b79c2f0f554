// Asynchronous events of a braid0 context (ibv_get_async_event), kept as
// libibverbs and the kernel keep them: a queue of events and an eventfd
// (the context's async_fd, in semaphore mode) that counts them.
#ifndef BRAID_VERBS_COMPAT_ASYNC_EVENTS_H_
#define BRAID_VERBS_COMPAT_ASYNC_EVENTS_H_

#include <infiniband/verbs.h>
#include <pthread.h>

#include <cstdint>
#include <deque>

#include "absl/container/flat_hash_map.h"

namespace braid::verbs_compat {

// Not thread-safe: every method is called with the context lock held.
// The eventfd's counts are read only for a queued event, so a read never
// blocks.
class AsyncEvents {
 public:
  // Creates the eventfd (fd() is -1 if that failed).
  AsyncEvents();
  // Closes it.
  ~AsyncEvents();
  AsyncEvents(const AsyncEvents&) = delete;
  AsyncEvents& operator=(const AsyncEvents&) = delete;

  // The eventfd: the context's ibv_context::async_fd.
  int fd() const { return fd_; }
  // Queues `ev` and makes fd() readable. An application that never reads
  // its events keeps at most 4096; later ones are dropped.
  void Raise(const ibv_async_event& ev);
  // Takes the oldest event and its fd() count, and counts it as reported
  // for its QP, CQ or SRQ. False if none is queued.
  bool Take(ibv_async_event* ev);
  // Before `element` (an ibv_qp, ibv_cq or ibv_srq) is destroyed: drops
  // its events not yet taken, with their fd() counts. Returns how many
  // Take reported for it: the destroy waits for as many
  // ibv_ack_async_event (WaitAsyncAcks) before freeing it, as libibverbs
  // does.
  uint32_t Forget(const void* element);

 private:
  // Consumes one count of fd_ (there is one for every queued event).
  void ReadCount();

  int fd_;
  std::deque<ibv_async_event> queue_;
  // Events Take returned, by object (until Forget).
  absl::flat_hash_map<const void*, uint32_t> reported_;
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

#endif  // BRAID_VERBS_COMPAT_ASYNC_EVENTS_H_

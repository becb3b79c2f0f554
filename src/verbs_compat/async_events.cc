#include "verbs_compat/async_events.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

namespace braid::verbs_compat {
namespace {

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

constexpr size_t kMaxQueued = 4096;

}  // namespace

AsyncEvents::AsyncEvents() : fd_(eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE)) {}

AsyncEvents::~AsyncEvents() {
  if (fd_ >= 0) close(fd_);
}

void AsyncEvents::Raise(const ibv_async_event& ev) {
  if (queue_.size() >= kMaxQueued) return;  // an application that never reads
  queue_.push_back(ev);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t r = write(fd_, &one, sizeof(one));
}

void AsyncEvents::ReadCount() {
  uint64_t v;
  while (read(fd_, &v, sizeof(v)) < 0 && errno == EINTR) {
  }
}

bool AsyncEvents::Take(ibv_async_event* ev) {
  if (queue_.empty()) return false;
  ReadCount();  // it is there: only Take and Forget read it, lock held
  *ev = queue_.front();
  queue_.pop_front();
  if (const void* e = AsyncElementOf(*ev)) ++reported_[e];
  return true;
}

uint32_t AsyncEvents::Forget(const void* element) {
  const size_t before = queue_.size();
  std::erase_if(queue_, [element](const ibv_async_event& ev) {
    return AsyncElementOf(ev) == element;
  });
  for (size_t i = queue_.size(); i < before; ++i) ReadCount();
  const auto it = reported_.find(element);
  if (it == reported_.end()) return 0;
  const uint32_t reported = it->second;
  reported_.erase(it);
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

}  // namespace braid::verbs_compat

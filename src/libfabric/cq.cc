// Completion queues: entries in the application's format, errors with a
// text naming the peer and the cause, and a wait object (an epoll fd over
// the bound endpoints' wait fds) for fi_cq_sread and FI_GETWAIT.
#include <rdma/fi_errno.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>

#include "libfabric/ep.h"
#include "libfabric/objects.h"
#include "libfabric/provider.h"
#include "libfabric/stubs.h"

namespace braid::libfabric {

const char* ProvErrName(int prov_errno) {
  switch (prov_errno) {
    case kProvErrTruncated:
      return "message larger than the receive buffer";
    case kProvErrCanceled:
      return "canceled";
    case kProvErrNoMessage:
      return "no matching message";
    case kProvErrRmaTimeout:
      return "the RMA target did not answer";
    default:
      if (prov_errno > kProvErrRma &&
          prov_errno < kProvErrRma + kRmaStatusCount) {
        return RmaStatusName(static_cast<RmaStatus>(prov_errno - kProvErrRma));
      }
      if (prov_errno > 0 && prov_errno < 16) {
        return FailureCauseName(static_cast<FailureCause>(prov_errno));
      }
      return "unknown";
  }
}

uint64_t Cq::AppCalls() const {
  uint64_t n = 0;
  for (const Ep* ep : eps) n += ep->app_calls;
  return n;
}

void Cq::ProgressAll() {
  for (Ep* ep : eps) {
    ++ep->app_calls;
    ep->Progress();
  }
}

namespace {

using Lock = std::unique_lock<std::mutex>;

Cq* C(fid_cq* f) { return FromFid<Cq>(f); }

// Copies up to `count` entries out. Lock held.
ssize_t TakeEntries(Cq* cq, void* buf, size_t count, fi_addr_t* src) {
  if (!cq->errors.empty()) return -FI_EAVAIL;
  if (cq->entries.empty()) return -FI_EAGAIN;
  size_t n = 0;
  auto* out = static_cast<uint8_t*>(buf);
  while (n < count && !cq->entries.empty()) {
    CqEntry c = cq->entries.take(0);
    std::memcpy(out + n * cq->entry_size, &c.e, cq->entry_size);
    if (src) src[n] = c.src;
    ++n;
  }
  return static_cast<ssize_t>(n);
}

// A busy-polling application with nothing to read gives its CPU away now
// and then, so that the other side of a loopback conversation (or anyone
// else runnable on this CPU) can run; on an idle CPU sched_yield returns
// at once. braid-perf's busy poll does the same.
constexpr uint32_t kEmptyReadsBeforeYield = 64;

ssize_t ReadFrom(fid_cq* f, void* buf, size_t count, fi_addr_t* src) {
  Cq* cq = C(f);
  Lock l(cq->domain->mu);
  // A drain's last read returns without a progress pass (DrainSkip).
  const auto now = [] { return std::chrono::steady_clock::now(); };
  bool progressed = false;
  if (cq->entries.empty() && cq->errors.empty() &&
      !cq->drain.Skip(cq->AppCalls(), now)) {
    cq->ProgressAll();
    progressed = true;
  }
  ssize_t r = TakeEntries(cq, buf, count, src);
  if (progressed) {
    cq->drain.OnProgressedRead(
        r > 0 && cq->entries.empty() && cq->errors.empty(), cq->AppCalls(),
        now);
  }
  if (r != -FI_EAGAIN) {
    cq->empty_reads = 0;
  } else if (++cq->empty_reads >= kEmptyReadsBeforeYield) {
    cq->empty_reads = 0;
    l.unlock();
    sched_yield();
  }
  return r;
}

ssize_t Read(fid_cq* f, void* buf, size_t count) {
  return ReadFrom(f, buf, count, nullptr);
}

ssize_t ReadErr(fid_cq* f, fi_cq_err_entry* buf, uint64_t flags) {
  Cq* cq = C(f);
  Lock l(cq->domain->mu);
  if (cq->errors.empty()) return -FI_EAGAIN;
  CqError e = std::move(cq->errors.front());
  cq->errors.pop_front();
  cq->err_data_held = std::move(e.text);
  void* user_data = buf->err_data;
  size_t user_size = buf->err_data_size;
  *buf = e.e;
  const bool copy =
      FI_VERSION_GE(cq->domain->api_version(), FI_VERSION(1, 5)) &&
      user_size > 0 && user_data != nullptr;
  if (copy) {
    size_t n = std::min(user_size, cq->err_data_held.size() + 1);
    std::memcpy(user_data, cq->err_data_held.c_str(), n);
    static_cast<char*>(user_data)[n - 1] = '\0';
    buf->err_data = user_data;
    buf->err_data_size = n;
  } else {
    buf->err_data = cq->err_data_held.data();
    buf->err_data_size = cq->err_data_held.size() + 1;
  }
  return 1;
}

// Blocks (lock released) until an endpoint has work or the deadline.
void Block(Cq* cq, Lock& l, int timeout_ms) {
  for (Ep* ep : cq->eps) ep->Flush();
  l.unlock();
  epoll_event ev[8];
  int n = epoll_wait(cq->epfd, ev, 8, timeout_ms);
  for (int i = 0; i < n; ++i) {
    if (ev[i].data.ptr == nullptr) {
      uint64_t v;
      (void)!read(cq->signal_fd, &v, sizeof(v));
    }
  }
  l.lock();
}

ssize_t SReadFrom(fid_cq* f, void* buf, size_t count, fi_addr_t* src,
                  const void* cond, int timeout) {
  Cq* cq = C(f);
  if (cq->epfd < 0) return -FI_ENOSYS;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout);
  Lock l(cq->domain->mu);
  for (;;) {
    if (cq->entries.empty() && cq->errors.empty()) cq->ProgressAll();
    ssize_t r = TakeEntries(cq, buf, count, src);
    if (r != -FI_EAGAIN) return r;
    int wait_ms = 5;  // a backstop; the wait fds wake us for work
    if (timeout >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - Clock::now())
                      .count();
      if (left <= 0) return -FI_EAGAIN;
      wait_ms = static_cast<int>(std::min<int64_t>(left, wait_ms));
    }
    Block(cq, l, wait_ms);
  }
}

ssize_t SRead(fid_cq* f, void* buf, size_t count, const void* cond,
              int timeout) {
  return SReadFrom(f, buf, count, nullptr, cond, timeout);
}

int Signal(fid_cq* f) {
  Cq* cq = C(f);
  if (cq->signal_fd < 0) return -FI_ENOSYS;
  uint64_t one = 1;
  (void)!write(cq->signal_fd, &one, sizeof(one));
  return 0;
}

const char* StrError(fid_cq*, int prov_errno, const void* err_data, char* buf,
                     size_t len) {
  const char* s =
      err_data ? static_cast<const char*>(err_data) : ProvErrName(prov_errno);
  if (buf && len) {
    std::strncpy(buf, s, len - 1);
    buf[len - 1] = '\0';
    return buf;
  }
  return s;
}

fi_ops_cq kCqOps = {
    .size = sizeof(fi_ops_cq),
    .read = Read,
    .readfrom = ReadFrom,
    .readerr = ReadErr,
    .sread = SRead,
    .sreadfrom = SReadFrom,
    .signal = Signal,
    .strerror = StrError,
};

int CqClose(fid* f) {
  Cq* cq = FromFid<Cq>(f);
  {
    std::lock_guard<std::mutex> l(cq->domain->mu);
    if (!cq->eps.empty()) return -FI_EBUSY;
  }
  if (cq->epfd >= 0) close(cq->epfd);
  if (cq->signal_fd >= 0) close(cq->signal_fd);
  delete cq;
  return 0;
}

int CqControl(fid* f, int command, void* arg) {
  Cq* cq = FromFid<Cq>(f);
  switch (command) {
    case FI_GETWAIT:
      if (cq->epfd < 0) return -FI_ENODATA;
      *static_cast<int*>(arg) = cq->epfd;
      return 0;
    case FI_GETWAITOBJ:
      *static_cast<fi_wait_obj*>(arg) =
          cq->epfd >= 0 ? FI_WAIT_FD : FI_WAIT_NONE;
      return 0;
    default:
      return -FI_ENOSYS;
  }
}

fi_ops kCqFiOps = stubs::FidOps(CqClose, nullptr, CqControl);

size_t EntrySize(fi_cq_format f) {
  switch (f) {
    case FI_CQ_FORMAT_UNSPEC:
    case FI_CQ_FORMAT_CONTEXT:
      return sizeof(fi_cq_entry);
    case FI_CQ_FORMAT_MSG:
      return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA:
      return sizeof(fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED:
      return sizeof(fi_cq_tagged_entry);
  }
  return 0;
}

}  // namespace

int OpenCq(fid_domain* domain, fi_cq_attr* attr, fid_cq** out, void* context) {
  size_t size = EntrySize(attr->format);
  if (size == 0) return -FI_ENOSYS;
  if (attr->flags & ~static_cast<uint64_t>(FI_AFFINITY)) return -FI_EBADFLAGS;
  const bool wait =
      attr->wait_obj == FI_WAIT_FD || attr->wait_obj == FI_WAIT_UNSPEC;
  if (!wait && attr->wait_obj != FI_WAIT_NONE) return -FI_ENOSYS;
  if (attr->wait_cond != FI_CQ_COND_NONE) return -FI_ENOSYS;
  auto* cq = new Cq();
  cq->fid.fid.fclass = FI_CLASS_CQ;
  cq->fid.fid.context = context;
  cq->fid.fid.ops = &kCqFiOps;
  cq->fid.ops = &kCqOps;
  cq->domain = FromFid<Domain>(domain);
  cq->format =
      attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
  cq->entry_size = size;
  if (wait) {
    cq->epfd = epoll_create1(EPOLL_CLOEXEC);
    cq->signal_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (cq->epfd < 0 || cq->signal_fd < 0) {
      if (cq->epfd >= 0) close(cq->epfd);
      if (cq->signal_fd >= 0) close(cq->signal_fd);
      delete cq;
      return -FI_ENOMEM;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;
    epoll_ctl(cq->epfd, EPOLL_CTL_ADD, cq->signal_fd, &ev);
  }
  *out = &cq->fid;
  return 0;
}

int TryWait(fid_fabric*, fid** fids, int count) {
  for (int i = 0; i < count; ++i) {
    if (fids[i]->fclass != FI_CLASS_CQ) return -FI_EINVAL;
    Cq* cq = FromFid<Cq>(fids[i]);
    std::lock_guard<std::mutex> l(cq->domain->mu);
    if (cq->entries.empty() && cq->errors.empty()) cq->ProgressAll();
    if (!cq->entries.empty() || !cq->errors.empty()) return -FI_EAGAIN;
    for (Ep* ep : cq->eps) ep->Flush();
    if (cq->signal_fd >= 0) {  // a signal already seen: clear it
      uint64_t v;
      (void)!read(cq->signal_fd, &v, sizeof(v));
    }
  }
  return 0;
}

}  // namespace braid::libfabric

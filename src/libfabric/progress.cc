#include "libfabric/progress.h"

#include <unistd.h>

#include <chrono>

#include "libfabric/ep.h"
#include "libfabric/objects.h"

namespace braid::libfabric {
namespace {

// Wakes the application's waiters on `cq` (fi_cq_sread, or its own poll
// on the FI_GETWAIT fd) when the thread left entries there.
void Signal(Cq* cq) {
  if (cq == nullptr || cq->signal_fd < 0) return;
  if (cq->entries.empty() && cq->errors.empty()) return;
  uint64_t one = 1;
  (void)!write(cq->signal_fd, &one, sizeof(one));
}

}  // namespace

ProgressThread::ProgressThread(Domain* domain, DurationNs idle)
    : domain_(domain), idle_(idle), thread_([this] { Run(); }) {}

ProgressThread::~ProgressThread() {
  {
    std::lock_guard<std::mutex> l(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void ProgressThread::Run() {
  const auto period = std::chrono::nanoseconds(idle_.ns());
  std::unique_lock<std::mutex> sl(stop_mu_);
  while (!stop_cv_.wait_for(sl, period, [this] { return stop_; })) {
    std::lock_guard<std::mutex> l(domain_->mu);
    for (Ep* ep : domain_->eps) {
      if (ep->app_calls != ep->app_calls_seen) {  // the application drives it
        ep->app_calls_seen = ep->app_calls;
        continue;
      }
      ep->Progress();
      ep->Flush();
      Signal(ep->tx_cq);
      if (ep->rx_cq != ep->tx_cq) Signal(ep->rx_cq);
    }
  }
}

}  // namespace braid::libfabric

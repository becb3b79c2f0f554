#include "verbs_compat/cq.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "verbs_compat/context.h"

namespace braid::verbs_compat {

CompChannel::CompChannel(Context* ctx) : ctx_(ctx) {
  std::memset(&shell_.ibv, 0, sizeof(shell_.ibv));
  shell_.ibv.context = ctx->ibv();
  shell_.ibv.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  shell_.ibv.refcnt = 0;
  shell_.owner = this;
}

CompChannel::~CompChannel() {
  if (shell_.ibv.fd >= 0) close(shell_.ibv.fd);
}

void CompChannel::Raise(Cq* cq) {
  pending_.push_back(cq);
  if (ctx_->HoldEvent(this)) {
    ++held_;
    return;
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t r = write(shell_.ibv.fd, &one, sizeof(one));
}

void CompChannel::SignalHeld() {
  if (held_ == 0) return;
  [[maybe_unused]] ssize_t r = write(shell_.ibv.fd, &held_, sizeof(held_));
  held_ = 0;
}

Cq* CompChannel::Take() {
  if (pending_.empty()) return nullptr;
  Cq* cq = pending_.front();
  pending_.pop_front();
  // Its count: there is one per queued event (Raise), so this never blocks.
  uint64_t v;
  while (read(shell_.ibv.fd, &v, sizeof(v)) < 0 && errno == EINTR) {
  }
  return cq;
}

void CompChannel::Forget(Cq* cq) {
  size_t removed = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (*it == cq) {
      it = pending_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  // Consume the matching semaphore counts without blocking.
  for (size_t i = 0; i < removed; ++i) {
    uint64_t v;
    while (read(shell_.ibv.fd, &v, sizeof(v)) < 0 && errno == EINTR) {
    }
  }
}

Cq::Cq(Context* ctx, int cqe, void* cq_context, CompChannel* channel,
       int comp_vector)
    : ctx_(ctx), channel_(channel), cqe_(cqe) {
  std::memset(&shell_.ibv, 0, sizeof(shell_.ibv));
  shell_.ibv.context = ctx->ibv();
  shell_.ibv.channel = channel ? channel->ibv() : nullptr;
  shell_.ibv.cq_context = cq_context;
  shell_.ibv.handle = ctx->NextHandle();
  shell_.ibv.cqe = cqe;
  pthread_mutex_init(&shell_.ibv.mutex, nullptr);
  pthread_cond_init(&shell_.ibv.cond, nullptr);
  shell_.owner = this;
  ring_.resize(std::max(cqe, 1) + 1);
  stamps_.resize(ring_.size());
}

void Cq::Grow() {
  std::vector<ibv_wc> bigger(ring_.size() * 2);
  std::vector<uint64_t> bigger_stamps(ring_.size() * 2);
  for (size_t i = 0; i < count_; ++i) {
    bigger[i] = ring_[(head_ + i) % ring_.size()];
    bigger_stamps[i] = stamps_[(head_ + i) % ring_.size()];
  }
  ring_.swap(bigger);
  stamps_.swap(bigger_stamps);
  head_ = 0;
}

void Cq::Push(const ibv_wc& wc, bool solicited) {
  if (error_ || count_ >= static_cast<size_t>(cqe_)) {
    ++overruns_;
    if (!error_) {
      error_ = true;
      ctx_->OnCqOverrun(this);
    }
    return;
  }
  if (count_ == ring_.size()) Grow();  // after ibv_resize_cq
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  ring_[(head_ + count_) % ring_.size()] = wc;
  stamps_[(head_ + count_) % ring_.size()] =
      static_cast<uint64_t>(now.tv_sec) * 1000000000u +
      static_cast<uint64_t>(now.tv_nsec);
  ++count_;
  if (armed_ && channel_ != nullptr &&
      (!solicited_only_ || solicited || wc.status != IBV_WC_SUCCESS)) {
    armed_ = false;
    channel_->Raise(this);
  }
}

int Cq::Pop(int n, ibv_wc* wc, uint64_t* stamps_ns) {
  int k = 0;
  while (k < n && count_ > 0) {
    if (stamps_ns != nullptr) stamps_ns[k] = stamps_[head_];
    wc[k++] = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  return k;
}

}  // namespace braid::verbs_compat

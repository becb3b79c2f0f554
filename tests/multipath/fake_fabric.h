// Test-only driver for PathSet: a tiny FIFO-per-path network with fixed RTT,
// per-entropy behaviour (blackhole, loss probability, CE probability) and the
// caller duties PathSet expects (one outcome per packet, in per-path order;
// declaring in-flight packets lost on recycle).
#ifndef BRAID_TESTS_MULTIPATH_FAKE_FABRIC_H_
#define BRAID_TESTS_MULTIPATH_FAKE_FABRIC_H_

#include <deque>
#include <functional>
#include <vector>

#include "base/rng.h"
#include "multipath/path_set.h"

namespace braid::multipath {

class FakeFabric {
 public:
  struct Flight {
    wire::PathSeq seq;
    wire::Entropy entropy;
    TimeNs sent;
    bool delivered;
    bool ce;
  };

  FakeFabric(PathSet* ps, uint64_t seed, DurationNs rtt)
      : ps_(ps), rng_(seed), rtt_(rtt), queues_(ps->size()) {}

  // Behaviour of the route an entropy hashes to.
  std::function<bool(wire::Entropy)> blackholed = [](wire::Entropy) {
    return false;
  };
  std::function<double(wire::Entropy)> loss_prob = [](wire::Entropy) {
    return 0.0;
  };
  std::function<double(wire::Entropy)> ce_prob = [](wire::Entropy) {
    return 0.0;
  };
  // Loss is noticed this long after the send (per-path gap or time rule).
  DurationNs loss_delay = DurationNs::Zero();  // Zero: 2 * rtt
  // Called for every send (path, entropy, health before the send).
  std::function<void(wire::PathId, wire::Entropy, PathHealth)> on_send;

  wire::PathId Send(TimeNs now, int avoid = -1) {
    const wire::PathId p = ps_->Pick(now, avoid);
    const wire::Entropy e = ps_->entropy(p);
    if (on_send) on_send(p, e, ps_->stats(p).health);
    const wire::PathSeq seq = ps_->OnSent(p, 4096, now);
    const bool delivered = !blackholed(e) && !rng_.Bernoulli(loss_prob(e));
    const bool ce = delivered && rng_.Bernoulli(ce_prob(e));
    queues_[p].push_back({seq, e, now, delivered, ce});
    ++sent_;
    return p;
  }

  // Delivers every outcome due by `now`, in per-path FIFO order.
  void Process(TimeNs now) {
    const DurationNs ld =
        loss_delay == DurationNs::Zero() ? rtt_ * 2 : loss_delay;
    for (size_t p = 0; p < queues_.size(); ++p) {
      auto& q = queues_[p];
      const auto pid = static_cast<wire::PathId>(p);
      while (!q.empty()) {
        const Flight& f = q.front();
        PathEvent ev = PathEvent::kNone;
        if (f.delivered) {
          if (now < f.sent + rtt_) break;
          ps_->OnAcked(pid, 4096, now);
          ps_->OnRttSample(pid, rtt_);
          if (f.ce) ev = ps_->OnEcn(pid, now);
        } else {
          if (now < f.sent + ld) break;
          ev = ps_->OnLoss(pid, now);
        }
        q.pop_front();
        if (ev == PathEvent::kRecycled) {
          ++recycled_events_;
          while (!q.empty()) {  // declare the old entropy's packets lost
            ps_->OnLoss(pid, now);
            q.pop_front();
          }
        }
      }
    }
  }

  // Sends one packet every `gap` until `end`, processing outcomes and timers.
  // `each` (optional) runs after every step.
  void Run(TimeNs* now, TimeNs end, DurationNs gap,
           const std::function<void()>& each = nullptr) {
    while (*now < end) {
      if (*now >= ps_->NextTimerTime()) ps_->OnTimer(*now);
      Process(*now);
      Send(*now);
      if (each) each();
      *now += gap;
    }
  }

  uint64_t sent() const { return sent_; }
  uint64_t recycled_events() const { return recycled_events_; }

 private:
  PathSet* ps_;
  Rng rng_;
  DurationNs rtt_;
  std::vector<std::deque<Flight>> queues_;
  uint64_t sent_ = 0;
  uint64_t recycled_events_ = 0;
};

}  // namespace braid::multipath

#endif  // BRAID_TESTS_MULTIPATH_FAKE_FABRIC_H_

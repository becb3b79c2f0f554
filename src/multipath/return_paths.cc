#include "multipath/return_paths.h"

#include <algorithm>
#include <utility>

namespace braid::multipath {

ReturnPaths::Port* ReturnPaths::Find(uint16_t port) {
  return const_cast<Port*>(std::as_const(*this).Find(port));
}

const ReturnPaths::Port* ReturnPaths::Find(uint16_t port) const {
  for (const Port& p : ports_) {
    if (p.used && p.port == port) return &p;
  }
  return nullptr;
}

ReturnPaths::Port* ReturnPaths::Insert(uint16_t port) {
  Port* victim = &ports_[0];
  for (Port& p : ports_) {
    if (!p.used) {
      victim = &p;
      break;
    }
    if (p.last_use < victim->last_use) victim = &p;
  }
  if (victim->used && victim->samples >= opts_.min_samples) {
    since_reference_ = 16;  // a judged port leaves: the reference must follow
  }
  *victim = Port();
  victim->used = true;
  victim->port = port;
  return victim;
}

bool ReturnPaths::Observe(uint16_t port, DurationNs excess) {
  if (opts_.factor <= 0) return false;
  Port* p = Find(port);
  if (p == nullptr) p = Insert(port);
  p->last_use = ++tick_;
  const int64_t x = std::max<int64_t>(excess.ns(), 0);
  p->excess_ns = p->samples == 0 ? x : p->excess_ns + (x - p->excess_ns) / 8;
  ++p->samples;
  if (p->samples == opts_.min_samples || ++since_reference_ >= 16) {
    RecomputeReference();
  }
  if (p->samples < opts_.min_samples) {
    // A port without history yet (the receiver just moved an ack path to
    // a fresh entropy): judge the sample itself.
    return judged_ >= 3 && SlowExcess(x);
  }
  return Slow(*p);
}

bool ReturnPaths::IsSlow(uint16_t port) const {
  const Port* p = Find(port);
  return p != nullptr && Slow(*p);
}

bool ReturnPaths::Slow(const Port& p) const {
  // Three judged ports at least: with two, neither is "the rest". (With
  // the filter off, Observe records nothing and no port is judged.)
  return judged_ >= 3 && p.samples >= opts_.min_samples &&
         SlowExcess(p.excess_ns);
}

bool ReturnPaths::SlowExcess(int64_t excess_ns) const {
  const int64_t m = reference_.ns();
  return static_cast<double>(excess_ns) >
             static_cast<double>(m) * opts_.factor &&
         excess_ns > m + opts_.margin.ns();
}

void ReturnPaths::RecomputeReference() {
  since_reference_ = 0;
  int64_t v[kCapacity];
  int n = 0;
  for (const Port& p : ports_) {
    if (p.used && p.samples >= opts_.min_samples) v[n++] = p.excess_ns;
  }
  judged_ = n;
  if (n == 0) {
    reference_ = DurationNs::Zero();
    return;
  }
  std::nth_element(v, v + n / 4, v + n);
  reference_ = DurationNs(v[n / 4]);
}

void ReturnPaths::Reset() {
  ports_.fill(Port());
  tick_ = 0;
  since_reference_ = 0;
  judged_ = 0;
  reference_ = DurationNs::Zero();
}

}  // namespace braid::multipath

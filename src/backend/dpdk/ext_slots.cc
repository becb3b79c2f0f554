#include "backend/dpdk/ext_slots.h"

#include <rte_mbuf.h>

namespace braid::backend::dpdk {

struct ExtSlots::Slot {
  rte_mbuf_ext_shared_info shinfo;
  // Null once orphaned: the slots outlive the backend that filled them.
  std::atomic<TxHold*> hold{nullptr};
  std::atomic<bool> used{false};
};

ExtSlots::ExtSlots(size_t n) : n_(n), slots_(new Slot[n]) {}

ExtSlots::~ExtSlots() {
  if (in_use() == 0) return;
  for (size_t i = 0; i < n_; ++i) {
    slots_[i].hold.store(nullptr, std::memory_order_release);
  }
  (void)slots_.release();  // still referenced by frames in flight
}

rte_mbuf_ext_shared_info* ExtSlots::Take(TxHold* hold) {
  // Frames are freed roughly in the order they were sent, so the slot after
  // the last one taken is usually free.
  for (size_t tries = 0; tries < n_; ++tries) {
    Slot& s = slots_[cursor_];
    cursor_ = cursor_ + 1 == n_ ? 0 : cursor_ + 1;
    if (s.used.load(std::memory_order_acquire)) continue;
    s.used.store(true, std::memory_order_relaxed);
    hold->refs.fetch_add(1, std::memory_order_relaxed);
    s.hold.store(hold, std::memory_order_relaxed);
    s.shinfo.free_cb = &ExtSlots::OnFree;
    s.shinfo.fcb_opaque = &s;
    rte_mbuf_ext_refcnt_set(&s.shinfo, 1);
    return &s.shinfo;
  }
  return nullptr;
}

size_t ExtSlots::in_use() const {
  size_t n = 0;
  for (size_t i = 0; i < n_; ++i) {
    n += slots_[i].used.load(std::memory_order_acquire) ? 1 : 0;
  }
  return n;
}

void ExtSlots::OnFree(void* /*addr*/, void* opaque) {
  Slot* s = static_cast<Slot*>(opaque);
  TxHold* hold = s->hold.exchange(nullptr, std::memory_order_acq_rel);
  if (hold != nullptr) hold->refs.fetch_sub(1, std::memory_order_release);
  s->used.store(false, std::memory_order_release);
}

}  // namespace braid::backend::dpdk

// Sends whose completions wait until the backend lets go of their bytes
// (zero-copy transmit by reference: backend::TxHold), and the pool of holds
// the core gives messages. Completions leave in the order they were parked.
#ifndef BRAID_ENDPOINT_HELD_SENDS_H_
#define BRAID_ENDPOINT_HELD_SENDS_H_

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "braid/completion.h"

namespace braid::endpoint {

class HeldSends {
 public:
  // A hold with refs 0, from the pool (allocated only while the pool grows
  // to the number of messages in flight).
  backend::TxHold* Acquire() {
    if (free_.empty()) {
      owned_.push_back(std::make_unique<backend::TxHold>());
      return owned_.back().get();
    }
    backend::TxHold* h = free_.back();
    free_.pop_back();
    return h;
  }
  // True if a finished send with `hold` (may be null) must wait: the backend
  // still references its bytes, or an earlier send waits (order is kept).
  bool MustWait(const backend::TxHold* hold) const {
    return !parked_.empty() ||
           (hold != nullptr && hold->refs.load(std::memory_order_acquire) != 0);
  }
  // Returns a hold with refs 0 to the pool; null is ignored.
  void Release(backend::TxHold* hold) {
    if (hold != nullptr) free_.push_back(hold);
  }
  // Keeps a finished send until its hold is released.
  void Park(Completion&& c, std::vector<uint8_t>&& buffer,
            backend::TxHold* hold) {
    parked_.push_back({std::move(c), std::move(buffer), hold});
  }
  // Hands each parked send whose bytes are free, in order, to
  // done(Completion&&, std::vector<uint8_t>&&) and returns its hold to the
  // pool; stops at the first that still waits.
  template <typename Done>
  void Drain(Done&& done) {
    while (!parked_.empty()) {
      Parked& p = parked_.front();
      if (p.hold != nullptr &&
          p.hold->refs.load(std::memory_order_acquire) != 0) {
        return;
      }
      done(std::move(p.c), std::move(p.buffer));
      Release(p.hold);
      parked_.pop_front();
    }
  }
  bool empty() const { return parked_.empty(); }
  size_t size() const { return parked_.size(); }

 private:
  struct Parked {
    Completion c;
    std::vector<uint8_t> buffer;
    backend::TxHold* hold;
  };
  std::vector<std::unique_ptr<backend::TxHold>> owned_;
  std::vector<backend::TxHold*> free_;
  std::deque<Parked> parked_;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_HELD_SENDS_H_

// The bookkeeping of transmit tails attached to mbufs by reference
// (zero-copy transmit): one slot per frame in flight, holding DPDK's shared
// info for the external buffer and the message's TxHold. The port frees the
// mbuf when it is done with the bytes — inside a later burst, or on another
// thread (a ring's consumer) — and the free callback releases the hold and
// the slot.
#ifndef BRAID_BACKEND_DPDK_EXT_SLOTS_H_
#define BRAID_BACKEND_DPDK_EXT_SLOTS_H_

#include <atomic>
#include <cstddef>
#include <memory>

#include "backend/backend.h"

struct rte_mbuf_ext_shared_info;

namespace braid::backend::dpdk {

class ExtSlots {
 public:
  struct Slot;  // DPDK's shared info for one external buffer, and its hold

  explicit ExtSlots(size_t n = 8192);
  // If frames still reference slots, the array is left allocated (and the
  // holds forgotten) so their late free callbacks touch valid memory.
  ~ExtSlots();
  ExtSlots(const ExtSlots&) = delete;
  ExtSlots& operator=(const ExtSlots&) = delete;

  // The shared info of a free slot, set up for one mbuf referencing bytes
  // under `hold` (whose refs it increments; the free callback decrements
  // them), or null when every slot is in use.
  rte_mbuf_ext_shared_info* Take(TxHold* hold);
  // Slots in use now.
  size_t in_use() const;

 private:
  static void OnFree(void* addr, void* opaque);

  size_t n_;
  std::unique_ptr<Slot[]> slots_;
  size_t cursor_ = 0;
};

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_EXT_SLOTS_H_

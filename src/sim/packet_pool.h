// A free-list pool of simulator packets with fixed-size payload buffers.
// Grows in chunks; in steady state Alloc/Free do no heap allocation.
#ifndef BRAID_SIM_PACKET_POOL_H_
#define BRAID_SIM_PACKET_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/packet.h"

namespace braid::sim {

struct PacketPoolOptions {
  // Payload capacity of every packet buffer (bytes). Default fits a 9000-byte
  // jumbo frame's UDP payload with room to spare.
  uint32_t buffer_bytes = 9216;
  // Packets added per growth step.
  uint32_t chunk_packets = 512;
  // Fill freed payload buffers with 0xdd so code that keeps a buffer past
  // its lifetime (e.g. an RxPacket after the next RxBurst) reads garbage
  // instead of plausible data. Default on in debug builds. Under
  // AddressSanitizer freed buffers are also poisoned, so such reads fault.
#ifdef NDEBUG
  bool poison_on_free = false;
#else
  bool poison_on_free = true;
#endif
};

class PacketPool {
 public:
  explicit PacketPool(PacketPoolOptions options = {});
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // Returns a reset packet (len 0, flags clear, capacity = buffer_bytes).
  // Never returns null; grows the pool when empty.
  Packet* Alloc();

  // Returns `p` to the pool. `p` must have come from this pool's Alloc.
  void Free(Packet* p);

  // Returns a new packet with the same header fields and payload as `p`.
  Packet* Clone(const Packet& p);

  uint32_t buffer_bytes() const { return options_.buffer_bytes; }
  // Packets currently handed out.
  size_t in_use() const { return in_use_; }
  // Packets ever created (the pool's footprint).
  size_t allocated() const { return allocated_; }

 private:
  void Grow();

  PacketPoolOptions options_;
  Packet* free_ = nullptr;
  size_t in_use_ = 0;
  size_t allocated_ = 0;
  std::vector<std::unique_ptr<Packet[]>> packet_chunks_;
  std::vector<std::unique_ptr<uint8_t[]>> buffer_chunks_;
};

}  // namespace braid::sim

#endif  // BRAID_SIM_PACKET_POOL_H_

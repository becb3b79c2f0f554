#include "sim/packet_pool.h"

#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define BRAID_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define BRAID_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define BRAID_POISON(p, n) ((void)(p), (void)(n))
#define BRAID_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace braid::sim {

PacketPool::PacketPool(PacketPoolOptions options) : options_(options) {
  if (options_.chunk_packets == 0) options_.chunk_packets = 1;
}

void PacketPool::Grow() {
  const uint32_t n = options_.chunk_packets;
  auto packets = std::make_unique<Packet[]>(n);
  auto buffers = std::make_unique_for_overwrite<uint8_t[]>(
      static_cast<size_t>(n) * options_.buffer_bytes);
  for (uint32_t i = 0; i < n; ++i) {
    Packet& p = packets[i];
    p.data = buffers.get() + static_cast<size_t>(i) * options_.buffer_bytes;
    p.capacity = options_.buffer_bytes;
    p.next = free_;
    free_ = &p;
    BRAID_POISON(p.data, options_.buffer_bytes);
  }
  allocated_ += n;
  packet_chunks_.push_back(std::move(packets));
  buffer_chunks_.push_back(std::move(buffers));
}

Packet* PacketPool::Alloc() {
  if (free_ == nullptr) Grow();
  Packet* p = free_;
  free_ = p->next;
  uint8_t* data = p->data;
  *p = Packet{};
  p->data = data;
  p->capacity = options_.buffer_bytes;
  BRAID_UNPOISON(p->data, options_.buffer_bytes);
  ++in_use_;
  return p;
}

void PacketPool::Free(Packet* p) {
  if (options_.poison_on_free)
    std::memset(p->data, 0xdd, options_.buffer_bytes);
  BRAID_POISON(p->data, options_.buffer_bytes);
  p->next = free_;
  free_ = p;
  --in_use_;
}

Packet* PacketPool::Clone(const Packet& src) {
  Packet* p = Alloc();
  uint8_t* data = p->data;
  *p = src;
  p->data = data;
  p->capacity = options_.buffer_bytes;
  p->next = nullptr;
  std::memcpy(p->data, src.data, src.len);
  return p;
}

}  // namespace braid::sim

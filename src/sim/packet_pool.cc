#include "sim/packet_pool.h"

#include <cstring>
#include <memory>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define BRAID_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define BRAID_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define BRAID_POISON(p, n) ((void)(p), (void)(n))
#define BRAID_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace braid::sim {

namespace {

constexpr size_t kLine = 64;
constexpr size_t kHeaderBytes = (sizeof(Packet) + kLine - 1) / kLine * kLine;

}  // namespace

PacketPool::PacketPool(PacketPoolOptions options)
    : options_(options),
      stride_(kHeaderBytes +
              (size_t{options.buffer_bytes} + kLine - 1) / kLine * kLine) {
  if (options_.chunk_packets == 0) options_.chunk_packets = 1;
}

void PacketPool::ChunkDeleter::operator()(uint8_t* chunk) const {
  for (uint32_t i = 0; i < packets; ++i) {
    std::destroy_at(reinterpret_cast<Packet*>(chunk + i * stride));
  }
  ::operator delete[](chunk, std::align_val_t{kLine});
}

void PacketPool::Grow() {
  const uint32_t n = options_.chunk_packets;
  // Not zero-filled: pages nobody writes (the unused ends of buffers) stay
  // untouched.
  Chunk chunk(static_cast<uint8_t*>(
                  ::operator new[](n* stride_, std::align_val_t{kLine})),
              ChunkDeleter{n, stride_});
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* block = chunk.get() + i * stride_;
    Packet* p = new (block) Packet{};
    p->data = block + kHeaderBytes;
    p->capacity = options_.buffer_bytes;
    p->next = free_;
    free_ = p;
    BRAID_POISON(p->data, options_.buffer_bytes);
  }
  allocated_ += n;
  chunks_.push_back(std::move(chunk));
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

// A bounded free list of byte buffers by power-of-two size class, so the
// steady-state receive path reuses message buffers instead of allocating.
#ifndef BRAID_REORDER_BUFFER_POOL_H_
#define BRAID_REORDER_BUFFER_POOL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::reorder {

struct BufferPoolOptions {
  // Buffers whose size class exceeds this are not kept (freed on Put).
  // Multi-MiB messages are reused too: a fresh buffer costs its page faults
  // again (and, before Reserve, a zero-fill in one call at the message's
  // first fragment, which stalled a 4 MiB receiver 1-2 ms with no ack sent;
  // on loopback). max_pooled_bytes still bounds what an idle endpoint keeps.
  size_t max_pooled_size = size_t{16} << 20;  // 16 MiB
  // At most this many free buffers are kept per size class; the byte bound
  // below limits the large classes. A receiver that falls behind its
  // senders holds every message of its receive queue at once (thousands of
  // small ones: the queue is bounded in bytes), and hands them all back;
  // a count cap below that peak freed the excess and allocated it again at
  // the next surge (1,024 did, in a 20,000-message rate run on a loaded
  // host). 16,384 buffers of the 64-byte class are 1 MiB of payload plus,
  // by arithmetic, ~0.6 MiB of bookkeeping (a 24-byte vector and a 16-byte
  // malloc header each), kept only after such a peak.
  uint32_t max_buffers_per_class = 16384;
  // At most this many bytes (sum of capacities) are kept in total.
  size_t max_pooled_bytes = size_t{32} << 20;  // 32 MiB
};

struct BufferPoolStats {
  uint64_t gets = 0;
  uint64_t hits = 0;         // served from the free list
  uint64_t allocations = 0;  // served by a new allocation
  uint64_t puts = 0;
  uint64_t kept = 0;   // of puts, kept for reuse
  uint64_t freed = 0;  // of puts, released (class full/too large)
};

// Not thread-safe: owned by one endpoint thread.
class BufferPool {
 public:
  explicit BufferPool(const BufferPoolOptions& options = BufferPoolOptions());

  // Returns a buffer with size() == size. Contents are unspecified (a reused
  // buffer keeps old bytes); capacity is the size class (next power of two)
  // for pooled sizes. Get(0) returns an empty vector without allocating.
  std::vector<uint8_t> Get(size_t size);

  // Returns a buffer with capacity() >= size and no bytes written: size()
  // is 0 for a new one, the previous size for a reused one. For callers
  // that fill it themselves (append, or overwrite what size() covers), so
  // a new buffer is neither zero-filled nor touched in one go: its pages
  // are faulted in as the data arrives.
  std::vector<uint8_t> Reserve(size_t size);

  // Returns a buffer for reuse. Buffers that do not fit the bounds are freed.
  // Leaves `buf` empty.
  void Put(std::vector<uint8_t>&& buf);

  // Frees every pooled buffer.
  void Clear();

  size_t pooled_buffers() const;
  size_t pooled_bytes() const { return pooled_bytes_; }
  const BufferPoolStats& stats() const { return stats_; }

 private:
  static constexpr int kClasses = 64;
  BufferPoolOptions options_;
  std::array<std::vector<std::vector<uint8_t>>, kClasses> free_;
  size_t pooled_bytes_ = 0;
  BufferPoolStats stats_;
};

}  // namespace braid::reorder

#endif  // BRAID_REORDER_BUFFER_POOL_H_

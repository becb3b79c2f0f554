#include "reorder/buffer_pool.h"

#include <bit>
#include <utility>

namespace braid::reorder {

BufferPool::BufferPool(const BufferPoolOptions& options) : options_(options) {}

std::vector<uint8_t> BufferPool::Get(size_t size) {
  std::vector<uint8_t> v = Reserve(size);
  // Shrinking costs nothing; growing fills only the new tail.
  v.resize(size);
  return v;
}

std::vector<uint8_t> BufferPool::Reserve(size_t size) {
  ++stats_.gets;
  std::vector<uint8_t> v;
  if (size == 0) {
    ++stats_.hits;
    return v;
  }
  const size_t cls_size = std::bit_ceil(size);
  if (cls_size <= options_.max_pooled_size) {
    auto& list = free_[std::countr_zero(cls_size)];
    if (!list.empty()) {
      v = std::move(list.back());
      list.pop_back();
      pooled_bytes_ -= v.capacity();
      ++stats_.hits;
      return v;
    }
    ++stats_.allocations;
    v.reserve(cls_size);
    return v;
  }
  ++stats_.allocations;
  v.reserve(size);
  return v;
}

void BufferPool::Put(std::vector<uint8_t>&& buf) {
  ++stats_.puts;
  const size_t cap = buf.capacity();
  // A buffer serves the largest class its capacity covers.
  if (cap == 0 || std::bit_floor(cap) > options_.max_pooled_size ||
      pooled_bytes_ + cap > options_.max_pooled_bytes) {
    ++stats_.freed;
    std::vector<uint8_t>().swap(buf);
    return;
  }
  auto& list = free_[std::countr_zero(std::bit_floor(cap))];
  if (list.size() >= options_.max_buffers_per_class) {
    ++stats_.freed;
    std::vector<uint8_t>().swap(buf);
    return;
  }
  ++stats_.kept;
  pooled_bytes_ += cap;
  list.push_back(std::move(buf));
}

void BufferPool::Clear() {
  for (auto& list : free_) {
    list.clear();
    list.shrink_to_fit();
  }
  pooled_bytes_ = 0;
}

size_t BufferPool::pooled_buffers() const {
  size_t n = 0;
  for (const auto& list : free_) n += list.size();
  return n;
}

}  // namespace braid::reorder

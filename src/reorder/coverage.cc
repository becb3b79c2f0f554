#include "reorder/coverage.h"

#include <algorithm>

namespace braid::reorder {

bool Coverage::Insert(uint32_t begin, uint32_t end) {
  // First range starting after `begin`; its predecessor starts at or before.
  auto next =
      std::upper_bound(ranges_.begin(), ranges_.end(), begin,
                       [](uint32_t b, const Range& r) { return b < r.begin; });
  const bool has_prev = next != ranges_.begin();
  const bool has_next = next != ranges_.end();
  if (has_prev && std::prev(next)->end > begin) return false;
  if (has_next && next->begin < end) return false;
  const bool join_prev = has_prev && std::prev(next)->end == begin;
  const bool join_next = has_next && next->begin == end;
  if (join_prev && join_next) {
    std::prev(next)->end = next->end;
    ranges_.erase(next);
  } else if (join_prev) {
    std::prev(next)->end = end;
  } else if (join_next) {
    next->begin = begin;
  } else {
    ranges_.insert(next, Range{begin, end});
  }
  covered_ += end - begin;
  return true;
}

size_t Coverage::HeapBytesAfterFull(uint32_t begin, uint32_t end) const {
  auto next =
      std::upper_bound(ranges_.begin(), ranges_.end(), begin,
                       [](uint32_t b, const Range& r) { return b < r.begin; });
  const bool join_prev =
      next != ranges_.begin() && std::prev(next)->end == begin;
  const bool join_next = next != ranges_.end() && next->begin == end;
  if (join_prev || join_next) return heap_bytes();
  return 2 * ranges_.capacity() * sizeof(Range);
}

}  // namespace braid::reorder

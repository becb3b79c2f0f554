// The set of byte ranges of one message that have arrived, for reassembly
// of fragments of any size: detects overlap (a forged or buggy fragment
// must never complete a message early) and counts covered bytes.
#ifndef BRAID_REORDER_COVERAGE_H_
#define BRAID_REORDER_COVERAGE_H_

#include <cstddef>
#include <cstdint>

#include "absl/container/inlined_vector.h"

namespace braid::reorder {

class Coverage {
 public:
  // Adds [begin, end) (begin < end). Returns false and changes nothing if
  // it overlaps bytes already covered. Adjacent ranges merge, so a message
  // whose fragments arrive in order stays one range.
  bool Insert(uint32_t begin, uint32_t end);

  uint64_t covered_bytes() const { return covered_; }
  // Disjoint, non-adjacent ranges held (holes + 1 at most).
  size_t ranges() const { return ranges_.size(); }
  // Heap bytes held once the ranges outgrew the inline storage (for memory
  // accounting). Never decreases: capacity is kept until destruction.
  size_t heap_bytes() const {
    return ranges_.capacity() > kInline ? ranges_.capacity() * sizeof(Range)
                                        : 0;
  }
  // heap_bytes() once Insert(begin, end) succeeded (a range that joins a
  // neighbour adds nothing; a full vector doubles its capacity).
  size_t heap_bytes_after(uint32_t begin, uint32_t end) const {
    if (ranges_.size() < ranges_.capacity()) return heap_bytes();
    return HeapBytesAfterFull(begin, end);
  }

 private:
  size_t HeapBytesAfterFull(uint32_t begin, uint32_t end) const;
  struct Range {
    uint32_t begin;
    uint32_t end;
  };
  static constexpr size_t kInline = 4;
  absl::InlinedVector<Range, kInline> ranges_;  // sorted by begin
  uint64_t covered_ = 0;
};

}  // namespace braid::reorder

#endif  // BRAID_REORDER_COVERAGE_H_

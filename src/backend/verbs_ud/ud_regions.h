// The memory an application registered for zero-copy sends
// (Backend::RegisterMemory), looked up by address on the send path.
#ifndef BRAID_BACKEND_VERBS_UD_UD_REGIONS_H_
#define BRAID_BACKEND_VERBS_UD_UD_REGIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/container/btree_map.h"

namespace braid::backend {

class UdRegions {
 public:
  // Adds [start, start + len) with local key `lkey` and the opaque handle
  // `mr` (the caller's ibv_mr). False, changing nothing, when it overlaps a
  // region already there or len is 0.
  bool Add(uintptr_t start, size_t len, uint32_t lkey, void* mr);
  // Removes the region starting at `start`; returns its handle, or nullptr
  // when there is none.
  void* Remove(uintptr_t start);
  // The local key of the region holding all of [p, p + len), if one does.
  // O(log regions), with the last hit remembered.
  std::optional<uint32_t> Find(const void* p, size_t len) const;
  size_t size() const { return map_.size(); }
  // Every handle, for release at shutdown.
  template <typename F>
  void ForEach(F f) const {
    for (const auto& [start, r] : map_) f(r.mr);
  }

 private:
  struct Region {
    uintptr_t end;
    uint32_t lkey;
    void* mr;
  };
  absl::btree_map<uintptr_t, Region> map_;
  mutable uintptr_t last_start_ = 0, last_end_ = 0;
  mutable uint32_t last_lkey_ = 0;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_VERBS_UD_UD_REGIONS_H_

#include "backend/verbs_ud/ud_regions.h"

namespace braid::backend {

bool UdRegions::Add(uintptr_t start, size_t len, uint32_t lkey, void* mr) {
  if (len == 0 || start + len < start) return false;
  const uintptr_t end = start + len;
  auto next = map_.lower_bound(start);
  if (next != map_.end() && next->first < end) return false;
  if (next != map_.begin() && std::prev(next)->second.end > start) {
    return false;
  }
  map_.emplace(start, Region{end, lkey, mr});
  return true;
}

void* UdRegions::Remove(uintptr_t start) {
  auto it = map_.find(start);
  if (it == map_.end()) return nullptr;
  void* mr = it->second.mr;
  map_.erase(it);
  last_start_ = last_end_ = 0;
  return mr;
}

std::optional<uint32_t> UdRegions::Find(const void* p, size_t len) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (a >= last_start_ && a + len <= last_end_ && a + len >= a) {
    return last_lkey_;
  }
  auto it = map_.upper_bound(a);
  if (it == map_.begin()) return std::nullopt;
  --it;
  if (a + len < a || a + len > it->second.end) return std::nullopt;
  last_start_ = it->first;
  last_end_ = it->second.end;
  last_lkey_ = it->second.lkey;
  return last_lkey_;
}

}  // namespace braid::backend

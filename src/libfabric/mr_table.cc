#include "libfabric/mr_table.h"

#include <sys/random.h>

#include <cerrno>

#include "absl/status/status.h"

namespace braid::libfabric {

bool KernelMrKeyRandom(uint64_t* key) {
  for (;;) {
    const ssize_t n = getrandom(key, sizeof(*key), 0);
    if (n == static_cast<ssize_t>(sizeof(*key))) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

const char* RmaStatusName(RmaStatus s) {
  switch (s) {
    case RmaStatus::kOk:
      return "ok";
    case RmaStatus::kBadKey:
      return "no memory region with that key at the target";
    case RmaStatus::kOutOfBounds:
      return "the range is outside the target's memory region";
    case RmaStatus::kNoPermission:
      return "the target's memory region does not grant that access";
    case RmaStatus::kRefused:
      return "the target refused the transfer part-way";
  }
  return "unknown";
}

absl::StatusOr<uint64_t> MrTable::Add(uint8_t* base, size_t len,
                                      uint64_t access) {
  if (regions_.size() >= kMaxRegions) {
    return absl::ResourceExhaustedError(
        "braid: the domain has as many memory regions as it allows");
  }
  for (int i = 0; i < kMaxDraws; ++i) {
    uint64_t k = 0;
    if (!random_(&k)) {
      return absl::UnavailableError(
          "braid: no random bits for a memory key (getrandom failed)");
    }
    if (k == 0 || regions_.contains(k)) continue;
    regions_[k] = Region{.base = base, .len = len, .access = access};
    return k;
  }
  return absl::ResourceExhaustedError(
      "braid: every memory key drawn was 0 or in use");
}

void MrTable::Remove(uint64_t key) { regions_.erase(key); }

RmaStatus MrTable::Check(uint64_t key, uint64_t addr, uint64_t len,
                         uint64_t need, uint8_t** out) const {
  auto it = regions_.find(key);
  if (key == 0 || it == regions_.end()) return RmaStatus::kBadKey;
  const Region& r = it->second;
  if ((r.access & need) != need) return RmaStatus::kNoPermission;
  const uint64_t start = reinterpret_cast<uintptr_t>(r.base);
  if (addr < start || len > r.len || addr - start > r.len - len) {
    return RmaStatus::kOutOfBounds;
  }
  *out = r.base + (addr - start);
  return RmaStatus::kOk;
}

}  // namespace braid::libfabric

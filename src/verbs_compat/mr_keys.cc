#include "verbs_compat/mr_keys.h"

#include <sys/random.h>

#include <cerrno>

namespace braid::verbs_compat {

bool KernelKeyRandom(uint32_t* key) {
  for (;;) {
    const ssize_t n = getrandom(key, sizeof(*key), 0);
    if (n == static_cast<ssize_t>(sizeof(*key))) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

absl::StatusOr<uint32_t> MrKeys::Allocate() {
  for (int i = 0; i < kMaxDraws; ++i) {
    uint32_t k = 0;
    if (!random_(&k)) {
      return absl::UnavailableError(
          "braid0: no random bits for a memory key (getrandom failed)");
    }
    if (k == 0 || in_use_.contains(k) || retired_.contains(k)) continue;
    in_use_.insert(k);
    return k;
  }
  return absl::ResourceExhaustedError(
      "braid0: every memory key drawn was 0, in use or recently released");
}

void MrKeys::Release(uint32_t key) {
  if (in_use_.erase(key) == 0) return;
  if (retired_ring_.size() < kRetiredKeysKept) {
    retired_ring_.push_back(key);
  } else {
    retired_.erase(retired_ring_[retired_next_]);
    retired_ring_[retired_next_] = key;
    retired_next_ = (retired_next_ + 1) % kRetiredKeysKept;
  }
  retired_.insert(key);
}

}  // namespace braid::verbs_compat

// The memory keys (lkey == rkey) of a braid0 context: random 32-bit
// values, so that an rkey cannot be guessed, nor predicted from others.
#ifndef BRAID_VERBS_COMPAT_MR_KEYS_H_
#define BRAID_VERBS_COMPAT_MR_KEYS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"

namespace braid::verbs_compat {

// Fills *key with random bits; false if the source failed.
using KeyRandom = std::function<bool(uint32_t* key)>;

// Reads the kernel's CSPRNG (getrandom(2)). Not the endpoint's seeded
// generator: a peer sees the rkeys of the regions it is given, and a few
// outputs of a seeded PRNG give its state away, and with it every other
// key. One system call per registration, which is no hot path.
bool KernelKeyRandom(uint32_t* key);

// Hands out keys: each a fresh draw of 32 random bits, never 0, never a
// key in use, and never one of the last kRetiredKeysKept released (a stale
// rkey a peer still holds does not name the next region). Not thread-safe.
class MrKeys {
 public:
  static constexpr size_t kRetiredKeysKept = 4096;
  // Draws per Allocate before it gives up (each collides with probability
  // (in use + retired) / 2^32).
  static constexpr int kMaxDraws = 64;

  explicit MrKeys(KeyRandom random) : random_(std::move(random)) {}

  // A fresh key, now in use. Fails (Unavailable) if the random source
  // fails, or (ResourceExhausted) if kMaxDraws draws were all 0, in use or
  // retired.
  absl::StatusOr<uint32_t> Allocate();
  // `key` is no longer in use; it is retired. Ignores a key not in use.
  void Release(uint32_t key);
  size_t in_use() const { return in_use_.size(); }

 private:
  KeyRandom random_;
  absl::flat_hash_set<uint32_t> in_use_;
  // The last kRetiredKeysKept released keys: a ring (the oldest at
  // retired_next_ once full) and a set for lookup.
  std::vector<uint32_t> retired_ring_;
  size_t retired_next_ = 0;
  absl::flat_hash_set<uint32_t> retired_;
};

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_MR_KEYS_H_

// Protection domains and memory regions of a braid0 context, and the key
// table the responder checks every remote access against.
#ifndef BRAID_VERBS_COMPAT_PD_MR_H_
#define BRAID_VERBS_COMPAT_PD_MR_H_

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "verbs_compat/mr_keys.h"
#include "verbs_compat/shell.h"

namespace braid::verbs_compat {

class Context;

class Pd {
 public:
  explicit Pd(Context* ctx);
  ibv_pd* ibv() { return &shell_.ibv; }
  static Pd* From(const ibv_pd* p) { return Shell<ibv_pd, Pd>::OwnerOf(p); }
  Context* context() const { return ctx_; }
  // Objects (MRs, QPs, SRQs, AHs) still using this PD; dealloc fails while
  // non-zero, as on a real device (EBUSY).
  int users = 0;

 private:
  Shell<ibv_pd, Pd> shell_;
  Context* ctx_;
};

class Mr {
 public:
  Mr(Pd* pd, void* addr, size_t length, uint64_t iova, int access,
     uint32_t key);
  ibv_mr* ibv() { return &shell_.ibv; }
  static Mr* From(const ibv_mr* p) { return Shell<ibv_mr, Mr>::OwnerOf(p); }

  Pd* pd() const { return pd_; }
  int access() const { return access_; }
  uint32_t key() const { return key_; }

  // Host pointer for [iova, iova + len) if it lies inside the region, else
  // nullptr. len 0 is always inside (returns the start of the region when
  // iova is the region's start, else the computed address if in bounds).
  uint8_t* Translate(uint64_t iova, uint64_t len) const;

 private:
  Shell<ibv_mr, Mr> shell_;
  Pd* pd_;
  uint8_t* addr_;
  uint64_t iova_;
  uint64_t length_;
  int access_;
  uint32_t key_;
};

// Why a memory access was refused.
enum class AccessResult : uint8_t {
  kOk,
  kBadKey,
  kWrongPd,
  kNoPermission,
  kOutOfBounds
};

// lkey/rkey -> Mr for one context (lkey == rkey). Keys are random 32-bit
// values (MrKeys) looked up in a hash map, so a guessed rkey names a
// region with probability (live regions) / 2^32. Not thread-safe: the
// context lock guards it.
class MrTable {
 public:
  // `random`: the source of key bits (tests inject one).
  explicit MrTable(KeyRandom random = KernelKeyRandom)
      : keys_(std::move(random)) {}
  // A fresh key for a region about to be added (see MrKeys::Allocate).
  absl::StatusOr<uint32_t> NewKey() { return keys_.Allocate(); }
  void Add(Mr* mr) { by_key_[mr->key()] = mr; }
  // Forgets the region of `key`; the key is retired (MrKeys::Release).
  void Remove(uint32_t key) {
    by_key_.erase(key);
    keys_.Release(key);
  }
  Mr* Find(uint32_t key) const {
    auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : it->second;
  }

  // Checks a remote access (responder side): key valid, same PD, every bit
  // of `need` (IBV_ACCESS_REMOTE_*) granted, range in bounds. On kOk sets
  // *out to the host address.
  AccessResult CheckRemote(uint32_t rkey, const Pd* pd, uint64_t addr,
                           uint64_t len, int need, uint8_t** out) const;
  // Checks a local SGE: lkey valid, same PD, in bounds, and LOCAL_WRITE if
  // the SGE will be written. On kOk sets *out.
  AccessResult CheckLocal(const ibv_sge& sge, const Pd* pd, bool write,
                          uint8_t** out) const;

 private:
  MrKeys keys_;
  absl::flat_hash_map<uint32_t, Mr*> by_key_;
};

// Access flags braid0 accepts in ibv_reg_mr (others: EINVAL).
inline constexpr int kSupportedAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
    IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB |
    IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_OPTIONAL_RANGE;

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_PD_MR_H_

// The memory regions of a domain, by key: what a remote RMA may touch.
//
// Keys are 64 random bits from the kernel's CSPRNG (getrandom(2)), never
// 0 (the wire reserves key 0 for READ responses, see wire_header.h) and
// never a key in use: a peer can neither guess a key nor predict one from
// the keys it was given. A removed region's key names nothing from then
// on (a new region draws a fresh key; a repeat has probability 2^-64).
// Remote addresses are virtual addresses (FI_MR_VIRT_ADDR): a region
// answers for [base, base + len) of the registering process's memory.
//
// Not thread-safe: the domain lock guards it.
#ifndef BRAID_LIBFABRIC_MR_TABLE_H_
#define BRAID_LIBFABRIC_MR_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace braid::libfabric {

// Fills *key with random bits; false if the source failed.
using MrKeyRandom = std::function<bool(uint64_t* key)>;
// getrandom(2); one system call per registration (no hot path).
bool KernelMrKeyRandom(uint64_t* key);

// Why a remote access was refused (kOk: allowed). The values travel in
// RMA responses (wire_header.h): keep them stable.
enum class RmaStatus : uint8_t {
  kOk = 0,
  kBadKey = 1,        // no region has that key (never had, or closed)
  kOutOfBounds = 2,   // [addr, addr + len) is not inside the region
  kNoPermission = 3,  // the region (or the endpoint) does not grant it
  kRefused = 4,       // the transfer was refused part-way (the region
                      // closed while it arrived), or the request was
                      // malformed
};
inline constexpr uint8_t kRmaStatusCount = 5;
const char* RmaStatusName(RmaStatus s);

class MrTable {
 public:
  static constexpr size_t kMaxRegions = 65536;
  static constexpr int kMaxDraws = 16;

  explicit MrTable(MrKeyRandom random = KernelMrKeyRandom)
      : random_(std::move(random)) {}

  // Registers [base, base + len) with FI_* access bits `access`. Returns
  // the region's fresh key. Errors: ResourceExhausted (kMaxRegions in
  // use, or every draw collided), Unavailable (no random bits).
  absl::StatusOr<uint64_t> Add(uint8_t* base, size_t len, uint64_t access);
  // Forgets the region with `key`; later accesses get kBadKey. Ignores an
  // unknown key.
  void Remove(uint64_t key);
  // Checks a remote access of `len` bytes at virtual address `addr` that
  // needs FI_REMOTE_READ or FI_REMOTE_WRITE (`need`). kOk sets *out to the
  // first byte. Overflow-safe for any addr and len.
  RmaStatus Check(uint64_t key, uint64_t addr, uint64_t len, uint64_t need,
                  uint8_t** out) const;
  size_t size() const { return regions_.size(); }

 private:
  struct Region {
    uint8_t* base = nullptr;
    uint64_t len = 0;
    uint64_t access = 0;
  };
  MrKeyRandom random_;
  absl::flat_hash_map<uint64_t, Region> regions_;
};

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_MR_TABLE_H_

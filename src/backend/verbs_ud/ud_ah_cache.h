// Address handles of the verbs UD backend: one per (peer, entropy), each
// with its own GRH flow label, so a RoCE v2 NIC gives every path of a peer
// its own UDP source port (and ECMP hash). Made on first use, kept for a
// bounded number of peers.
#ifndef BRAID_BACKEND_VERBS_UD_UD_AH_CACHE_H_
#define BRAID_BACKEND_VERBS_UD_UD_AH_CACHE_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "backend/verbs_ud/ud_verbs_ops.h"
#include "braid/address.h"

namespace braid::backend {

struct UdAhConfig {
  uint8_t port = 1;
  uint8_t sgid_index = 0;
  uint8_t traffic_class = 0;  // DSCP << 2 | ECN
  uint32_t entropies = 1;
  uint32_t max_peers = 4096;
};

// The GRH flow label of entropy `e`: never 0 (0 means "none" to a NIC, which
// then picks the source port itself), distinct per entropy.
inline uint32_t FlowLabelOf(uint32_t e) { return (e + 1) & 0xfffff; }

class UdAhCache {
 public:
  UdAhCache(const UdAhConfig& cfg, const UdVerbsOps& ops, ibv_pd* pd)
      : cfg_(cfg), ops_(ops), pd_(pd) {}
  ~UdAhCache() { Clear(); }
  UdAhCache(const UdAhCache&) = delete;
  UdAhCache& operator=(const UdAhCache&) = delete;

  // The handle for `peer` (kIbUd) on entropy `e` (< entropies), made if
  // needed; nullptr when ibv_create_ah refuses (errno is kept in
  // last_error()). `may_flush`: no send in flight uses a handle, so at the
  // peer limit every handle may be released first.
  ibv_ah* Get(const NetAddr& peer, uint32_t e, bool may_flush);
  // Releases every handle (no send in flight may use one).
  void Clear();

  uint64_t created() const { return created_; }
  uint64_t failures() const { return failures_; }
  uint64_t flushes() const { return flushes_; }
  int last_error() const { return last_error_; }

 private:
  ibv_ah* Make(const NetAddr& peer, uint32_t e);

  UdAhConfig cfg_;
  const UdVerbsOps& ops_;
  ibv_pd* pd_;
  absl::flat_hash_map<NetAddr, std::unique_ptr<ibv_ah*[]>> map_;
  uint64_t created_ = 0, failures_ = 0, flushes_ = 0;
  int last_error_ = 0;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_VERBS_UD_UD_AH_CACHE_H_

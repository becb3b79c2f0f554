// Address handles of the verbs UD backend: one per (peer, entropy), each
// with its own GRH flow label, so a RoCE v2 NIC gives every path of a peer
// its own UDP source port (and ECMP hash). Made on first use, kept for a
// bounded number of peers; beyond it all are retired and destroyed once no
// queued send can use them (sends are numbered in posting order).
#ifndef BRAID_BACKEND_VERBS_UD_UD_AH_CACHE_H_
#define BRAID_BACKEND_VERBS_UD_UD_AH_CACHE_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

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
  // last_error()). A new peer at the peer limit first retires every handle:
  // they are destroyed by Collect once the sends numbered below `in_use`
  // (those that may still use one) have completed.
  ibv_ah* Get(const NetAddr& peer, uint32_t e, uint64_t in_use);
  // Destroys the retired handles no send numbered below `completed` uses.
  void Collect(uint64_t completed);
  // Destroys every handle, retired or not (no send may use one).
  void Clear();
  size_t retired() const { return retired_.size(); }

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
  // Retired handles and the send number below which they may be in use.
  std::vector<std::pair<uint64_t, ibv_ah*>> retired_;
  uint64_t created_ = 0, failures_ = 0, flushes_ = 0;
  int last_error_ = 0;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_VERBS_UD_UD_AH_CACHE_H_

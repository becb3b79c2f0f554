// The peer table: address → PeerEntry (a Peer and the endpoint's scheduling
// state for it), bounded. When full, the least recently active idle peer is
// evicted; busy peers are never evicted. Counters of an evicted peer are
// folded into `retired()` so endpoint totals stay monotonic.
#ifndef BRAID_ENDPOINT_PEER_TABLE_H_
#define BRAID_ENDPOINT_PEER_TABLE_H_

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "braid/address.h"
#include "braid/stats.h"
#include "endpoint/packet_guard.h"
#include "endpoint/peer.h"
#include "endpoint/wake_heap.h"

namespace braid::endpoint {

// A peer as EndpointCore holds it: the Peer (protocol state) and the core's
// scheduling state for it, which the Peer never sees.
struct PeerEntry {
  PeerEntry(const PeerConfig& cfg, const NetAddr& addr, uint64_t seed,
            uint64_t our_inc, PeerHost* host, TimeNs now)
      : peer(cfg, addr, seed, our_inc, host, now) {}

  Peer peer;
  size_t heap_pos = kNotInHeap;  // position in the core's WakeHeap
  bool tx_listed = false;        // on the core's list of peers that may send
  bool wake_dirty = false;       // its wake time is to be recomputed
  bool ack_deferred = false;     // holds an ack (EndpointCore deferral)
  // On the core's list of peers whose credit the receive queue held down
  // (Peer::TakeCreditSqueezed); cleared when the application polls.
  bool credit_squeezed = false;
  // Its packet keys (packet protection only; see PacketGuard).
  std::unique_ptr<PeerKeyCache> keys;
};

class PeerTable {
 public:
  explicit PeerTable(size_t max_peers) : max_peers_(max_peers) {}

  PeerEntry* Find(const NetAddr& addr) const {
    auto it = map_.find(addr);
    return it == map_.end() ? nullptr : it->second;
  }
  // Inserts a new peer, evicting one that has been idle for at least
  // `min_idle` if the table is full. Returns nullptr (and inserts nothing)
  // if no peer qualifies. The idle age matters for correctness: a peer that
  // still had an unacknowledged retransmission on its way to us would have
  // made its context busy again within min_idle (= peer_timeout), so what
  // the peer sends after an eviction was never seen by the evicted context.
  // `on_evict` sees the evicted peer just before it is destroyed.
  PeerEntry* Insert(
      std::unique_ptr<PeerEntry> peer, TimeNs now, DurationNs min_idle,
      absl::FunctionRef<void(PeerEntry*)> on_evict = [](PeerEntry*) {});

  size_t size() const { return peers_.size(); }
  // Stable iteration order (insertion order, with swaps on eviction).
  const std::vector<std::unique_ptr<PeerEntry>>& all() const { return peers_; }
  uint64_t created() const { return created_; }
  uint64_t evicted() const { return evicted_; }
  // Sum of the counters of evicted peers.
  const PeerStats& retired() const { return retired_; }

 private:
  size_t max_peers_;
  std::vector<std::unique_ptr<PeerEntry>> peers_;
  absl::flat_hash_map<NetAddr, PeerEntry*> map_;
  uint64_t created_ = 0;
  uint64_t evicted_ = 0;
  PeerStats retired_;
};

// Adds the counters of `s` into `acc` (not the gauges).
void AccumulatePeerCounters(const PeerStats& s, PeerStats* acc);

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_PEER_TABLE_H_

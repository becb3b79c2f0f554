// The peer table: address → PeerEntry (a Peer and the endpoint's scheduling
// state for it), bounded. When full, a peer that has proven nothing goes
// first (see Insert); a proven peer only once idle. Counters of an evicted
// peer are folded into `retired()` so endpoint totals stay monotonic.
#ifndef BRAID_ENDPOINT_PEER_TABLE_H_
#define BRAID_ENDPOINT_PEER_TABLE_H_

#include <algorithm>
#include <memory>
#include <utility>
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
  // When we last asked it to prove its address (EndpointCore::
  // ChallengeIfUnproven); kNever before.
  TimeNs challenged_at = kNever;
  // Its place on the core's ActivityList (awake peers, least recently
  // active first), and when the core last found it idle too briefly, or
  // busy, to sleep (kNever before).
  PeerEntry* act_prev = nullptr;
  PeerEntry* act_next = nullptr;
  bool act_linked = false;
  TimeNs act_checked = kNever;
  static constexpr TimeNs kNever = TimeNs(INT64_MIN);
};

// Who asks for a slot in a full table.
enum class Claimant : uint8_t {
  kInbound,  // a frame from a new address
  kSend,     // the application's Send to a new address
};

class PeerTable {
 public:
  explicit PeerTable(size_t max_peers)
      : max_peers_(max_peers), silenced_cap_(std::max<size_t>(64, max_peers)) {}

  PeerEntry* Find(const NetAddr& addr) const {
    auto it = map_.find(addr);
    return it == map_.end() ? nullptr : it->second;
  }
  // Inserts a new peer, evicting one if the table is full, in this order:
  // a peer that has proven nothing (Peer::proven), has nothing of ours to
  // send and holds partial messages; a peer idle for at least `min_idle`
  // (unproven ones first); for kSend only, any peer that has proven nothing
  // and has nothing of ours to send. Least recently active first within
  // each, among a sample of the table. Returns nullptr (and inserts
  // nothing) if no peer qualifies.
  // The idle age matters for correctness: a peer that still had an
  // unacknowledged retransmission on its way to us would have made its
  // context busy again within min_idle (= peer_timeout), so what the peer
  // sends after an eviction was never seen by the evicted context. A peer
  // evicted earlier is silenced (see Silenced) instead. `on_evict` sees the
  // evicted peer just before it is destroyed.
  PeerEntry* Insert(
      std::unique_ptr<PeerEntry> peer, TimeNs now, DurationNs min_idle,
      Claimant claimant = Claimant::kSend,
      absl::FunctionRef<void(PeerEntry*)> on_evict = [](PeerEntry*) {});
  // Evicts the least recently active (among a sample) peer that has proven
  // nothing, has nothing of ours to send and holds partial messages, to
  // free reassembly memory. Returns false if there is none.
  bool EvictForMemory(TimeNs now, DurationNs min_idle,
                      absl::FunctionRef<void(PeerEntry*)> on_evict);
  // True if frames from `addr` in incarnation `inc` are to be dropped
  // without creating a peer: it was evicted before it was idle for
  // min_idle, less than twice min_idle ago. Its sender then fails what it
  // had in flight (kPeerUnreachable) rather than resending, in a new
  // session, messages the evicted context had already delivered.
  bool Silenced(const NetAddr& addr, uint64_t inc, TimeNs now);
  // Puts an idle peer to sleep (Peer::Sleep): its halves are freed, its
  // packet keys dropped (derived again when needed). Returns whether it
  // sleeps.
  bool Sleep(PeerEntry* p);
  // Peers put to sleep, in total.
  uint64_t slept() const { return slept_; }

  size_t size() const { return peers_.size(); }
  // Stable iteration order (insertion order, with swaps on eviction).
  const std::vector<std::unique_ptr<PeerEntry>>& all() const { return peers_; }
  uint64_t created() const { return created_; }
  uint64_t evicted() const {
    return evicted_idle_ + evicted_unproven_ + evicted_memory_;
  }
  uint64_t evicted_idle() const { return evicted_idle_; }
  uint64_t evicted_unproven() const { return evicted_unproven_; }
  uint64_t evicted_memory() const { return evicted_memory_; }
  // Sum of the counters of evicted peers.
  const PeerStats& retired() const { return retired_; }

 private:
  // Eviction classes, best first; kNone: not evictable.
  enum Rank : int {
    kUnprovenHolder = 0,
    kIdleUnproven = 1,
    kIdleProven = 2,
    kUnproven = 3,
    kNone = 4,
  };
  Rank RankOf(const Peer& p, TimeNs now, DurationNs min_idle) const;
  // The index of the best-ranked peer no worse than `worst` (sampled from a
  // rotating cursor), or size() if none.
  size_t PickVictim(TimeNs now, DurationNs min_idle, Rank worst);
  // Evicts peers_[i]; silences it if it was not idle for min_idle.
  void Evict(size_t i, TimeNs now, DurationNs min_idle,
             absl::FunctionRef<void(PeerEntry*)> on_evict);

  struct Silence {
    uint64_t inc = 0;
    TimeNs until;
    uint64_t seq = 0;
  };

  size_t max_peers_;
  std::vector<std::unique_ptr<PeerEntry>> peers_;
  absl::flat_hash_map<NetAddr, PeerEntry*> map_;
  size_t cursor_ = 0;
  // Silenced addresses, bounded: the ring holds the newest (address, seq).
  absl::flat_hash_map<NetAddr, Silence> silenced_;
  // Grows as addresses are silenced, up to silenced_cap_ (then reused).
  std::vector<std::pair<NetAddr, uint64_t>> silenced_ring_;
  size_t silenced_cap_;
  uint64_t silence_seq_ = 0;
  uint64_t created_ = 0;
  uint64_t evicted_idle_ = 0;
  uint64_t evicted_unproven_ = 0;
  uint64_t evicted_memory_ = 0;
  uint64_t slept_ = 0;
  PeerStats retired_;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_PEER_TABLE_H_

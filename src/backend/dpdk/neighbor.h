// Next-hop MAC addresses for the DPDK backend: a bounded table of static and
// learnt neighbours, what braid does with each ARP / Neighbor Discovery
// frame it receives (learn, answer), and the on-link decision. Pure byte
// code, no DPDK; the frames themselves are in neighbor_packets.h.
//
// Learning follows Linux: a neighbour is learnt from a reply or
// advertisement only if braid asked for it recently (ShouldRequest), or
// from a request or solicitation that targets braid's own address (the
// asker will be talked to next). Gratuitous replies nobody asked for are
// counted and ignored.
#ifndef BRAID_BACKEND_DPDK_NEIGHBOR_H_
#define BRAID_BACKEND_DPDK_NEIGHBOR_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "backend/dpdk/frame.h"
#include "backend/dpdk/neighbor_packets.h"
#include "braid/address.h"
#include "braid/time.h"

namespace braid::backend::dpdk {

// What HandleNeighborFrame saw; a counter each in NeighborCounters.
struct NeighborCounters {
  uint64_t replies_sent = 0;         // ARP replies / neighbour adverts written
  uint64_t learnt = 0;               // entries created or refreshed
  uint64_t unsolicited_ignored = 0;  // replies/adverts nobody asked for
  uint64_t not_for_us = 0;           // requests for other addresses, ...
  uint64_t malformed = 0;            // failed ParseArp / ParseNd
  uint64_t evicted = 0;              // learnt entries dropped for room
  uint64_t requests_allowed = 0;     // ShouldRequest said yes
  uint64_t requests_limited = 0;     // ShouldRequest said no (rate limit)
};

class NeighborTable {
 public:
  static constexpr size_t kDefaultCapacity = 4096;
  // At most one request per target per kRequestInterval.
  static constexpr DurationNs kRequestInterval = DurationNs::Millis(100);
  // A reply counts as asked for this long after our last request.
  static constexpr DurationNs kReplyWindow = DurationNs::Seconds(3);
  // A learnt entry older than this is stale: still used, but worth a
  // fresh request (as Linux's reachable time).
  static constexpr DurationNs kReachableTime = DurationNs::Seconds(30);

  // Holds up to `capacity` entries (static + learnt) and as many
  // outstanding requests; allocates both up front.
  explicit NeighborTable(size_t capacity = kDefaultCapacity);

  // Pins ip -> mac: never evicted, never changed by learning. Replaces a
  // learnt entry for ip. False (nothing stored) if ip is not IPv4/IPv6 or
  // the table is full of static entries.
  bool AddStatic(const NetAddr& ip, const MacAddr& mac);

  // The MAC for ip (its port is ignored), static or learnt.
  std::optional<MacAddr> Lookup(const NetAddr& ip) const;

  // True when a request for ip should be sent now: none was allowed in
  // the last kRequestInterval. Records `now` as the request time (so a
  // reply within kReplyWindow is learnt). False also when the table of
  // outstanding requests is full of recent ones.
  bool ShouldRequest(const NetAddr& ip, TimeNs now);

  // True if ip has a learnt entry last confirmed more than kReachableTime
  // before `now` (send a request; keep using the entry meanwhile).
  bool IsStale(const NetAddr& ip, TimeNs now) const;

  // True if a request for ip was allowed within kReplyWindow before now.
  bool Requested(const NetAddr& ip, TimeNs now) const;

  // Creates or refreshes the learnt entry ip -> mac (static entries stay
  // unchanged; group MACs are refused). When full, evicts the oldest learnt
  // entry. Returns true if the table now maps ip to mac.
  bool Learn(const NetAddr& ip, const MacAddr& mac, TimeNs now);

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  const NeighborCounters& counters() const { return counters_; }
  NeighborCounters* mutable_counters() { return &counters_; }

 private:
  struct Entry {
    MacAddr mac{};
    bool is_static = false;
    uint64_t seq = 0;  // insertion number of a learnt entry
    TimeNs confirmed;
  };
  // ip with the port cleared (and IPv4's unused bytes zeroed).
  static NetAddr Key(const NetAddr& ip);
  bool EvictOldestLearnt();
  void ForgetOldRequests(TimeNs now);

  size_t capacity_;
  absl::flat_hash_map<NetAddr, Entry> entries_;
  // Learnt entries in insertion order; records whose entry was replaced
  // (seq differs) are skipped when popped.
  std::deque<std::pair<NetAddr, uint64_t>> learnt_order_;
  uint64_t next_seq_ = 1;
  absl::flat_hash_map<NetAddr, TimeNs> requests_;
  NeighborCounters counters_;
};

enum class NeighborAction : uint8_t {
  kNone,       // valid, nothing to do: a request for another address, ...
  kLearnt,     // a reply to our request: the table learnt the sender
  kReply,      // a request for our address: asker learnt, reply written
  kIgnored,    // a reply or advertisement nobody asked for: not learnt
  kMalformed,  // not a valid ARP / NS / NA frame
};
// snake_case name, for logs and counters.
const char* NeighborActionName(NeighborAction a);

// Handles one frame ClassifyFrame called kArp or kNeighborDiscovery: learns
// into *table as described at the top, and for an ARP request or neighbour
// solicitation for me.addr's IP writes the reply into `reply_out`
// (*reply_len bytes, 0 when there is nothing to send; reply_out should hold
// kMaxNeighborFrameLen, else the reply is not written and the result is
// kNone). Frames of the other IP family than me.addr are kNone. Counts into
// table->counters(). Never reads outside `frame`.
NeighborAction HandleNeighborFrame(absl::Span<const uint8_t> frame,
                                   const LocalIdentity& me, TimeNs now,
                                   NeighborTable* table,
                                   absl::Span<uint8_t> reply_out,
                                   size_t* reply_len);

// The address whose MAC a frame to `dst` goes to: dst itself when it is in
// local's subnet (its first prefix_len bits equal local's) or when
// `gateway` is invalid (everything on-link), else the gateway. prefix_len
// is clamped to the family's width; a dst of another family than local
// goes to the gateway when it has dst's family, else is taken as on-link.
NetAddr NextHop(const NetAddr& dst, const NetAddr& local, uint32_t prefix_len,
                const NetAddr& gateway);

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_NEIGHBOR_H_

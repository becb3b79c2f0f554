// One direction of a point-to-point link: a finite tail-drop FIFO in front of
// a serialiser of fixed rate, then a propagation delay. Applies an
// Impairment to each packet. Costs one simulator event per packet; the
// packets in flight wait in the link's own FIFO (they arrive in the order
// they were sent), and only the earliest is in the simulator's heap.
#ifndef BRAID_SIM_LINK_H_
#define BRAID_SIM_LINK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/rng.h"
#include "braid/time.h"
#include "sim/impairment.h"
#include "sim/packet.h"

namespace braid::sim {

class Simulator;

// Where a link delivers packets: fn(obj, packet), ownership passes along.
struct PacketSink {
  void (*fn)(void* obj, Packet* p) = nullptr;
  void* obj = nullptr;
};

struct LinkOptions {
  // Serialisation rate in bits per second; 0 means infinitely fast (no
  // serialisation delay, the queue never fills). Default 100 Gbit/s.
  uint64_t rate_bps = 100'000'000'000ULL;
  // Propagation delay (plus any fixed switching latency). Default 1 us.
  DurationNs delay = DurationNs::Micros(1);
  // Queue capacity in bytes (wire bytes, including the packet being
  // serialised). A packet that does not fit is tail-dropped. Default 512 KiB.
  uint32_t queue_bytes = 512 * 1024;
  // Header bytes added to the payload on the wire: Ethernet 14 + IPv4 20 +
  // UDP 8 (preamble, FCS and gap are not modelled). Default 42.
  uint32_t frame_overhead_bytes = 42;
};

struct LinkCounters {
  uint64_t offered_packets = 0;  // handed to Send()
  uint64_t tx_packets = 0;       // accepted into the queue (incl. duplicates)
  uint64_t tx_bytes = 0;         // wire bytes of tx_packets
  uint64_t delivered_packets = 0;
  uint64_t drops_queue_full = 0;
  uint64_t drops_random_loss = 0;
  uint64_t drops_burst_loss = 0;
  uint64_t drops_blackhole = 0;
  // Frames an earlier link corrupted (their checksum no longer matches),
  // discarded here as the switch in between would on its frame check.
  uint64_t drops_bad_frame = 0;
  uint64_t duplicated = 0;
  uint64_t reordered = 0;  // held back by Impairment::reorder
  uint64_t corrupted = 0;
  uint64_t ecn_marked = 0;
  uint64_t max_queue_bytes = 0;

  uint64_t drops() const {
    return drops_queue_full + drops_random_loss + drops_burst_loss +
           drops_blackhole + drops_bad_frame;
  }
};

class Link {
 public:
  // `seed` feeds this link's own impairment RNG stream.
  Link(Simulator* sim, const LinkOptions& options, std::string name,
       uint64_t seed);
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Sets where packets go after the propagation delay. Must be set before
  // the first Send().
  void Connect(PacketSink sink) { sink_ = sink; }

  // Takes ownership of `p` at now(): drops it (returning it to the pool) or
  // queues it for delivery. Never blocks.
  void Send(Packet* p);

  // Replaces the impairment; affects packets sent from now on.
  void SetImpairment(const Impairment& impairment);
  const Impairment& impairment() const { return impairment_; }

  // Changes rate/delay/queue/overhead for packets sent from now on.
  void SetOptions(const LinkOptions& options);
  const LinkOptions& options() const { return options_; }

  // Wire bytes queued at now() (accepted, not yet fully serialised).
  uint32_t QueueBytes();
  // Serialisation time of a payload of `payload_len` bytes at the current rate.
  DurationNs SerializationTime(uint32_t payload_len) const;

  // Observes every packet as it is delivered (after the propagation delay),
  // e.g. to trace or to assert on paths. Pass null to remove. The tap must
  // not keep the reference.
  using TapFn = void (*)(void* ctx, const Link& link, const Packet& p);
  void SetTap(TapFn fn, void* ctx) {
    tap_fn_ = fn;
    tap_ctx_ = ctx;
  }

  const LinkCounters& counters() const { return counters_; }
  const std::string& name() const { return name_; }

 private:
  struct InFlight {
    int64_t finish_ps;  // when its last bit leaves the serialiser
    uint32_t bytes;
  };
  // A packet in flight, in the FIFO of those that keep their order.
  struct Arrival {
    int64_t at_ns;  // delivery event time
    uint64_t rank;  // Simulator::ReserveRank at send
    Packet* packet;
  };
  // Ring slots held inside the object; a ring that outgrows them moves to
  // the heap (power-of-two sizes, doubling, never shrinking).
  static constexpr size_t kInlineSlots = 8;

  static void Deliver(void* self, uint64_t packet);      // a held packet
  static void DeliverHead(void* self, uint64_t unused);  // the FIFO's head
  void Hand(Packet* p);  // to the tap and the sink
  void Drain(int64_t now_ps);
  bool Enqueue(Packet* p);  // false if tail-dropped (p freed)
  // Applies the impairment's random draws to `p`; false if it dropped `p`
  // (freed). Sets `*dup` to a copy to queue behind `p`, if any.
  bool Impair(Packet* p, Packet** dup);
  void GrowRing();
  void GrowFlight();
  // Recomputes the per-packet copies of options_ and impairment_.
  void CacheParameters();

  // Per-packet state first, in the object's first cache lines (a large
  // fabric runs with its links mostly out of cache: each packet should
  // touch as few lines per link as possible).
  Simulator* sim_;
  PacketSink sink_;
  TapFn tap_fn_ = nullptr;
  void* tap_ctx_ = nullptr;
  uint64_t ps_per_byte_ = 0;     // exact serialisation ps per byte, or 0
  int64_t busy_until_ps_ = 0;    // serialiser free from this time on
  int64_t last_arrival_ps_ = 0;  // keeps delivery FIFO
  uint64_t queue_bytes_ = 0;
  int64_t delay_ps_ = 0;  // options_.delay + impairment_.extra_delay
  uint32_t frame_overhead_bytes_ = 0;
  uint32_t queue_limit_bytes_ = 0;
  uint32_t ecn_threshold_bytes_ = 0;
  // True when impairment_ draws nothing per packet (no loss, burst loss,
  // corruption, duplication, reordering or blackhole).
  bool plain_ = true;
  bool ge_bad_ = false;
  // Ring of packets in the queue, in order.
  InFlight* ring_;
  size_t ring_mask_ = kInlineSlots - 1;
  size_t ring_head_ = 0;
  size_t ring_size_ = 0;
  // Packets in flight that keep their order.
  Arrival* flight_;
  size_t flight_mask_ = kInlineSlots - 1;
  size_t flight_head_ = 0;
  size_t flight_size_ = 0;
  LinkCounters counters_;
  InFlight ring_inline_[kInlineSlots];
  Arrival flight_inline_[kInlineSlots];

  // Configuration and rarely used state.
  LinkOptions options_;
  Impairment impairment_;
  Rng rng_;
  std::string name_;
  std::unique_ptr<InFlight[]> ring_heap_;
  std::unique_ptr<Arrival[]> flight_heap_;
};

}  // namespace braid::sim

#endif  // BRAID_SIM_LINK_H_

// A simulated host NIC with one IPv4 address and one braid UDP port. Sends
// into its uplink (whose queue models the NIC transmit queue: tail drop when
// full); receives into a bounded rx ring after checking the destination and
// the payload checksum, and pokes the driver through an rx hook.
#ifndef BRAID_SIM_HOST_H_
#define BRAID_SIM_HOST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "braid/address.h"
#include "sim/link.h"
#include "sim/packet.h"

namespace braid::sim {

class Simulator;

struct HostOptions {
  // Rx ring capacity in packets; arrivals beyond it are dropped and counted.
  uint32_t rx_ring_packets = 4096;
  // Verify the payload checksum on receive (drop and count on mismatch).
  bool verify_checksum = true;
  // Skip the checksum work for packets nothing has modified: the sender does
  // not stamp; a corrupting link stamps the original checksum before it
  // flips a bit; the receiver verifies only stamped packets. Same outcome as
  // the full model for everything the simulator does, at no per-byte cost
  // for clean packets. Default false (stamp at send, verify every packet).
  bool lazy_checksum = false;
};

struct HostCounters {
  uint64_t tx_packets = 0;  // handed to the uplink (it may still drop them)
  uint64_t tx_bytes = 0;    // payload bytes
  uint64_t rx_packets = 0;  // placed in the rx ring
  uint64_t rx_bytes = 0;
  uint64_t rx_checksum_drops = 0;
  uint64_t rx_ring_drops = 0;
  uint64_t rx_wrong_address_drops = 0;  // not our IP or not our UDP port
  uint64_t rx_hook_calls = 0;
};

class Host {
 public:
  // `address` is the host's IPv4 address and braid (receive) UDP port.
  Host(Simulator* sim, const NetAddr& address, const HostOptions& options,
       std::string name);
  ~Host();  // returns packets still in the rx ring to the pool
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // Sets the link the host transmits into (not owned).
  void SetUplink(Link* uplink) { uplink_ = uplink; }
  Link* uplink() const { return uplink_; }

  // The sink the host's downlink connects to.
  PacketSink sink() { return PacketSink{&Host::ReceiveThunk, this}; }

  // Transmits `p` at now(), taking ownership: assigns an id, stamps
  // sent_at and the checksum, and hands it to the uplink. The caller fills
  // src (normally address() with a chosen source port), dst, ect and the
  // payload.
  void Send(Packet* p);

  // Accepts a packet from the network (called by the downlink).
  void Receive(Packet* p);

  // Removes the oldest received packet; the caller owns it and must return
  // it to sim->pool(). Returns null when the ring is empty.
  Packet* PopRx();
  size_t rx_pending() const { return rx_count_; }

  // Called (from a simulator event at the arrival time, after all arrivals
  // already scheduled for that instant) when packets have arrived since the
  // last call. The hook may drain the ring, send, and schedule timers.
  void SetRxHook(void (*fn)(void* ctx), void* ctx) {
    hook_fn_ = fn;
    hook_ctx_ = ctx;
  }

  const NetAddr& address() const { return address_; }
  Simulator* sim() const { return sim_; }
  const HostCounters& counters() const { return counters_; }
  const std::string& name() const { return name_; }

 private:
  static void ReceiveThunk(void* self, Packet* p) {
    static_cast<Host*>(self)->Receive(p);
  }
  static void RunHook(void* self, uint64_t unused);

  Simulator* sim_;
  NetAddr address_;
  HostOptions options_;
  std::string name_;
  Link* uplink_ = nullptr;
  std::vector<Packet*> ring_;
  size_t rx_head_ = 0;
  size_t rx_count_ = 0;
  void (*hook_fn_)(void*) = nullptr;
  void* hook_ctx_ = nullptr;
  bool hook_pending_ = false;
  HostCounters counters_;
};

}  // namespace braid::sim

#endif  // BRAID_SIM_HOST_H_

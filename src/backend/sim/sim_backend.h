// The simulator backend: binds braid's burst interface to a simulated Host.
// Entropy e leaves from UDP source port 49152 + e, so the fabric's ECMP hash
// maps different entropies to (usually) different paths.
#ifndef BRAID_BACKEND_SIM_SIM_BACKEND_H_
#define BRAID_BACKEND_SIM_SIM_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "backend/backend.h"
#include "braid/address.h"
#include "sim/host.h"
#include "sim/packet.h"

namespace braid::backend {

struct SimBackendOptions {
  // Entropy values realised; source ports are 49152 .. 49152+count-1, so at
  // most 16384 (the IANA dynamic port range). Default 16384.
  uint32_t entropy_count = 16384;
  // Largest datagram (UDP payload). Default 4096; must fit the simulator's
  // packet buffers.
  uint32_t mtu_payload = 4096;
  // If true, TxBurst stops (returns a short count) when the host uplink
  // queue cannot take the next packet, instead of letting the link tail-drop
  // it. Default false: packets are offered and dropped (counted by the link).
  bool backpressure = false;
  // If false, of a datagram's tail (TxPacket::tail: the payload the core
  // left in the message's buffer) only the first kCarriedTailBytes are
  // copied; the rest of the packet's payload is whatever its pool buffer
  // held before. The packet keeps its full length, so links queue and
  // serialise it as before. For scale runs that check message identity
  // and length but not content. Default true: every byte is carried.
  bool carry_tail_bytes = true;
};

class SimBackend : public Backend {
 public:
  static constexpr uint16_t kFirstSourcePort = 49152;
  // Bytes of each tail carried when !SimBackendOptions::carry_tail_bytes.
  static constexpr uint32_t kCarriedTailBytes = 16;

  // Binds to `host` (not owned; must outlive the backend). Options out of
  // range are clamped: entropy_count to 1..16384, mtu_payload to the pool's
  // buffer size.
  explicit SimBackend(sim::Host* host, SimBackendOptions options = {});
  ~SimBackend() override;  // returns held rx packets to the pool

  uint32_t EntropyCount() const override { return options_.entropy_count; }
  NetAddr LocalAddress() const override { return host_->address(); }
  uint32_t MaxDatagram() const override { return options_.mtu_payload; }

  // Copies each datagram (see carry_tail_bytes) into a pooled simulator
  // packet and injects it at
  // the simulator's now(). Packets with a non-IPv4 destination, an entropy
  // out of range or an oversize length are taken, dropped and counted in
  // tx_dropped.
  size_t TxBurst(absl::Span<const TxPacket> pkts) override;

  // Hands out packets from the host's rx ring; their buffers stay valid
  // until the next RxBurst (or destruction).
  size_t RxBurst(absl::Span<RxPacket> out) override;

  // rx_dropped includes the host NIC's drops (checksum, ring full, wrong
  // address); tx_dropped includes tail drops on the host uplink queue.
  BackendCounters counters() const override;

  sim::Host* host() const { return host_; }

 private:
  void ReleaseHeld();

  sim::Host* host_;
  SimBackendOptions options_;
  std::vector<sim::Packet*> held_;
  BackendCounters counters_;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_SIM_SIM_BACKEND_H_

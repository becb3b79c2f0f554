// The DPDK backend: braid's datagrams as raw Ethernet + IP + UDP frames on a
// DPDK port, byte-for-byte what the kernel-UDP backend's sockets put on the
// wire, so the two interoperate. Setup lives in eal.h and dpdk_port.h; this
// class is the datapath: transmit (dpdk_tx.cc), receive and ARP/ND
// (dpdk_rx.cc). Single-threaded like every backend: one endpoint, one
// queue pair, busy-polled (WaitFd is -1).
#ifndef BRAID_BACKEND_DPDK_DPDK_BACKEND_H_
#define BRAID_BACKEND_DPDK_DPDK_BACKEND_H_

#include <array>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "backend/backend.h"
#include "backend/dpdk/dpdk_options.h"
#include "backend/dpdk/dpdk_port.h"
#include "backend/dpdk/ext_slots.h"
#include "backend/dpdk/frame.h"
#include "backend/dpdk/neighbor.h"

struct rte_mbuf;

namespace braid::backend::dpdk {

class DpdkBackend final : public Backend {
 public:
  // Most frames one TxBurst / RxBurst call moves.
  static constexpr size_t kBurst = 64;

  // Initialises the EAL if this is the process's first DPDK endpoint, then
  // opens the port (DpdkPort::Open). Errors: those of EnsureEal and
  // DpdkPort::Open, and InvalidArgument when bind's family is not IPv4 or
  // IPv6.
  static absl::StatusOr<std::unique_ptr<DpdkBackend>> Open(
      const DpdkOptions& o);
  ~DpdkBackend() override;

  uint32_t EntropyCount() const override { return o_.num_entropies; }
  NetAddr LocalAddress() const override { return o_.bind; }
  uint32_t MaxDatagram() const override { return max_datagram_; }
  // Frames each packet and hands the burst to the port. A packet whose next
  // hop's MAC is not known yet is taken and dropped (counted as
  // tx_no_neighbor; the protocol retransmits it) after asking for the MAC.
  // Returns fewer than offered when the port's ring or the mbuf pool is full.
  size_t TxBurst(absl::Span<const TxPacket> pkts) override;
  // Receives, validates and hands over UDP payloads in place (valid until
  // the next RxBurst); answers ARP/ND for this endpoint's IP; drops and
  // counts everything else by reason.
  size_t RxBurst(absl::Span<RxPacket> out) override;
  BackendCounters counters() const override { return counters_; }
  // Zero-copy transmit: a packet's tail (at least kMinReferencedTail bytes)
  // is attached to its frame by reference when the port allows it
  // (PortCaps::tx_by_reference); the rest is copied.
  bool KeepsTails() const override { return port_->caps().tx_by_reference; }
  // Reclaims the mbufs the port has transmitted (rte_eth_tx_done_cleanup).
  void ReleaseTails() override;
  uint32_t MinUncopiedTail() const override {
    return KeepsTails() ? kMinReferencedTail : 0;
  }

  // Tails shorter than this are copied: attaching costs about as much.
  static constexpr uint32_t kMinReferencedTail = 512;

  const DpdkPort& port() const { return *port_; }
  const MacAddr& mac() const { return me_.mac; }

 private:
  DpdkBackend(const DpdkOptions& o, std::unique_ptr<DpdkPort> port);

  // The MAC frames to `dst` go to, or null if it is not known yet (then a
  // request for it has been sent, at most one per target per interval).
  const MacAddr* NextHopMac(const NetAddr& dst);
  // Sends one control frame (ARP/ND) of `len` bytes, copied.
  void SendControl(const uint8_t* frame, size_t len);
  // Writes packet `p` into the fresh mbuf `m`: headers and p.data, then
  // its tail copied, or attached by reference in `ext` (an mbuf of the
  // port's ext_pool) when `ext` is not null.
  void BuildFrame(const TxPacket& p, const MacAddr& dst_mac, rte_mbuf* m,
                  rte_mbuf* ext);
  // An ext_pool mbuf carrying p's tail by reference, or null (then the
  // tail is copied).
  rte_mbuf* AttachTail(const TxPacket& p);
  // Classifies one received frame; returns true if it is a UDP datagram for
  // us (then *pkt is filled and `m` must be kept until the next RxBurst).
  bool Receive(rte_mbuf* m, RxPacket* pkt);
  void CountDrop(RxDrop why);
  void CountNeighbor(NeighborAction a);

  DpdkOptions o_;
  std::unique_ptr<DpdkPort> port_;
  LocalIdentity me_;
  uint32_t max_datagram_ = 0;
  uint16_t port_id_ = 0;
  NeighborTable neighbors_;
  // The last next hop resolved, so a burst to one peer looks up once.
  NetAddr cached_hop_;
  MacAddr cached_mac_{};
  bool cached_valid_ = false;
  // Receive mbufs whose payloads the last RxBurst handed out.
  std::array<rte_mbuf*, kBurst> rx_held_{};
  uint16_t rx_held_n_ = 0;
  // Chained receive frames are copied here (one slot per burst entry).
  std::vector<uint8_t> rx_flat_;
  uint32_t max_frame_ = 0;
  // Transmit tails attached by reference, until the port frees them.
  ExtSlots ext_slots_;
  BackendCounters counters_;
};

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_DPDK_BACKEND_H_

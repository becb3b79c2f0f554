// One DPDK ethdev port set up for one endpoint: found (or hot-plugged) by
// name, one receive and one transmit queue, its own mbuf pool, started.
// The setup half of the DPDK backend; the datapath (dpdk_backend) only
// bursts on it.
#ifndef BRAID_BACKEND_DPDK_DPDK_PORT_H_
#define BRAID_BACKEND_DPDK_DPDK_PORT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backend/dpdk/frame.h"

struct rte_mempool;

namespace braid::backend::dpdk {

struct PortConfig {
  // DpdkBackendOptions::port: a port name, full vdev arguments to hot-plug,
  // or "" for the only port.
  std::string name;
  uint16_t rx_ring = 1024;
  uint16_t tx_ring = 1024;
  uint32_t mbufs = 8191;
  // Largest IP packet (the endpoint's MTU); frames add the Ethernet header.
  uint32_t mtu = 1500;
  // Ask for IPv4 header / UDP checksum offloads where the port has them.
  bool checksum_offload = true;
};

// What the port can do, as set up.
struct PortCaps {
  bool tx_multi_seg = false;   // chained mbufs on transmit
  bool tx_ipv4_cksum = false;  // NIC fills the IPv4 header checksum
  bool tx_udp_cksum = false;   // NIC fills the UDP checksum
  bool rx_cksum = false;       // NIC reports IP/UDP checksum state
  // Frames may carry a segment attached by reference (an external buffer
  // in the sender's memory): the port chains segments, and its driver is
  // one known to copy each frame out (with the CPU) and free it inside
  // rte_eth_tx_burst (memif, af_packet, tap, vhost, null). So
  // memory DPDK has not mapped for DMA is fine, and a send's bytes are
  // free again when the burst returns. Not for a PCI NIC (the buffers would
  // need registering for DMA: rte_extmem_register) nor for net_ring, whose
  // peer port keeps the very mbufs for as long as it likes: they copy.
  bool tx_by_reference = false;
};

class DpdkPort {
 public:
  // Finds the port, configures one queue pair, creates the mbuf pool and
  // starts the port. The EAL must be initialised (EnsureEal). Errors:
  // NotFound (no such port, or none / several when `name` is ""),
  // AlreadyExists (another endpoint in this process uses the port),
  // InvalidArgument (the port cannot carry the MTU), Unavailable naming the
  // DPDK call that failed.
  static absl::StatusOr<std::unique_ptr<DpdkPort>> Open(const PortConfig& c);
  // Stops the port, frees the pool and removes a hot-plugged device.
  ~DpdkPort();

  DpdkPort(const DpdkPort&) = delete;
  DpdkPort& operator=(const DpdkPort&) = delete;

  uint16_t id() const { return id_; }
  const std::string& name() const { return name_; }
  rte_mempool* pool() const { return pool_; }
  // Data-less mbufs that carry an attached external buffer (zero-copy
  // transmit); null when !caps().tx_by_reference.
  rte_mempool* ext_pool() const { return ext_pool_; }
  const MacAddr& mac() const { return mac_; }
  const PortCaps& caps() const { return caps_; }

 private:
  DpdkPort() = default;
  absl::Status Configure(const PortConfig& c);

  uint16_t id_ = 0;
  std::string name_;
  bool owns_ = false;  // in the registry's owned set
  bool hotplugged_ = false;
  bool started_ = false;
  rte_mempool* pool_ = nullptr;
  rte_mempool* ext_pool_ = nullptr;
  MacAddr mac_{};
  PortCaps caps_;
};

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_DPDK_PORT_H_

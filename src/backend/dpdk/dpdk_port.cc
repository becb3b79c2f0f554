#include "backend/dpdk/dpdk_port.h"

#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace braid::backend::dpdk {
namespace {

// Ports owned by an endpoint of this process, and the mbuf pools of ports
// that were stopped but not closed (a port named by the EAL arguments stays
// in DPDK, and its stopped queues may still reference its pool, so the pool
// is kept for the next endpoint that opens the port).
struct Registry {
  std::recursive_mutex mu;  // a failed Open destroys its port under it
  std::set<uint16_t> owned;
  std::map<uint16_t, std::pair<rte_mempool*, rte_mempool*>> kept_pools;
};

Registry& Reg() {
  static Registry* r = new Registry;  // DPDK state outlives main
  return *r;
}

absl::Status DpdkError(absl::string_view call, const std::string& port,
                       int err) {
  return absl::UnavailableError(absl::StrCat("DPDK port ", port, ": ", call,
                                             " failed: ", rte_strerror(err)));
}

std::vector<std::string> PortNames() {
  std::vector<std::string> names;
  uint16_t p;
  RTE_ETH_FOREACH_DEV(p) {
    char n[RTE_ETH_NAME_MAX_LEN];
    if (rte_eth_dev_get_name_by_port(p, n) == 0) names.emplace_back(n);
  }
  return names;
}

// The one port there is, for an empty name.
absl::StatusOr<uint16_t> OnlyPort() {
  std::vector<std::string> names = PortNames();
  if (names.size() != 1) {
    return absl::NotFoundError(
        absl::StrCat("DPDK: no port named and ", names.size(), " ports exist (",
                     absl::StrJoin(names, ", "),
                     "); set DpdkBackendOptions.port (e.g. a --vdev name)"));
  }
  uint16_t id = 0;
  rte_eth_dev_get_port_by_name(names[0].c_str(), &id);
  return id;
}

// Finds the port `spec` names; hot-plugs it when `spec` is a vdev ("net_"
// name, with or without arguments) that does not exist yet.
absl::StatusOr<uint16_t> FindPort(const std::string& spec, std::string* name,
                                  bool* hotplugged) {
  *hotplugged = false;
  if (spec.empty()) {
    absl::StatusOr<uint16_t> id = OnlyPort();
    if (id.ok()) {
      char n[RTE_ETH_NAME_MAX_LEN];
      rte_eth_dev_get_name_by_port(*id, n);
      *name = n;
    }
    return id;
  }
  *name = spec.substr(0, spec.find(','));
  uint16_t id = 0;
  if (rte_eth_dev_get_port_by_name(name->c_str(), &id) == 0) return id;
  if (name->rfind("net_", 0) != 0) {
    return absl::NotFoundError(absl::StrCat(
        "DPDK: no port \"", *name,
        "\" (ports: ", absl::StrJoin(PortNames(), ", "),
        "); a PCI device must be bound to a DPDK driver and allowed by the "
        "EAL arguments"));
  }
  if (int r = rte_dev_probe(spec.c_str()); r < 0) {
    return absl::NotFoundError(
        absl::StrCat("DPDK: cannot create device \"", spec,
                     "\": rte_dev_probe: ", rte_strerror(-r)));
  }
  if (rte_eth_dev_get_port_by_name(name->c_str(), &id) != 0) {
    return absl::NotFoundError(absl::StrCat("DPDK: device \"", spec,
                                            "\" was created but has no port \"",
                                            *name, "\""));
  }
  *hotplugged = true;
  return id;
}

// True for the virtual devices whose transmit copies each frame out with the
// CPU and frees it before rte_eth_tx_burst returns (PortCaps::
// tx_by_reference).
bool CopiesOnTransmit(const rte_eth_dev_info& info) {
  if (info.device == nullptr || info.driver_name == nullptr) return false;
  if (std::string(rte_bus_name(rte_dev_bus(info.device))) != "vdev") {
    return false;
  }
  const std::string driver = info.driver_name;
  // Not net_af_xdp: when its UMEM is the mbuf pool (the default) it sends
  // mbufs by reference and frees them on completion.
  for (const char* d :
       {"net_memif", "net_af_packet", "net_tap", "net_vhost", "net_null"}) {
    if (driver == d) return true;
  }
  return false;
}

rte_mempool* MakePool(uint16_t port, uint32_t mbufs, uint32_t frame) {
  static std::atomic<uint32_t> seq{0};
  const std::string name = absl::StrCat("braid_p", port, "_", seq++);
  // frame 0: mbufs without data, for attached external buffers.
  const uint32_t room =
      frame == 0 ? 0 : RTE_PKTMBUF_HEADROOM + std::max<uint32_t>(frame, 2048);
  return rte_pktmbuf_pool_create(name.c_str(), mbufs, 256, 0,
                                 static_cast<uint16_t>(room),
                                 rte_eth_dev_socket_id(port));
}

}  // namespace

absl::StatusOr<std::unique_ptr<DpdkPort>> DpdkPort::Open(const PortConfig& c) {
  std::unique_ptr<DpdkPort> p(new DpdkPort);
  Registry& reg = Reg();
  std::lock_guard<std::recursive_mutex> lock(reg.mu);
  absl::StatusOr<uint16_t> id = FindPort(c.name, &p->name_, &p->hotplugged_);
  if (!id.ok()) return id.status();
  if (reg.owned.count(*id) != 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("DPDK port ", p->name_,
                     " is already used by another endpoint of this process"));
  }
  p->id_ = *id;
  // On failure the destructor undoes what was done.
  if (absl::Status s = p->Configure(c); !s.ok()) return s;
  reg.owned.insert(p->id_);
  p->owns_ = true;
  return p;
}

absl::Status DpdkPort::Configure(const PortConfig& c) {
  rte_eth_dev_info info;
  if (int r = rte_eth_dev_info_get(id_, &info); r != 0) {
    return DpdkError("rte_eth_dev_info_get", name_, -r);
  }
  const uint32_t frame = c.mtu + RTE_ETHER_HDR_LEN;
  if (info.max_rx_pktlen < frame || info.max_mtu < c.mtu) {
    return absl::InvalidArgumentError(
        absl::StrCat("DPDK port ", name_, " carries frames up to ",
                     info.max_rx_pktlen, " bytes (MTU ", info.max_mtu,
                     "); EndpointOptions.mtu ", c.mtu, " needs ", frame));
  }
  rte_eth_conf conf{};
  conf.rxmode.mtu = c.mtu;
  const uint64_t tx = info.tx_offload_capa;
  if (tx & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    caps_.tx_multi_seg = true;
  }
  if (c.checksum_offload && (tx & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM)) {
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
    caps_.tx_ipv4_cksum = true;
  }
  if (c.checksum_offload && (tx & RTE_ETH_TX_OFFLOAD_UDP_CKSUM)) {
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
    caps_.tx_udp_cksum = true;
  }
  const uint64_t rx_ck =
      RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
  if (c.checksum_offload && (info.rx_offload_capa & rx_ck) == rx_ck) {
    conf.rxmode.offloads |= rx_ck;
    caps_.rx_cksum = true;
  }
  if (int r = rte_eth_dev_configure(id_, 1, 1, &conf); r != 0) {
    return DpdkError("rte_eth_dev_configure", name_, -r);
  }
  uint16_t nrx = c.rx_ring, ntx = c.tx_ring;
  if (int r = rte_eth_dev_adjust_nb_rx_tx_desc(id_, &nrx, &ntx); r != 0) {
    return DpdkError("rte_eth_dev_adjust_nb_rx_tx_desc", name_, -r);
  }
  {
    auto& kept = Reg().kept_pools;
    auto it = kept.find(id_);
    if (it != kept.end()) {
      pool_ = it->second.first;
      ext_pool_ = it->second.second;
      kept.erase(it);
    }
  }
  if (pool_ != nullptr &&
      rte_pktmbuf_data_room_size(pool_) < RTE_PKTMBUF_HEADROOM + frame) {
    // Too small for this MTU; the stopped queues may still point into it.
    Reg().kept_pools[id_] = {pool_, ext_pool_};
    pool_ = ext_pool_ = nullptr;
    return absl::InvalidArgumentError(
        absl::StrCat("DPDK port ", name_,
                     " was used earlier in this process with a "
                     "smaller MTU; open it with at most that MTU"));
  }
  if (pool_ == nullptr) pool_ = MakePool(id_, c.mbufs, frame);
  if (pool_ == nullptr) {
    return DpdkError("rte_pktmbuf_pool_create", name_, rte_errno);
  }
  if (caps_.tx_multi_seg && CopiesOnTransmit(info)) {
    if (ext_pool_ == nullptr) ext_pool_ = MakePool(id_, c.mbufs, 0);
    caps_.tx_by_reference = ext_pool_ != nullptr;
  }
  const int socket = rte_eth_dev_socket_id(id_);
  if (int r = rte_eth_rx_queue_setup(id_, 0, nrx, socket, nullptr, pool_);
      r != 0) {
    return DpdkError("rte_eth_rx_queue_setup", name_, -r);
  }
  if (int r = rte_eth_tx_queue_setup(id_, 0, ntx, socket, nullptr); r != 0) {
    return DpdkError("rte_eth_tx_queue_setup", name_, -r);
  }
  if (int r = rte_eth_dev_start(id_); r != 0) {
    absl::Status s = DpdkError("rte_eth_dev_start", name_, -r);
    if (info.driver_name != nullptr &&
        std::string(info.driver_name) == "net_memif") {
      // memif: a client's start fails until its server listens.
      return absl::UnavailableError(
          absl::StrCat(s.message(),
                       " (a memif client starts only once the server end of "
                       "its socket is up: start the server first)"));
    }
    return s;
  }
  started_ = true;
  rte_ether_addr a;
  if (int r = rte_eth_macaddr_get(id_, &a); r != 0) {
    return DpdkError("rte_eth_macaddr_get", name_, -r);
  }
  std::copy(a.addr_bytes, a.addr_bytes + 6, mac_.begin());
  return absl::OkStatus();
}

DpdkPort::~DpdkPort() {
  Registry& reg = Reg();
  std::lock_guard<std::recursive_mutex> lock(reg.mu);
  if (started_) {
    rte_eth_dev_stop(id_);
    // Some virtual devices (memif) finish the disconnect on the EAL's
    // interrupt thread; a process that exits while it still runs can crash
    // in it. Give the link up to 200 ms to go down.
    for (int i = 0; i < 40; ++i) {
      rte_eth_link link{};
      if (rte_eth_link_get_nowait(id_, &link) != 0 ||
          link.link_status == RTE_ETH_LINK_DOWN) {
        break;
      }
      rte_delay_us_sleep(5000);
    }
  }
  if (hotplugged_) {
    rte_eth_dev_info info;
    const bool have = rte_eth_dev_info_get(id_, &info) == 0;
    rte_eth_dev_close(id_);
    if (have && info.device != nullptr) rte_dev_remove(info.device);
    if (pool_ != nullptr) rte_mempool_free(pool_);
    if (ext_pool_ != nullptr) rte_mempool_free(ext_pool_);
  } else if (pool_ != nullptr) {
    reg.kept_pools[id_] = {pool_, ext_pool_};
  }
  if (owns_) reg.owned.erase(id_);
}

}  // namespace braid::backend::dpdk

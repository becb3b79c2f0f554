#include "backend/dpdk/dpdk_backend.h"

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "backend/dpdk/eal.h"

namespace braid::backend::dpdk {

absl::StatusOr<std::unique_ptr<DpdkBackend>> DpdkBackend::Open(
    const DpdkOptions& o) {
  if (o.bind.family != NetAddr::Family::kIpv4 &&
      o.bind.family != NetAddr::Family::kIpv6) {
    return absl::InvalidArgumentError(
        "dpdk backend: bind must be an IPv4 or IPv6 address");
  }
  if (absl::Status s = EnsureEal(o.eal_args); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<DpdkPort>> port = DpdkPort::Open(o.port);
  if (!port.ok()) return port.status();
  return std::unique_ptr<DpdkBackend>(new DpdkBackend(o, std::move(*port)));
}

DpdkBackend::DpdkBackend(const DpdkOptions& o, std::unique_ptr<DpdkPort> port)
    : o_(o), port_(std::move(port)) {
  me_.mac = o_.local_mac ? *o_.local_mac : port_->mac();
  me_.addr = o_.bind;
  port_id_ = port_->id();
  max_datagram_ =
      o_.port.mtu - (FrameHeaderLen(o_.bind.family) - kEthHeaderLen);
  max_frame_ = o_.port.mtu + kEthHeaderLen;
  rx_flat_.resize(size_t{kBurst} * max_frame_);
}

DpdkBackend::~DpdkBackend() {
  if (rx_held_n_ > 0) rte_pktmbuf_free_bulk(rx_held_.data(), rx_held_n_);
  rx_held_n_ = 0;
  // Hand back what the port still holds of messages' bytes; the port stops
  // when port_ goes, and ext_slots_ outlives it if frames remain anyway.
  rte_eth_tx_done_cleanup(port_id_, 0, 0);
  port_.reset();
}

}  // namespace braid::backend::dpdk

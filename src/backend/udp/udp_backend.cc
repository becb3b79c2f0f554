#include "backend/udp/udp_backend.h"

#include <sys/socket.h>

#include <utility>

namespace braid::backend {

absl::StatusOr<std::unique_ptr<UdpBackend>> UdpBackend::Open(
    const UdpOptions& opts) {
  absl::StatusOr<UdpSockets> sockets = OpenUdpSockets(opts);
  if (!sockets.ok()) return sockets.status();
  return std::unique_ptr<UdpBackend>(new UdpBackend(opts, std::move(*sockets)));
}

UdpBackend::UdpBackend(const UdpOptions& opts, UdpSockets sockets)
    : opts_(opts),
      sockets_(std::move(sockets)),
      datapath_(sockets_.family, sockets_.rx_fd, sockets_.tx_fds, opts,
                sockets_.gro_active) {
  if (opts.rx_timestamps) SetRxTimestamps(true);  // sockets start without
}

uint32_t UdpBackend::EntropyCount() const {
  return static_cast<uint32_t>(sockets_.tx_fds.size());
}

NetAddr UdpBackend::LocalAddress() const { return sockets_.local; }

bool UdpBackend::Reaches(NetAddr::Family f) const {
  return f == sockets_.local.family ||
         (sockets_.dual_stack && f == NetAddr::Family::kIpv4);
}

uint32_t UdpBackend::MaxDatagram() const { return opts_.mtu_payload; }

size_t UdpBackend::TxBurst(absl::Span<const TxPacket> pkts) {
  return datapath_.TxBurst(pkts);
}

size_t UdpBackend::RxBurst(absl::Span<RxPacket> out) {
  return datapath_.RxBurst(out);
}

int UdpBackend::WaitFd() const { return sockets_.rx_fd; }

void UdpBackend::SetRxTimestamps(bool on) {
  const int v = on ? 1 : 0;
  (void)setsockopt(sockets_.rx_fd, SOL_SOCKET, SO_TIMESTAMPNS, &v, sizeof(v));
}

BackendCounters UdpBackend::counters() const { return datapath_.counters(); }

}  // namespace braid::backend

// The kernel-UDP backend: braid over ordinary UDP sockets, no privileges.
// Entropy value e sends from its own socket (its own source port), so an
// ECMP fabric hashing the 5-tuple spreads entropies over paths. All inbound
// traffic arrives on one receive socket, the endpoint's address.
#ifndef BRAID_BACKEND_UDP_UDP_BACKEND_H_
#define BRAID_BACKEND_UDP_UDP_BACKEND_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/backend.h"
#include "backend/udp/udp_datapath.h"
#include "backend/udp/udp_options.h"
#include "backend/udp/udp_setup.h"

namespace braid::backend {

class UdpBackend final : public Backend {
 public:
  // Opens the receive socket and one sender socket per entropy (see
  // OpenUdpSockets). Returns InvalidArgument for bad options, or the failed
  // syscall's error ("bind(127.0.0.1:9000) receive socket: port 9000 in
  // use: ...").
  static absl::StatusOr<std::unique_ptr<UdpBackend>> Open(
      const UdpOptions& opts);

  // Backend interface; see backend.h and UdpDatapath for batching details.
  uint32_t EntropyCount() const override;
  NetAddr LocalAddress() const override;
  bool Reaches(NetAddr::Family f) const override;
  uint32_t MaxDatagram() const override;
  size_t TxBurst(absl::Span<const TxPacket> pkts) override;
  // Returns out.size() when more may be pending: call again before waiting
  // on WaitFd() (GRO buffers are split across calls).
  size_t RxBurst(absl::Span<RxPacket> out) override;
  TimeNs LastRxTime() const override { return datapath_.last_rx_time(); }
  int WaitFd() const override;
  // SO_TIMESTAMPNS on the receive socket, the one place it is set
  // (UdpOptions::rx_timestamps is the initial state). Best effort: without
  // it RTT samples end when this process reads the datagram.
  void SetRxTimestamps(bool on) override;
  BackendCounters counters() const override;

  // True if RxBurst has datagrams ready without reading the socket.
  bool RxPending() const { return datapath_.RxPending(); }
  // UDP-specific counters (GSO/GRO use, errors by cause).
  const UdpCounters& udp_counters() const { return datapath_.udp_counters(); }
  // The source port entropy `e` sends from; e < EntropyCount().
  uint16_t SourcePort(wire::Entropy e) const { return sockets_.tx_ports[e]; }
  // Whether GSO / GRO are actually in use (requested and kernel-supported).
  bool gso_active() const { return datapath_.gso_active(); }
  bool gro_active() const { return sockets_.gro_active; }
  // The socket buffer sizes the kernel granted.
  int rcvbuf_bytes() const { return sockets_.rcvbuf_bytes; }
  int sndbuf_bytes() const { return sockets_.sndbuf_bytes; }
  const UdpOptions& options() const { return opts_; }

 private:
  UdpBackend(const UdpOptions& opts, UdpSockets sockets);

  const UdpOptions opts_;
  UdpSockets sockets_;
  UdpDatapath datapath_;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_UDP_UDP_BACKEND_H_

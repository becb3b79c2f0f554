// Socket setup of the kernel-UDP backend: one receive socket (the address
// peers send to) and one sender socket per entropy value, each bound to its
// own source port. No datapath code here; see udp_datapath.h.
#ifndef BRAID_BACKEND_UDP_UDP_SETUP_H_
#define BRAID_BACKEND_UDP_UDP_SETUP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backend/udp/udp_options.h"
#include "braid/address.h"

namespace braid::backend {

// The open sockets of one UDP backend. Owns every fd (closed on destruction);
// move-only.
class UdpSockets {
 public:
  UdpSockets() = default;
  ~UdpSockets();
  UdpSockets(UdpSockets&& o) noexcept;
  UdpSockets& operator=(UdpSockets&& o) noexcept;
  UdpSockets(const UdpSockets&) = delete;
  UdpSockets& operator=(const UdpSockets&) = delete;

  // Closes every socket; safe to call twice.
  void Close();

  int family = 0;                  // AF_INET or AF_INET6
  int rx_fd = -1;                  // the only inbound socket
  std::vector<int> tx_fds;         // index = entropy value
  std::vector<uint16_t> tx_ports;  // bound source port of each tx_fds[i]
  NetAddr local;                   // rx_fd's bound address (port resolved)
  bool gro_active = false;         // the kernel accepted UDP_GRO on rx_fd
  // IPv6 sockets bound to :: with IPV6_V6ONLY off: IPv4 peers are reachable
  // (as ::ffff:a.b.c.d).
  bool dual_stack = false;
  int rcvbuf_bytes = 0;  // SO_RCVBUF as granted (kernel's usable size)
  int sndbuf_bytes = 0;  // SO_SNDBUF of the sender sockets as granted
};

// Validates `o` and opens all sockets non-blocking: the receive socket bound
// to o.bind (with IP_RECVTOS/IPV6_RECVTCLASS, and UDP_GRO when o.gro), and
// o.num_entropies sender sockets bound to o.bind's IP and distinct ports
// (default TOS ECT(0) when o.ecn, DF set). Errors name the syscall, the
// address and the errno, e.g. "bind(127.0.0.1:9000) receive socket: port
// 9000 in use".
absl::StatusOr<UdpSockets> OpenUdpSockets(const UdpOptions& o);

// An error Status for a failed syscall: "<call>(<what>): <explanation>",
// where the explanation spells out common errnos (EADDRINUSE, EACCES,
// EADDRNOTAVAIL, EAFNOSUPPORT) before strerror.
absl::Status SyscallError(absl::string_view call, absl::string_view what,
                          int err, uint16_t port = 0);

}  // namespace braid::backend

#endif  // BRAID_BACKEND_UDP_UDP_SETUP_H_

#include "backend/udp/udp_setup.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backend/udp/udp_sockaddr.h"

namespace braid::backend {
namespace {

constexpr int kEct0 = 0x02;
constexpr uint32_t kMaxUdpPayload = 65507;  // IPv4: 65535 - 20 - 8
// Sender sockets never receive traffic (peers send to the receive port), so
// they get the smallest receive buffer the kernel allows.
constexpr int kTxSocketRcvbuf = 4096;

// Sets a buffer size, trying the privileged FORCE variant first so that a
// root process is not capped by net.core.{r,w}mem_max. Returns the size the
// kernel granted (getsockopt reports the doubled, usable value; we halve it
// back to the requested unit).
int SetBuffer(int fd, int force_opt, int opt, int bytes) {
  if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) != 0) {
    (void)setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
  }
  int got = 0;
  socklen_t len = sizeof(got);
  if (getsockopt(fd, SOL_SOCKET, opt, &got, &len) != 0) return 0;
  return got / 2;
}

absl::Status SetIntOpt(int fd, int level, int opt, int value,
                       absl::string_view name) {
  if (setsockopt(fd, level, opt, &value, sizeof(value)) != 0) {
    return SyscallError("setsockopt", name, errno);
  }
  return absl::OkStatus();
}

// Creates a non-blocking, close-on-exec UDP socket of `family`.
absl::StatusOr<int> NewSocket(int family, absl::string_view role) {
  int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return SyscallError(
        "socket",
        absl::StrCat(family == AF_INET6 ? "AF_INET6" : "AF_INET", ", ", role),
        errno);
  }
  return fd;
}

// Binds `fd` to `addr` and returns the bound address (port resolved).
absl::StatusOr<NetAddr> BindAndResolve(int fd, int family, const NetAddr& addr,
                                       absl::string_view role) {
  sockaddr_storage ss;
  socklen_t len = ToSockaddr(addr, family, &ss);
  if (len == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot bind ", role, " to ", addr.ToString()));
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    return SyscallError("bind", absl::StrCat(addr.ToString(), " ", role), errno,
                        addr.port);
  }
  sockaddr_storage got;
  socklen_t got_len = sizeof(got);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&got), &got_len) != 0) {
    return SyscallError("getsockname", role, errno);
  }
  NetAddr out;
  if (!FromSockaddr(got, got_len, &out)) {
    return absl::InternalError(
        absl::StrCat("getsockname(", role, "): unexpected address family"));
  }
  return out;
}

// Marks outgoing datagrams: ECT(0) by default when `ecn`, and DF without
// path-MTU state (a datagram that does not fit is an error, never a
// fragment).
absl::Status ConfigureSender(int fd, int family, bool ecn) {
  const int tos = ecn ? kEct0 : 0;
  const int pmtu = IP_PMTUDISC_PROBE;
  if (family == AF_INET6) {
    if (auto s = SetIntOpt(fd, IPPROTO_IPV6, IPV6_TCLASS, tos, "IPV6_TCLASS");
        !s.ok()) {
      return s;
    }
    // IPv4-mapped destinations of a dual-stack socket use the IPv4 options;
    // a v6-only socket may refuse them, which is harmless.
    (void)setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
    const int pmtu6 = IPV6_PMTUDISC_PROBE;
    (void)setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu6,
                     sizeof(pmtu6));
    (void)setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
  } else {
    if (auto s = SetIntOpt(fd, IPPROTO_IP, IP_TOS, tos, "IP_TOS"); !s.ok()) {
      return s;
    }
    (void)setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
  }
  return absl::OkStatus();
}

// True if the IPv6 socket `fd`, bound to `addr`, also carries IPv4: bound to
// the any-address (::) with IPV6_V6ONLY off (net.ipv6.bindv6only = 0).
bool TakesIpv4(int fd, const NetAddr& addr) {
  if (!addr.IsWildcard()) return false;
  int v6only = 1;
  socklen_t len = sizeof(v6only);
  if (getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &len) != 0) {
    return false;
  }
  return v6only == 0;
}

// Asks the kernel for the ancillary data the receive path reads: the TOS /
// traffic class of each datagram and, when bound to the any-address (on
// `wildcard`), the local address it was sent to.
absl::Status RequestRxAncillary(int fd, int family, bool wildcard) {
  const int on = 1;
  // TOS of IPv4 datagrams (also those reaching a dual-stack socket).
  int r4 = setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
  if (family == AF_INET && r4 != 0) {
    return SyscallError("setsockopt", "IP_RECVTOS", errno);
  }
  if (family == AF_INET6) {
    if (auto s =
            SetIntOpt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1, "IPV6_RECVTCLASS");
        !s.ok()) {
      return s;
    }
  }
  if (!wildcard) return absl::OkStatus();
  // Bound to the any-address: learn which of our addresses each
  // datagram was sent to, so answers leave from it (LocalAddrs).
  // IP_PKTINFO also covers IPv4 datagrams on a dual-stack socket.
  const int r = setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on));
  if (family == AF_INET && r != 0) {
    return SyscallError("setsockopt", "IP_PKTINFO", errno);
  }
  if (family == AF_INET6) {
    return SetIntOpt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1, "IPV6_RECVPKTINFO");
  }
  return absl::OkStatus();
}

// Opens socks->rx_fd, configured and bound to o.bind; sets rcvbuf_bytes,
// gro_active and local.
absl::Status OpenReceiver(const UdpOptions& o, UdpSockets* socks) {
  const int family = socks->family;
  absl::StatusOr<int> rx = NewSocket(family, "receive socket");
  if (!rx.ok()) return rx.status();
  socks->rx_fd = *rx;
  socks->rcvbuf_bytes =
      SetBuffer(socks->rx_fd, SO_RCVBUFFORCE, SO_RCVBUF, o.rcvbuf);
  (void)SetBuffer(socks->rx_fd, SO_SNDBUFFORCE, SO_SNDBUF, 65536);
  if (auto s = RequestRxAncillary(socks->rx_fd, family, o.bind.IsWildcard());
      !s.ok()) {
    return s;
  }
  const int on = 1;
  // Kernel receive timestamps: UdpBackend switches them (SetRxTimestamps).
  // Count datagrams dropped on a full receive buffer (best effort).
  (void)setsockopt(socks->rx_fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof(on));
  if (o.gro) {
    socks->gro_active =
        setsockopt(socks->rx_fd, IPPROTO_UDP, UDP_GRO, &on, sizeof(on)) == 0;
  }
  absl::StatusOr<NetAddr> local =
      BindAndResolve(socks->rx_fd, family, o.bind, "receive socket");
  if (!local.ok()) return local.status();
  socks->local = *local;
  return absl::OkStatus();
}

// Opens one sender socket per entropy value (socks->tx_fds, tx_ports),
// bound to o.bind's IP; sets sndbuf_bytes.
absl::Status OpenSenders(const UdpOptions& o, UdpSockets* socks) {
  const int family = socks->family;
  socks->tx_fds.reserve(o.num_entropies);
  socks->tx_ports.reserve(o.num_entropies);
  for (uint32_t i = 0; i < o.num_entropies; ++i) {
    const std::string role = absl::StrCat("entropy socket ", i);
    absl::StatusOr<int> tx = NewSocket(family, role);
    if (!tx.ok()) return tx.status();
    socks->tx_fds.push_back(*tx);
    const int fd = *tx;
    const int granted = SetBuffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, o.sndbuf);
    if (i == 0) socks->sndbuf_bytes = granted;
    (void)SetBuffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, kTxSocketRcvbuf);
    if (auto s = ConfigureSender(fd, family, o.ecn); !s.ok()) return s;
    NetAddr src = o.bind;
    src.port =
        o.src_port_base == 0 ? 0 : static_cast<uint16_t>(o.src_port_base + i);
    absl::StatusOr<NetAddr> bound = BindAndResolve(fd, family, src, role);
    if (!bound.ok()) return bound.status();
    socks->tx_ports.push_back(bound->port);
  }
  return absl::OkStatus();
}

// True if every socket of socks (IPv6) also carries IPv4 (TakesIpv4).
bool AllTakeIpv4(const UdpSockets& socks) {
  bool all = TakesIpv4(socks.rx_fd, socks.local);
  for (int fd : socks.tx_fds) all = all && TakesIpv4(fd, socks.local);
  return all;
}

}  // namespace

absl::Status ValidateUdpOptions(const UdpOptions& o) {
  if (!o.bind.valid()) {
    return absl::InvalidArgumentError(
        "UdpOptions.bind: no address (set an IPv4 or IPv6 address)");
  }
  if (o.num_entropies < 1 || o.num_entropies > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "UdpOptions.num_entropies = ", o.num_entropies, ": must be 1..256"));
  }
  if (o.mtu_payload < 64 || o.mtu_payload > kMaxUdpPayload) {
    return absl::InvalidArgumentError(
        absl::StrCat("UdpOptions.mtu_payload = ", o.mtu_payload,
                     ": must be 64..", kMaxUdpPayload));
  }
  if (o.burst < 1 || o.burst > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("UdpOptions.burst = ", o.burst, ": must be 1..1024"));
  }
  if (o.sndbuf <= 0 || o.rcvbuf <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("UdpOptions.sndbuf/rcvbuf = ", o.sndbuf, "/", o.rcvbuf,
                     ": must be positive"));
  }
  if (o.src_port_base != 0) {
    const uint32_t last = uint32_t{o.src_port_base} + o.num_entropies - 1;
    if (last > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("UdpOptions.src_port_base = ", o.src_port_base, " with ",
                       o.num_entropies, " entropies runs past port 65535"));
    }
    if (o.bind.port != 0 && o.bind.port >= o.src_port_base &&
        o.bind.port <= last) {
      return absl::InvalidArgumentError(absl::StrCat(
          "UdpOptions: receive port ", o.bind.port,
          " lies inside the source port range ", o.src_port_base, "..", last));
    }
  }
  return absl::OkStatus();
}

absl::Status SyscallError(absl::string_view call, absl::string_view what,
                          int err, uint16_t port) {
  std::string why;
  switch (err) {
    case EADDRINUSE:
      why = port != 0 ? absl::StrCat("port ", port, " in use")
                      : "no free ephemeral port";
      break;
    case EACCES:
      why = port != 0 && port < 1024
                ? absl::StrCat("port ", port, " is privileged (needs root)")
                : "permission denied";
      break;
    case EADDRNOTAVAIL:
      why = "address is not assigned to any local interface";
      break;
    case EAFNOSUPPORT:
      why = "address family not supported (IPv6 disabled?)";
      break;
    case EMFILE:
    case ENFILE:
      why = "out of file descriptors";
      break;
    default:
      why = "failed";
      break;
  }
  // The codes Endpoint::Open documents, not absl::ErrnoToStatus's (which
  // makes EADDRINUSE FailedPrecondition and EADDRNOTAVAIL AlreadyExists).
  const std::string msg = absl::StrCat(call, "(", what, "): ", why);
  switch (err) {
    case EADDRINUSE:
      return absl::AlreadyExistsError(msg);
    case EADDRNOTAVAIL:
    case EAFNOSUPPORT:
      return absl::InvalidArgumentError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::UnavailableError(
          absl::StrCat(msg, " (", strerror(err), ")"));
  }
}

UdpSockets::~UdpSockets() { Close(); }

UdpSockets::UdpSockets(UdpSockets&& o) noexcept { *this = std::move(o); }

UdpSockets& UdpSockets::operator=(UdpSockets&& o) noexcept {
  if (this != &o) {
    Close();
    family = o.family;
    rx_fd = std::exchange(o.rx_fd, -1);
    tx_fds = std::move(o.tx_fds);
    o.tx_fds.clear();
    tx_ports = std::move(o.tx_ports);
    local = o.local;
    gro_active = o.gro_active;
    dual_stack = o.dual_stack;
    rcvbuf_bytes = o.rcvbuf_bytes;
    sndbuf_bytes = o.sndbuf_bytes;
  }
  return *this;
}

void UdpSockets::Close() {
  if (rx_fd >= 0) close(rx_fd);
  rx_fd = -1;
  for (int fd : tx_fds) {
    if (fd >= 0) close(fd);
  }
  tx_fds.clear();
  tx_ports.clear();
}

absl::StatusOr<UdpSockets> OpenUdpSockets(const UdpOptions& o) {
  if (auto s = ValidateUdpOptions(o); !s.ok()) return s;
  UdpSockets socks;  // closes whatever was opened if we return early
  socks.family = o.bind.family == NetAddr::Family::kIpv6 ? AF_INET6 : AF_INET;
  if (auto s = OpenReceiver(o, &socks); !s.ok()) return s;
  if (auto s = OpenSenders(o, &socks); !s.ok()) return s;
  socks.dual_stack = socks.family == AF_INET6 && AllTakeIpv4(socks);
  return socks;
}

}  // namespace braid::backend

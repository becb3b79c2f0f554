// Options of the kernel-UDP backend. Defaults suit a 1500-byte-MTU IPv4 path.
#ifndef BRAID_BACKEND_UDP_UDP_OPTIONS_H_
#define BRAID_BACKEND_UDP_UDP_OPTIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "braid/address.h"

namespace braid::backend {

struct UdpOptions {
  // Address of the receive socket, i.e. the address peers send to. IPv4 or
  // IPv6; port 0 picks an ephemeral port (read it back with LocalAddress()).
  // The entropy (sender) sockets bind to the same IP.
  NetAddr bind;
  // First source port of the entropy sockets: entropy i sends from
  // src_port_base + i. 0 lets the kernel pick an ephemeral port per socket.
  uint16_t src_port_base = 0;
  // Number of entropy values = number of sender sockets (1..256).
  uint16_t num_entropies = 16;
  // Largest UDP payload carried (1472 = 1500-byte Ethernet MTU with IPv4;
  // 1452 for IPv6). Must be <= 65507.
  uint32_t mtu_payload = 1472;
  // Send runs of equal-size datagrams to one destination as one UDP GSO
  // (UDP_SEGMENT) super-datagram. Falls back to plain sends if unsupported.
  bool gso = true;
  // Accept GRO-coalesced datagrams on the receive socket (UDP_GRO).
  bool gro = true;
  // Socket buffer sizes in bytes (SO_*BUFFORCE is tried first when
  // privileged, then the plain option, which the kernel caps at *mem_max).
  int sndbuf = 4 << 20;
  int rcvbuf = 8 << 20;
  // Send ECT(0) for packets marked `ect` and report CE on receive.
  bool ecn = true;
  // Datagrams per sendmmsg/recvmmsg call (1..1024); sizes the preallocated
  // message arrays and receive buffers.
  int burst = 64;
  // Ask the kernel for receive timestamps (SO_TIMESTAMPNS) and report them
  // as RxPacket::arrival from the start (UdpBackend::SetRxTimestamps switches
  // them later). Off: arrival is unknown (Infinite).
  bool rx_timestamps = true;
  // connect() each entropy socket to the first destination it sends to, and
  // send to that destination without an address: the kernel then reuses the
  // socket's cached route instead of looking one up per sendmsg (64 B
  // one-way on loopback 3.88 -> 3.62 us, docs/performance.md). Other
  // destinations are still reached from the same socket by address. Only
  // when `bind` names a specific IP: a socket bound to the wildcard address
  // would have its source IP fixed by the connect, wrong for destinations
  // routed through another interface. The entropy sockets are never read, so
  // the filter a connect sets on receive changes nothing.
  bool connect = true;
};

// Returns OK if `o` is usable, else InvalidArgument naming the bad field.
absl::Status ValidateUdpOptions(const UdpOptions& o);

}  // namespace braid::backend

#endif  // BRAID_BACKEND_UDP_UDP_OPTIONS_H_

// braid0's configuration, read once from the environment.
//
//   BRAID_VERBS_BIND        IPv4 address the endpoints bind (default 127.0.0.1)
//   BRAID_VERBS_PORT_BASE   first UDP port tried for an endpoint (default
//   20000) BRAID_VERBS_PORT_COUNT  ports tried from the base (default 2000)
//   BRAID_VERBS_PATHS       entropy values per peer, 1..256 (default 16)
//   BRAID_VERBS_MODE        spray | gbn (default spray)
//   BRAID_VERBS_CC          swift | none (default swift)
//   BRAID_VERBS_MTU         IP MTU, 576..65535 (default 1500)
//   BRAID_VERBS_LOSS        test impairment: drop probability 0..0.5, or
//                           a percentage like "5%" (default 0)
//   BRAID_VERBS_SEED        impairment seed, 0..2^64-1 (default 1)
//   BRAID_VERBS_MIN_ACK_TIMEOUT_MS  floor of the RC local ACK timeout,
//                           0..3600000 (default 10000)
//   BRAID_VERBS_SPIN_US     how long the progress thread keeps polling
//                           after work came in before it blocks,
//                           0..1000000 (default 50 with 4 or more CPUs
//                           available to the process, else 0)
//   BRAID_VERBS_DISABLE     set and not "0" = do not list braid0
//
// A value that does not parse is an error: the caller prints it and does
// not list the device.
#ifndef BRAID_VERBS_COMPAT_CONFIG_H_
#define BRAID_VERBS_COMPAT_CONFIG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "braid/address.h"
#include "braid/endpoint.h"
#include "braid/options.h"
#include "braid/testing/impairment.h"

namespace braid::verbs_compat {

struct VerbsConfig {
  // Host-order IPv4 address the endpoints bind.
  uint32_t bind_ipv4 = 0x7f000001;
  // Ports bind_port_base .. bind_port_base + port_count - 1 are tried in
  // order; the first free one names the endpoint (and is its LID). Kept
  // below 0xC000 so every port is a valid unicast LID.
  uint16_t port_base = 20000;
  uint16_t port_count = 2000;
  uint16_t paths = 16;
  // BRAID_VERBS_ENTROPY_SOCKETS: UDP source ports (sockets) of each
  // endpoint; 0 = twice the paths (spares for recycling failed paths).
  uint16_t entropy_sockets = 0;
  Mode mode = Mode::kSpray;
  CcAlgorithm cc = CcAlgorithm::kSwift;
  uint32_t mtu = 1500;
  double loss = 0;
  uint64_t seed = 1;
  bool disabled = false;
  // BRAID_VERBS_BACKEND: udp (kernel sockets) or dpdk, with its settings
  // from BRAID_VERBS_DPDK_* (EAL arguments, port, next hop; the endpoint
  // binds BRAID_VERBS_BIND, which must then be the host's own IP). Over
  // dpdk the endpoint is busy-polled, and so is the progress thread.
  BackendKind backend = BackendKind::kUdp;
  DpdkBackendOptions dpdk;
  // BRAID_VERBS_BACKEND=verbs_ud: braid0's endpoints are UD queue pairs of
  // the RDMA device BRAID_VERBS_UD_DEVICE (port BRAID_VERBS_UD_PORT, GID
  // BRAID_VERBS_UD_GID_INDEX, which must be IPv4-mapped: RoCE v2 over
  // IPv4), so braid0 gives RC semantics over a NIC's UD service
  // (docs/verbs-ud.md). BRAID_VERBS_BIND and the port range do not apply.
  VerbsUdBackendOptions ud;
  // The device's name as it lists it ("braid0"; a test build that carries
  // braid0 names itself otherwise).
  std::string device_name = "braid0";
  // BRAID_VERBS_SECURITY (none, auth, encrypt) and BRAID_VERBS_KEY_FILE
  // (the security domain key, see LoadDomainKey): packet protection of
  // every endpoint (docs/security.md).
  SecurityOptions security;
  // The RC local ACK timeout (timeout / retry_cnt) is never shorter than
  // this: braid's loss recovery, and a loaded host's scheduling, can hold a
  // responder's answer for seconds (perftest under 1 % loss on a loaded
  // 2-core host failed with a 2 s floor). 0 = the QP's value exactly.
  DurationNs min_ack_timeout = DurationNs::Seconds(10);
  // While the application is not polling, the progress thread serves the
  // peer (READ and atomic responses, ACKs, receives for completion
  // channels). After a step that handled work it polls without blocking
  // for this long, so the next request does not wait for a thread wake-up
  // (ib_read_lat's responder: ~56 us typical blocking, see docs/verbs.md).
  // Costs a core while requests keep coming closer than this, so LoadConfig
  // turns it on only with 4 or more CPUs: on 2 it competes with
  // applications that spin themselves (ib_write_lat spins on memory: its
  // average rose from ~4.5 to 45-150 us). 0 = always block.
  DurationNs progress_spin = DurationNs::Zero();

  // Endpoint options for a given port.
  EndpointOptions ToEndpointOptions(uint16_t port) const;
  // The test impairment BRAID_VERBS_LOSS asks for (none when loss is 0).
  TestImpairments ToImpairments() const;
  // Opens the endpoint for `port`, impaired as ToImpairments says.
  absl::StatusOr<std::unique_ptr<Endpoint>> OpenEndpoint(uint16_t port) const;
};

// Reads the configuration through `getenv` (injectable for tests), for the
// device called `device_name`. Errors are InvalidArgument naming the
// variable, its value and what is allowed.
absl::StatusOr<VerbsConfig> LoadConfig(
    const std::function<const char*(const char*)>& getenv_fn,
    const std::string& device_name = "braid0");

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_CONFIG_H_

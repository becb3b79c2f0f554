// The DPDK backend's own settings, parsed from the public
// DpdkBackendOptions (include/braid/options.h).
#ifndef BRAID_BACKEND_DPDK_DPDK_OPTIONS_H_
#define BRAID_BACKEND_DPDK_DPDK_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "backend/dpdk/dpdk_port.h"
#include "backend/dpdk/frame.h"
#include "braid/address.h"
#include "braid/options.h"

namespace braid::backend::dpdk {

struct DpdkOptions {
  std::string eal_args;
  PortConfig port;
  // The endpoint's IP and UDP port (never the any-address or port 0).
  NetAddr bind;
  std::optional<MacAddr> local_mac;     // unset = the port's
  std::optional<MacAddr> next_hop_mac;  // set = no ARP/ND
  NetAddr gateway;                      // invalid = every peer on-link
  uint32_t prefix_len = 24;
  uint16_t src_port_base = 49152;
  uint16_t num_entropies = 16;
  bool ecn = true;
};

// Parses the public options for an endpoint bound to `bind`. `random`
// picks the UDP port when bind's is 0. Errors: InvalidArgument naming the
// field (EndpointOptions.dpdk.next_hop_mac, ...) and what is wrong.
absl::StatusOr<DpdkOptions> DpdkOptionsFrom(const EndpointOptions& options,
                                            const NetAddr& bind,
                                            uint64_t random);

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_DPDK_OPTIONS_H_

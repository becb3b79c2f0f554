// The provider's settings, read once from libfabric parameters (the
// environment, FI_BRAID_<NAME>; `fi_info -e` lists them):
//
//   FI_BRAID_BIND_ADDR         IP the endpoints bind, unless the
//                              application names one (fi_getinfo node with
//                              FI_SOURCE, or hints->src_addr); default
//                              127.0.0.1
//   FI_BRAID_MTU               IP MTU of the network, 576..65535 (the
//                              MTU of the interface the endpoints bind
//                              on, at most 9000; 1500 when it is not
//                              known, e.g. bound to 0.0.0.0)
//   FI_BRAID_PATHS             entropy values (paths) per peer, 1..256 (16)
//   FI_BRAID_MODE              spray | gbn (spray)
//   FI_BRAID_UNEXPECTED_MB     unexpected-message bytes an endpoint holds
//                              before it stops taking messages from braid
//                              (the senders then wait for credit), MiB (256)
//   FI_BRAID_PEER_TIMEOUT_MS   a send fails (FI_EHOSTUNREACH) when its peer
//                              answers nothing for this long, ms (2000)
//   FI_BRAID_PROGRESS_US       the backstop progress thread drives the
//                              endpoints after the application has made no
//                              call for this long, us; 0 = no thread (10000)
//   FI_BRAID_ATOMICS           offer FI_ATOMIC, 0 or 1 (1); 0 keeps
//                              clients that look for RMA and atomics (Open
//                              MPI's btl/ofi, for MPI one-sided) off braid
#ifndef BRAID_LIBFABRIC_CONFIG_H_
#define BRAID_LIBFABRIC_CONFIG_H_

#include <cstdint>
#include <string>

#include "braid/options.h"

namespace braid::libfabric {

struct ProviderConfig {
  std::string bind_ip = "127.0.0.1";
  uint32_t mtu = 0;  // 0: DefaultMtu of the bound address (link_mtu.h)
  uint16_t paths = 16;
  Mode mode = Mode::kSpray;
  uint64_t unexpected_bytes = 256ull << 20;
  DurationNs peer_timeout = DurationNs::Seconds(2);
  DurationNs progress_idle = DurationNs::Millis(10);
  bool atomics = true;
};

// Largest message the provider offers (braid's default limit less the
// provider header).
inline constexpr uint32_t kMaxMessageBytes = (64u << 20);
// Messages up to this size are copied at post time (fi_inject and
// FI_INJECT); larger ones are sent from the application's buffer.
inline constexpr size_t kInjectSize = 4096;
// Advertised queue depths.
inline constexpr size_t kTxSize = 16384;
inline constexpr size_t kRxSize = 65536;
inline constexpr size_t kIovLimit = 8;

// Defines the parameters with libfabric (from fi_prov_ini).
void DefineParams();
// The settings (read at the first call). Bad values are logged and
// replaced by defaults.
const ProviderConfig& Config();

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_CONFIG_H_

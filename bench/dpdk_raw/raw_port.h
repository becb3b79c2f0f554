// dpdk-raw setup: the EAL, the one port (one rx and one tx queue), the
// clock and the stop flag. Errors name what failed; nothing here exits.
#ifndef BRAID_BENCH_DPDK_RAW_RAW_PORT_H_
#define BRAID_BENCH_DPDK_RAW_RAW_PORT_H_

#include <rte_ether.h>
#include <rte_mempool.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace braid::dpdkraw {

// `args` split on runs of spaces (empty words dropped).
std::vector<std::string> SplitEalArgs(const std::string& args);

// Starts the EAL with argv = {"dpdk-raw", SplitEalArgs(args)...}, its log on
// stderr (stdout stays for results). Fails naming rte_eal_init's error.
absl::Status InitEal(const std::string& args);

// Releases what the EAL holds (hugepage files, the memif socket).
void CleanupEal();

struct Port {
  uint16_t id = 0;
  std::string name;
  rte_ether_addr mac{};
  rte_mempool* rx_pool = nullptr;  // also for control frames
  bool memif_client = false;       // a net_memif port in the client role
  uint32_t memif_bsize = 0;        // a net_memif port's buffer size
  bool started = false;
};

// Finds port `name` ("" = the first port) and configures one rx and one tx
// queue of `ring` descriptors, receive buffers from a new pool. Fails naming
// the port and the call that failed.
absl::StatusOr<Port> OpenPort(const std::string& name, uint16_t ring);

// Starts the port, retrying for up to `seconds` (a memif client fails to
// start until its server listens).
absl::Status StartPort(Port* port, double seconds);

// Waits up to `seconds` for the port's link; fails saying it is still down
// (over memif: no peer connected). A memif client is restarted every second
// meanwhile: a server refuses a client that comes before its port started,
// and the client does not try again by itself.
absl::Status WaitLinkUp(Port* port, double seconds);

// Whether the port's link is up now.
bool LinkUp(const Port& port);

// Stops and closes the port (over memif this closes the socket and removes
// a socket file the server made, then waits 0.2 s for memif's interrupt
// thread to finish the disconnect).
void ClosePort(const Port& port);

// The TSC, and TSC ticks in `seconds`; TscNs converts ticks to ns.
uint64_t Tsc();
uint64_t TscTicks(double seconds);
double TscNs(uint64_t ticks);

// SIGINT/SIGTERM set the stop flag (the loops check it and return, so the
// port is closed). Stopping() reads it.
void InstallStopHandlers();
bool Stopping();

}  // namespace braid::dpdkraw

#endif  // BRAID_BENCH_DPDK_RAW_RAW_PORT_H_

// dpdk-raw client: the frame blaster and the ping-pong latency probe.
#ifndef BRAID_BENCH_DPDK_RAW_RAW_CLIENT_H_
#define BRAID_BENCH_DPDK_RAW_RAW_CLIENT_H_

#include "absl/status/status.h"
#include "bench/dpdk_raw/raw_options.h"
#include "bench/dpdk_raw/raw_port.h"

namespace braid::dpdkraw {

// Whether the client's frames fit the port: over memif one frame must fit
// one buffer (bsize), since DPDK 22.11's memif does not clear the "next"
// flag of a buffer it reuses, so after one frame spanned several buffers the
// receiver merges later frames. InvalidArgument naming both sizes if not.
absl::Status CheckFramesFit(const Options& o, const Port& port);

// Blasts frames of o.size bytes of UDP payload for o.seconds (or o.count
// frames) on the started port and prints the server's count (with
// o.tx_only: what the port took). Returns the process exit code.
int RunBandwidth(const Options& o, const Port& port);

// Ping-pong with the server; prints RTT/2 percentiles. Returns the exit
// code.
int RunLatency(const Options& o, const Port& port);

}  // namespace braid::dpdkraw

#endif  // BRAID_BENCH_DPDK_RAW_RAW_CLIENT_H_

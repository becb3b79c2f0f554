// dpdk-raw server: counts blast frames per run and reports them to the
// client; echoes pings with their addresses swapped.
#ifndef BRAID_BENCH_DPDK_RAW_RAW_SERVER_H_
#define BRAID_BENCH_DPDK_RAW_RAW_SERVER_H_

#include "bench/dpdk_raw/raw_options.h"
#include "bench/dpdk_raw/raw_port.h"

namespace braid::dpdkraw {

// Serves on the started port until a signal, o.seconds, or with o.once the
// end of one run (or the peer's link going down). Returns the exit code.
int RunServer(const Options& o, const Port& port);

}  // namespace braid::dpdkraw

#endif  // BRAID_BENCH_DPDK_RAW_RAW_SERVER_H_

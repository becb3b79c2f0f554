// udp-blast client: the bandwidth blaster and the ping-pong latency probe.
#ifndef BRAID_BENCH_UDP_BLAST_BLAST_CLIENT_H_
#define BRAID_BENCH_UDP_BLAST_BLAST_CLIENT_H_

#include "bench/udp_blast/blast_common.h"

namespace braid::blast {

// Blasts datagrams at o.addr for o.seconds (or o.count datagrams) and prints
// the server's report. Returns the process exit code.
int RunBandwidth(const Options& o);

// Ping-pong o.count times; prints RTT/2 percentiles. Returns the exit code.
int RunLatency(const Options& o);

}  // namespace braid::blast

#endif  // BRAID_BENCH_UDP_BLAST_BLAST_CLIENT_H_

// udp-blast server: counts blast datagrams per run and reports to the
// client; echoes pings.
#ifndef BRAID_BENCH_UDP_BLAST_BLAST_SERVER_H_
#define BRAID_BENCH_UDP_BLAST_BLAST_SERVER_H_

#include "bench/udp_blast/blast_common.h"

namespace braid::blast {

// Serves until killed (or, with o.once, until the end of one run: a bw run's
// kEnd or a lat run's kLatEnd). Returns the process exit code.
int RunServer(const Options& o);

}  // namespace braid::blast

#endif  // BRAID_BENCH_UDP_BLAST_BLAST_SERVER_H_

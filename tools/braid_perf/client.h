// The braid-perf client: runs bw, lat or rate against a server for each
// message size and prints the table or JSON.
#ifndef BRAID_TOOLS_BRAID_PERF_CLIENT_H_
#define BRAID_TOOLS_BRAID_PERF_CLIENT_H_

#include "tools/braid_perf/flags.h"

namespace braid::perf {

// Runs every size, prints the results, says Bye. Returns the exit code: 0,
// kExitFailed on any verification or transport failure, kExitTimeLimit
// past --time-limit.
int RunClient(const PerfFlags& f);

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_CLIENT_H_

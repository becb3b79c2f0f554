// The braid-perf server: answers one client's runs (or, with --persistent,
// clients one after another), verifying every message.
#ifndef BRAID_TOOLS_BRAID_PERF_SERVER_H_
#define BRAID_TOOLS_BRAID_PERF_SERVER_H_

#include "tools/braid_perf/flags.h"

namespace braid::perf {

// Serves until the client says Bye (or forever with --persistent). Returns
// the process exit code: 0, kExitFailed if a run saw a bad, duplicate or
// missing message or the client vanished (nothing received from it, and
// no datagram at all, for 5 s mid-run) or said Bye before the Result (the
// run is abandoned, and a --persistent server serves the next client),
// kExitTimeLimit past
// --time-limit (a --persistent server abandons the run instead).
int RunServer(const PerfFlags& f);

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_SERVER_H_

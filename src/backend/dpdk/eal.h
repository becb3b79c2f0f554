// DPDK's Environment Abstraction Layer, initialised once per process and
// shared by every DPDK endpoint in it.
#ifndef BRAID_BACKEND_DPDK_EAL_H_
#define BRAID_BACKEND_DPDK_EAL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace braid::backend::dpdk {

// Splits EAL arguments on whitespace; a token may be quoted with ' or " to
// keep spaces (a vdev path with a space). Errors: InvalidArgument for an
// unterminated quote.
absl::Status SplitEalArgs(absl::string_view args,
                          std::vector<std::string>* out);

// Initialises the EAL with `args` the first time it is called in the
// process. Later calls succeed if `args` is empty or the same as the first
// call's. The calling thread's CPU affinity is kept (the EAL would pin it to
// its main lcore). Thread-safe.
// Errors: InvalidArgument (unterminated quote); FailedPrecondition when the
// EAL already runs with other arguments, or an earlier initialisation failed
// (DPDK cannot be initialised twice in one process); Unavailable naming
// DPDK's error when rte_eal_init fails (bad argument, no memory, another
// process holds the file prefix, ...).
absl::Status EnsureEal(absl::string_view args);

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_EAL_H_

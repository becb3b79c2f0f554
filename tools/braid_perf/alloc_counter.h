// Counts calls of the global operator new in this process, so braid-perf can
// report allocations per message on the steady-state path. The replacement
// operator new/delete live in alloc_counter.cc; linking it replaces the
// process's global allocation functions (a plain malloc/free underneath).
#ifndef BRAID_TOOLS_BRAID_PERF_ALLOC_COUNTER_H_
#define BRAID_TOOLS_BRAID_PERF_ALLOC_COUNTER_H_

#include <cstdint>

namespace braid::perf {

// operator new calls since the process started (all threads).
uint64_t AllocationCount();

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_ALLOC_COUNTER_H_

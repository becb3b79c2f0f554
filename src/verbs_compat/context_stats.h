// Counters of a braid0 context, and the two ways they are reported:
// braid_verbs_query_stats (braid/verbs.h) and BRAID_VERBS_STATS=1, which
// prints them to stderr when the context closes.
#ifndef BRAID_VERBS_COMPAT_CONTEXT_STATS_H_
#define BRAID_VERBS_COMPAT_CONTEXT_STATS_H_

#include <cstdint>

#include "braid/address.h"
#include "braid/stats.h"
#include "braid/verbs.h"

namespace braid::verbs_compat {

// Written with the context lock held, by the context and its parts.
struct ContextCounters {
  uint64_t messages_received = 0;
  uint64_t malformed = 0;     // did not decode as a verbs message
  uint64_t unknown_qp = 0;    // no QP with that number
  uint64_t send_retries = 0;  // endpoint backpressure, retried later
  uint64_t transport_failures = 0;
  uint64_t thread_progress = 0;  // progress steps run by the thread
  // Of those, steps taken polling without blocking (progress_spin).
  uint64_t thread_spin_steps = 0;
  // UC messages this responder dropped where RC would NAK (Qp::UcDrop).
  uint64_t uc_dropped = 0;
  uint64_t app_progress = 0;  // progress steps run by app calls
  // Receive-side payload bytes: placed directly into registered memory by
  // the endpoint (WRITE, WRITE_IMM, single-SGE READ responses), or copied
  // by braid0 out of a reassembled message (SEND, multi-SGE READ
  // responses, atomics' results).
  uint64_t bytes_placed = 0;
  uint64_t bytes_copied = 0;
  uint64_t placement_refused = 0;  // fragments' targets refused
  // Remote accesses (WRITE, READ, atomic) this responder refused, by
  // reason: the rkey names no region of the QP's PD; the QP or the region
  // lacks the access flag; the range is not inside the region. Each is
  // answered with a remote access NAK (RC) and writes nothing.
  uint64_t access_bad_key = 0;
  uint64_t access_no_permission = 0;
  uint64_t access_out_of_bounds = 0;
  // Sends whose payload went from the application's registered buffer
  // without a copy (one SGE, >= kZeroCopyMinBytes; the verbs header is the
  // endpoint's copied prefix).
  uint64_t zero_copy_sends = 0;
};

// The context-wide part of braid_verbs_query_stats: overwrites *out from
// the endpoint's stats, the context's counters and the gauge of zero-copy
// sends in flight. The caller adds its live QPs' counters.
void FillVerbsStats(const EndpointStats& endpoint,
                    const ContextCounters& counters,
                    uint64_t zero_copy_in_flight, braid_verbs_stats* out);

// BRAID_VERBS_STATS=1: prints the counters, two lines on stderr, each
// naming the context by its endpoint's address.
void PrintContextStats(const NetAddr& local, const ContextCounters& counters,
                       const EndpointStats& endpoint);

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_CONTEXT_STATS_H_

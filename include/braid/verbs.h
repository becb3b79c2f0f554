// braid0 extensions to the verbs API, exported by libbraid-verbs.so next
// to the libibverbs entry points it interposes. Plain C, so any ibverbs
// program can call them (resolve with dlsym to stay loadable without
// braid).
#ifndef BRAID_VERBS_H_
#define BRAID_VERBS_H_

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Counters of one braid0 context (its endpoint, and its live QPs summed).
struct braid_verbs_stats {
  uint64_t datagrams_sent;
  uint64_t datagrams_received;
  uint64_t retransmits;    // braid packets sent again (all causes)
  uint64_t messages_sent;  // verbs messages the endpoint delivered
  uint64_t messages_received;
  uint64_t malformed;  // inbound verbs messages that did not decode
  uint64_t rnr_naks_sent;
  uint64_t rnr_naks_received;
  uint64_t remote_access_errors;  // requests refused by this responder
                                  // (the three reasons below, summed)
  // Receive-side payload bytes (appended after the fields above):
  uint64_t bytes_placed;  // WRITE / WRITE_IMM / READ-response payload the
                          // endpoint placed straight into registered memory
  uint64_t bytes_copied;  // payload braid0 copied out of a reassembled
                          // message (SEND, multi-SGE READ responses, ...)
  uint64_t endpoint_bytes_placed;       // the endpoint's count of the same
  uint64_t endpoint_bytes_reassembled;  // bytes the endpoint copied into
                                        // message buffers (incl. headers)
  // Send side (appended after the fields above):
  uint64_t zero_copy_sends;      // WRs whose payload went from the registered
                                 // buffer without a copy (one SGE, >= 8 KiB)
  uint64_t zero_copy_in_flight;  // of those, still read by the endpoint (a
                                 // WR completes only once this is over)
  // Remote accesses refused, by reason (appended after the fields above):
  uint64_t remote_access_bad_key;        // no region with that rkey (in
                                         // the QP's PD)
  uint64_t remote_access_no_permission;  // QP or region lacks the flag
  uint64_t remote_access_out_of_bounds;  // range not inside the region
  // Appended after the fields above:
  uint64_t acks_sent;  // ACKs sent alone (no reply carried them)
};

// Fills the first `size` bytes of *out for a braid0 context; pass
// sizeof(*out). Fields are only ever appended to braid_verbs_stats, so a
// program built against an older header, whose struct is shorter, gets
// exactly the fields it knows and nothing is written past them. Returns 0,
// or EINVAL if `context` is not a braid0 context or `size` is not a
// positive multiple of 8.
int braid_verbs_query_stats_sized(struct ibv_context* context,
                                  struct braid_verbs_stats* out, size_t size);

// braid_verbs_query_stats_sized with this header's struct. (The exported
// symbol of this name, for programs built before the sized call existed,
// fills the fields up to remote_access_out_of_bounds only.)
static inline int braid_verbs_query_stats_current(
    struct ibv_context* context, struct braid_verbs_stats* out) {
  return braid_verbs_query_stats_sized(context, out, sizeof(*out));
}
#define braid_verbs_query_stats braid_verbs_query_stats_current

#ifdef __cplusplus
}
#endif

#endif  // BRAID_VERBS_H_

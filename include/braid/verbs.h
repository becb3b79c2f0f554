// braid0 extensions to the verbs API, exported by libbraid-verbs.so next
// to the libibverbs entry points it interposes. Plain C, so any ibverbs
// program can call them (resolve with dlsym to stay loadable without
// braid).
#ifndef BRAID_VERBS_H_
#define BRAID_VERBS_H_

#include <infiniband/verbs.h>
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
};

// Fills *out for a braid0 context. Returns 0, or EINVAL if `context` is not
// a braid0 context.
int braid_verbs_query_stats(struct ibv_context* context,
                            struct braid_verbs_stats* out);

#ifdef __cplusplus
}
#endif

#endif  // BRAID_VERBS_H_

// The endpoint's fi_ops_atomic table and the domain's fi_query_atomic
// (atomic_ops.cc).
#ifndef BRAID_LIBFABRIC_ATOMIC_OPS_H_
#define BRAID_LIBFABRIC_ATOMIC_OPS_H_

#include <rdma/fi_atomic.h>

namespace braid::libfabric {

fi_ops_atomic* AtomicOps();

// fi_query_atomic: 0 and the element size and largest count in *attr if
// the call family in `flags` (FI_FETCH_ATOMIC, FI_COMPARE_ATOMIC, or
// neither) offers `op` on `dt`; -FI_EOPNOTSUPP if not.
int QueryAtomic(fid_domain* domain, fi_datatype dt, fi_op op,
                fi_atomic_attr* attr, uint64_t flags);

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_ATOMIC_OPS_H_

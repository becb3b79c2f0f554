// The endpoint's fi_ops_rma table (rma_ops.cc).
#ifndef BRAID_LIBFABRIC_RMA_OPS_H_
#define BRAID_LIBFABRIC_RMA_OPS_H_

#include <rdma/fi_rma.h>

namespace braid::libfabric {

fi_ops_rma* RmaOps();

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_RMA_OPS_H_

// The function tables braid0 hands to libibverbs' inline wrappers:
// struct ibv_context_ops (ibv_post_send, ibv_poll_cq, ... are static
// inline and call through it), the verbs_context extensions
// (ibv_query_port, ibv_query_device_ex, ibv_create_qp_ex, ...), and the
// ibv_qp_ex work-request builder (ibv_wr_*).
#ifndef BRAID_VERBS_COMPAT_OPS_H_
#define BRAID_VERBS_COMPAT_OPS_H_

#include <infiniband/verbs.h>

namespace braid::verbs_compat {

// Fills the ops of a braid0 context.
void FillContextOps(verbs_context* vctx);
// Fills the ibv_wr_* builder of a braid0 QP (qp_ex.cc).
void FillQpExOps(ibv_qp_ex* qpx);
// Fills the extended-CQ poll functions of a braid0 CQ (ops.cc).
void FillCqExOps(ibv_cq_ex* cqx);

// Creates a QP from extended attributes (ibv_create_qp and
// ibv_create_qp_ex share it). Sets errno and returns nullptr on failure.
ibv_qp* CreateQp(ibv_context* ctx, ibv_qp_init_attr_ex* attr);

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_OPS_H_

// Which ibv_modify_qp calls are legal: the QP state machine and the
// attribute masks each transition requires and allows, per the InfiniBand
// specification (as real devices and the kernel's ib_modify_qp_is_ok
// enforce them). Pure functions, no state.
#ifndef BRAID_VERBS_COMPAT_QP_STATE_TABLE_H_
#define BRAID_VERBS_COMPAT_QP_STATE_TABLE_H_

#include <infiniband/verbs.h>

namespace braid::verbs_compat {

// Checks a modify of a QP of `type` in state `cur` with attribute `mask`
// (the next state is attr_state if IBV_QP_STATE is in mask, else cur).
// Returns true if the transition exists, every required attribute is in
// the mask and no attribute outside required + optional is.
bool ModifyIsAllowed(ibv_qp_type type, ibv_qp_state cur,
                     ibv_qp_state attr_state, int mask);

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_QP_STATE_TABLE_H_

#include "verbs_compat/qp_state_table.h"

namespace braid::verbs_compat {
namespace {

struct Rule {
  bool valid = false;
  int required = 0;
  int optional = 0;
};

constexpr int kRcSqdSqdOptional =
    IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_AV | IBV_QP_ACCESS_FLAGS |
    IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
    IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH |
    IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE | IBV_QP_CUR_STATE;

// Connected-QP (RC and UC) and UD attribute rules, as the kernel's
// ib_modify_qp_is_ok table has them. UC is RC without the attributes of
// acknowledgement, retry and RDMA READ / atomics.
constexpr int kUcSqdSqdOptional = IBV_QP_PKEY_INDEX | IBV_QP_AV |
                                  IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
                                  IBV_QP_PATH_MIG_STATE;

Rule RuleFor(ibv_qp_type type, ibv_qp_state cur, ibv_qp_state next) {
  const bool rc = type != IBV_QPT_UD;
  const bool uc = type == IBV_QPT_UC;
  Rule r;
  // To RESET or ERR from anywhere: only the state.
  if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) {
    r.valid = true;
    return r;
  }
  switch (cur) {
    case IBV_QPS_RESET:
      if (next == IBV_QPS_INIT) {
        r.valid = true;
        r.required = rc ? IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS
                        : IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
      }
      break;
    case IBV_QPS_INIT:
      if (next == IBV_QPS_INIT) {
        r.valid = true;
        r.optional = rc ? IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS
                        : IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
      } else if (next == IBV_QPS_RTR) {
        r.valid = true;
        if (rc) {
          r.required =
              IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
          if (!uc) {
            r.required |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
          }
          r.optional =
              IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
        } else {
          r.optional = IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
        }
      }
      break;
    case IBV_QPS_RTR:
      if (next == IBV_QPS_RTS) {
        r.valid = true;
        if (uc) {
          r.required = IBV_QP_SQ_PSN;
          r.optional = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH |
                       IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE;
        } else if (rc) {
          r.required = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
          r.optional = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH |
                       IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
                       IBV_QP_PATH_MIG_STATE;
        } else {
          r.required = IBV_QP_SQ_PSN;
          r.optional = IBV_QP_CUR_STATE | IBV_QP_QKEY;
        }
      }
      break;
    case IBV_QPS_RTS:
      if (next == IBV_QPS_RTS) {
        r.valid = true;
        r.optional = rc ? IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
                              IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
                              (uc ? 0 : IBV_QP_MIN_RNR_TIMER)
                        : IBV_QP_CUR_STATE | IBV_QP_QKEY;
      } else if (next == IBV_QPS_SQD) {
        r.valid = true;
        r.optional = IBV_QP_EN_SQD_ASYNC_NOTIFY;
      }
      break;
    case IBV_QPS_SQD:
      if (next == IBV_QPS_RTS) {
        r.valid = true;
        r.optional = rc ? IBV_QP_CUR_STATE | IBV_QP_ALT_PATH |
                              IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE |
                              (uc ? 0 : IBV_QP_MIN_RNR_TIMER)
                        : IBV_QP_CUR_STATE | IBV_QP_QKEY;
      } else if (next == IBV_QPS_SQD) {
        r.valid = true;
        r.optional = uc   ? kUcSqdSqdOptional
                     : rc ? kRcSqdSqdOptional
                          : IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
      }
      break;
    case IBV_QPS_SQE:
      if (next == IBV_QPS_RTS && (uc || !rc)) {
        r.valid = true;
        r.optional = uc ? IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS
                        : IBV_QP_CUR_STATE | IBV_QP_QKEY;
      }
      break;
    default:
      break;
  }
  return r;
}

}  // namespace

bool ModifyIsAllowed(ibv_qp_type type, ibv_qp_state cur,
                     ibv_qp_state attr_state, int mask) {
  if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD) {
    return false;
  }
  const ibv_qp_state next = (mask & IBV_QP_STATE) ? attr_state : cur;
  if (next < IBV_QPS_RESET || next > IBV_QPS_ERR) return false;
  const Rule r = RuleFor(type, cur, next);
  if (!r.valid) return false;
  const int attrs = mask & ~IBV_QP_STATE;
  if ((attrs & r.required) != r.required) return false;
  if (attrs & ~(r.required | r.optional)) return false;
  return true;
}

}  // namespace braid::verbs_compat

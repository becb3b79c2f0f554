#include "verbs_compat/wc_status.h"

namespace braid::verbs_compat {

ibv_wc_status WcStatus(WcCause cause, FailureCause transport) {
  switch (cause) {
    case WcCause::kSuccess:
      return IBV_WC_SUCCESS;
    case WcCause::kFlushed:
      return IBV_WC_WR_FLUSH_ERR;
    case WcCause::kLocalLength:
      return IBV_WC_LOC_LEN_ERR;
    case WcCause::kLocalProtection:
      return IBV_WC_LOC_PROT_ERR;
    case WcCause::kRemoteAccess:
      return IBV_WC_REM_ACCESS_ERR;
    case WcCause::kRemoteInvalidRequest:
      return IBV_WC_REM_INV_REQ_ERR;
    case WcCause::kRemoteOperation:
      return IBV_WC_REM_OP_ERR;
    case WcCause::kRnrRetryExceeded:
      return IBV_WC_RNR_RETRY_EXC_ERR;
    case WcCause::kAckTimeout:
      return IBV_WC_RETRY_EXC_ERR;
    case WcCause::kTransportFailure:
      // Whatever the endpoint's cause (the peer unreachable or restarted,
      // this context closing, or a refused send): the request was not
      // provably delivered, which is what a device reports when it gives
      // up re-sending.
      switch (transport) {
        case FailureCause::kNone:
        case FailureCause::kPeerUnreachable:
        case FailureCause::kPeerRestarted:
        case FailureCause::kClosed:
        case FailureCause::kPeerEvicted:
          return IBV_WC_RETRY_EXC_ERR;
      }
      return IBV_WC_RETRY_EXC_ERR;
    case WcCause::kUdSendRefused:
      return IBV_WC_GENERAL_ERR;
  }
  return IBV_WC_GENERAL_ERR;
}

}  // namespace braid::verbs_compat

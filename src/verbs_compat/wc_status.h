// Why a work request ended, and the one place that turns that into the
// IBV_WC_* status its work completion reports.
#ifndef BRAID_VERBS_COMPAT_WC_STATUS_H_
#define BRAID_VERBS_COMPAT_WC_STATUS_H_

#include <infiniband/verbs.h>

#include <cstdint>

#include "braid/completion.h"

namespace braid::verbs_compat {

// What ended a work request, as braid0 knows it (the IB spec's words in
// brackets are the status it reports; WcStatus is the mapping).
enum class WcCause : uint8_t {
  kSuccess,
  // The QP is in ERR: a WR outstanding when it entered ERR, or posted
  // after [flush].
  kFlushed,
  // Local length: a send longer than the QP or device allows, or a message
  // longer than the receive WR's SGEs [local length].
  kLocalLength,
  // Local protection: an SGE's lkey, bounds or access flags do not allow
  // the access, or a placed READ response was refused [local protection].
  kLocalProtection,
  // The responder NAKed: remote access (rkey, bounds, access flags)
  // [remote access], invalid request (a length or opcode it cannot take)
  // [remote invalid request], any other responder error [remote operation].
  kRemoteAccess,
  kRemoteInvalidRequest,
  kRemoteOperation,
  // The responder answered RNR NAKs more often than rnr_retry allows [RNR
  // retry exceeded].
  kRnrRetryExceeded,
  // The local ACK timeout: braid delivered the request, but the responder
  // sent no ACK, response or NAK within timeout x (retry_cnt + 1) [retry
  // exceeded].
  kAckTimeout,
  // The endpoint failed the request's message (kSendFailed, with its
  // braid::FailureCause), or refused an RC request's send for good (closed,
  // invalid) [retry exceeded, as a device that gave up re-sending].
  kTransportFailure,
  // The endpoint refused a UD send for good; UD has no retries to exceed
  // [general error].
  kUdSendRefused,
};

// The work completion status for `cause`. `transport`: the endpoint's
// cause of a kTransportFailure (kNone when the endpoint refused the send);
// ignored for other causes. Every status braid0 reports comes from here.
ibv_wc_status WcStatus(WcCause cause,
                       FailureCause transport = FailureCause::kNone);

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_WC_STATUS_H_

// Validation of user-supplied options, with messages that name the field.
#ifndef BRAID_ENDPOINT_OPTIONS_CHECK_H_
#define BRAID_ENDPOINT_OPTIONS_CHECK_H_

#include "absl/status/status.h"
#include "braid/options.h"
#include "braid/testing/impairment.h"

namespace braid::endpoint {

// InvalidArgument naming the first bad field of `p`, or OK.
absl::Status CheckProtocolOptions(const ProtocolOptions& p);
// Checks the protocol options and the endpoint/backend fields.
absl::Status CheckEndpointOptions(const EndpointOptions& o);
// InvalidArgument unless every probability of `i` is in [0, 1].
absl::Status CheckImpairments(const TestImpairments& i);

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_OPTIONS_CHECK_H_

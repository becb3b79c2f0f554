// Validation of SecurityOptions (include/braid/options.h) for the endpoint's
// option checks.
#ifndef BRAID_CRYPTO_SECURITY_OPTIONS_H_
#define BRAID_CRYPTO_SECURITY_OPTIONS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "braid/options.h"

namespace braid::crypto {

// Bounds of SecurityOptions::domain_key, bytes.
inline constexpr size_t kMinDomainKeyBytes = 16;
inline constexpr size_t kMaxDomainKeyBytes = 64;

// OK for mode kNone (the key is ignored) and for a secure mode with a key of
// kMinDomainKeyBytes..kMaxDomainKeyBytes; otherwise InvalidArgument naming
// "security.domain_key" and the size found.
absl::Status CheckSecurityOptions(const SecurityOptions& s);

}  // namespace braid::crypto

#endif  // BRAID_CRYPTO_SECURITY_OPTIONS_H_

#include "crypto/security_options.h"

#include "absl/strings/str_cat.h"

namespace braid {

absl::StatusOr<SecurityMode> ParseSecurityMode(absl::string_view s) {
  if (s == "none") return SecurityMode::kNone;
  if (s == "auth") return SecurityMode::kAuth;
  if (s == "encrypt") return SecurityMode::kEncrypt;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown security mode '", s, "' (expected none, auth or encrypt)"));
}

const char* SecurityModeName(SecurityMode m) {
  switch (m) {
    case SecurityMode::kNone:
      return "none";
    case SecurityMode::kAuth:
      return "auth";
    case SecurityMode::kEncrypt:
      return "encrypt";
  }
  return "unknown";
}

namespace crypto {

absl::Status CheckSecurityOptions(const SecurityOptions& s) {
  if (s.mode == SecurityMode::kNone) return absl::OkStatus();
  const size_t n = s.domain_key.size();
  if (n < kMinDomainKeyBytes || n > kMaxDomainKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "security.domain_key: ", n, " bytes; mode ", SecurityModeName(s.mode),
        " needs ", kMinDomainKeyBytes, "..", kMaxDomainKeyBytes, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace crypto
}  // namespace braid

// Tests for the security mode names and SecurityOptions validation.
#include "crypto/security_options.h"

#include <string>

#include "gtest/gtest.h"

namespace braid::crypto {
namespace {

TEST(SecurityOptionsTest, ModeNamesParseAndPrintBothWays) {
  for (SecurityMode m :
       {SecurityMode::kNone, SecurityMode::kAuth, SecurityMode::kEncrypt}) {
    absl::StatusOr<SecurityMode> parsed =
        ParseSecurityMode(SecurityModeName(m));
    ASSERT_TRUE(parsed.ok()) << SecurityModeName(m);
    EXPECT_EQ(*parsed, m);
  }
  EXPECT_STREQ(SecurityModeName(SecurityMode::kAuth), "auth");
}

TEST(SecurityOptionsTest, UnknownModeNameIsAnErrorListingTheChoices) {
  for (const char* bad : {"", "AUTH", "aead", "encrypt "}) {
    absl::StatusOr<SecurityMode> m = ParseSecurityMode(bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(m.status().message().find("none, auth or encrypt"),
              std::string::npos);
  }
}

TEST(SecurityOptionsTest, DefaultIsNoneAndNeedsNoKey) {
  SecurityOptions s;
  EXPECT_EQ(s.mode, SecurityMode::kNone);
  EXPECT_TRUE(CheckSecurityOptions(s).ok());
}

TEST(SecurityOptionsTest, SecureModesNeedAKeyOf16To64Bytes) {
  for (SecurityMode m : {SecurityMode::kAuth, SecurityMode::kEncrypt}) {
    SecurityOptions s;
    s.mode = m;
    for (size_t n : {size_t{0}, size_t{15}, size_t{65}}) {
      s.domain_key.assign(n, 'k');
      absl::Status st = CheckSecurityOptions(s);
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << n;
      EXPECT_NE(st.message().find("security.domain_key"), std::string::npos);
    }
    for (size_t n : {size_t{16}, size_t{32}, size_t{64}}) {
      s.domain_key.assign(n, 'k');
      EXPECT_TRUE(CheckSecurityOptions(s).ok()) << n;
    }
  }
}

}  // namespace
}  // namespace braid::crypto

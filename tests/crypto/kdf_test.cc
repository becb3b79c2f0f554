// Tests for the key derivation: RFC 5869 known answers prove the HKDF
// wiring; the rest pins which inputs change which key.
#include "crypto/kdf.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace braid::crypto {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes FromHex(const std::string& hex) {
  Bytes b;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    b.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return b;
}

const Bytes kDomainKey(32, 0x42);

TEST(KdfTest, HkdfMatchesRfc5869TestCase1) {
  const Bytes ikm(22, 0x0b);
  const Bytes salt = FromHex("000102030405060708090a0b0c");
  const Bytes info = FromHex("f0f1f2f3f4f5f6f7f8f9");
  Bytes okm(42);
  ASSERT_TRUE(Hkdf(ikm, salt, info, absl::MakeSpan(okm)).ok());
  EXPECT_EQ(okm, FromHex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db0"
                         "2d56ecc4c5bf34007208d5b887185865"));
}

TEST(KdfTest, HkdfMatchesRfc5869TestCase3WithoutSaltOrInfo) {
  const Bytes ikm(22, 0x0b);
  Bytes okm(42);
  ASSERT_TRUE(Hkdf(ikm, {}, {}, absl::MakeSpan(okm)).ok());
  EXPECT_EQ(okm, FromHex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec345"
                         "4e5f3c738d2d9d201395faa4b61a96c8"));
}

TEST(KdfTest, HkdfRefusesEmptyKeyAndImpossibleLengths) {
  Bytes out(16);
  EXPECT_EQ(Hkdf({}, {}, {}, absl::MakeSpan(out)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Hkdf(kDomainKey, {}, {}, {}).code(),
            absl::StatusCode::kInvalidArgument);
  Bytes huge(255 * 32 + 1);
  EXPECT_EQ(Hkdf(kDomainKey, {}, {}, absl::MakeSpan(huge)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KdfTest, PairKeyIsHkdfOfPairLabelAndBothIncarnationsBigEndian) {
  const uint64_t a = 0x0102030405060708, b = 0x1112131415161718;
  Bytes info = {'p', 'a', 'i', 'r'};
  for (uint64_t v : {a, b}) {
    for (int i = 7; i >= 0; --i)
      info.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  const Bytes salt = {'b', 'r', 'a', 'i', 'd', '-', 'v', '1'};
  KeyBytes want;
  ASSERT_TRUE(Hkdf(kDomainKey, salt, info, absl::MakeSpan(want)).ok());
  absl::StatusOr<KeyBytes> got = DerivePairKey(kDomainKey, a, b);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, want);
}

TEST(KdfTest, InitialKeyIsHkdfOfInitialLabel) {
  const Bytes salt = {'b', 'r', 'a', 'i', 'd', '-', 'v', '1'};
  const Bytes info = {'i', 'n', 'i', 't', 'i', 'a', 'l'};
  KeyBytes want;
  ASSERT_TRUE(Hkdf(kDomainKey, salt, info, absl::MakeSpan(want)).ok());
  absl::StatusOr<KeyBytes> got = DeriveInitialKey(kDomainKey);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, want);
}

TEST(KdfTest, EachDirectionIncarnationAndDomainGetsItsOwnKey) {
  const uint64_t a = 7, b = 9;
  const KeyBytes ab = *DerivePairKey(kDomainKey, a, b);
  EXPECT_EQ(*DerivePairKey(kDomainKey, a, b), ab);      // deterministic
  EXPECT_NE(*DerivePairKey(kDomainKey, b, a), ab);      // other direction
  EXPECT_NE(*DerivePairKey(kDomainKey, a, b + 1), ab);  // b restarted
  EXPECT_NE(*DerivePairKey(kDomainKey, a + 1, b), ab);  // a restarted
  const Bytes other_domain(32, 0x43);
  EXPECT_NE(*DerivePairKey(other_domain, a, b), ab);
  EXPECT_NE(*DeriveInitialKey(kDomainKey), ab);
  EXPECT_NE(*DeriveInitialKey(other_domain), *DeriveInitialKey(kDomainKey));
}

TEST(KdfTest, AsBytesViewsTheStringsBytes) {
  const std::string s(
      "\x00\xff"
      "ab",
      4);
  absl::Span<const uint8_t> b = AsBytes(s);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0], 0x00);
  EXPECT_EQ(b[1], 0xff);
  EXPECT_EQ(b.data(), reinterpret_cast<const uint8_t*>(s.data()));
}

}  // namespace
}  // namespace braid::crypto

// Tests for DirectGcm: the GCM specification's test vectors, and bit-for-bit
// agreement with EVP's AES-128-GCM (the reference) in both directions over
// every length up to several key-stream chunks, including tampering.
#include "crypto/direct_gcm.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "openssl/evp.h"

namespace braid::crypto {
namespace {

using Bytes = std::vector<uint8_t>;
using Nonce = std::array<uint8_t, DirectGcm::kNonceSize>;

Bytes Hex(absl::string_view hex) {
  const std::string raw = absl::HexStringToBytes(hex);
  return Bytes(raw.begin(), raw.end());
}

KeyBytes KeyFromHex(absl::string_view hex) {
  KeyBytes k{};
  const Bytes b = Hex(hex);
  std::copy(b.begin(), b.end(), k.begin());
  return k;
}

Nonce NonceFromHex(absl::string_view hex) {
  Nonce n{};
  const Bytes b = Hex(hex);
  std::copy(b.begin(), b.end(), n.begin());
  return n;
}

// EVP's AES-128-GCM, one shot: seals (enc) or opens `text` in place;
// returns false if opening fails.
bool Evp(bool enc, const KeyBytes& key, const Nonce& nonce, const Bytes& aad,
         Bytes& text, uint8_t tag[16]) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int out = 0;
  bool ok = EVP_CipherInit_ex(ctx, EVP_aes_128_gcm(), nullptr, key.data(),
                              nonce.data(), enc ? 1 : 0) == 1;
  if (ok && !enc) {
    ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag) == 1;
  }
  ok = ok && EVP_CipherUpdate(ctx, nullptr, &out, aad.data(),
                              static_cast<int>(aad.size())) == 1;
  if (ok && !text.empty()) {
    ok = EVP_CipherUpdate(ctx, text.data(), &out, text.data(),
                          static_cast<int>(text.size())) == 1;
  }
  uint8_t end[16];
  ok = ok && EVP_CipherFinal_ex(ctx, end, &out) == 1;
  if (ok && enc) {
    ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1;
  }
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

// McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 1-4
// (AES-128, 96-bit IV).
struct Vector {
  const char* key;
  const char* iv;
  const char* aad;
  const char* plain;
  const char* cipher;
  const char* tag;
};
constexpr Vector kVectors[] = {
    {"00000000000000000000000000000000", "000000000000000000000000", "", "", "",
     "58e2fccefa7e3061367f1d57a4e7455a"},
    {"00000000000000000000000000000000", "000000000000000000000000", "",
     "00000000000000000000000000000000", "0388dace60b6a392f328c2b971b2fe78",
     "ab6e47d42cec13bdf53a67b21257bddf"},
    {"feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888", "",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
     "4d5c2af327cd64a62cf35abd2ba6fab4"},
    {"feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
};

TEST(DirectGcmTest, MatchesTheSpecificationsTestVectors) {
  for (const Vector& v : kVectors) {
    SCOPED_TRACE(v.tag);
    absl::StatusOr<DirectGcm> g = DirectGcm::Create(KeyFromHex(v.key));
    ASSERT_TRUE(g.ok()) << g.status();
    const Nonce nonce = NonceFromHex(v.iv);
    const Bytes aad = Hex(v.aad);
    Bytes text = Hex(v.plain);
    uint8_t tag[16];
    ASSERT_TRUE(g->Seal(nonce, aad, absl::MakeSpan(text), tag));
    EXPECT_EQ(text, Hex(v.cipher));
    EXPECT_EQ(Bytes(tag, tag + 16), Hex(v.tag));
    ASSERT_TRUE(g->Open(nonce, aad, absl::MakeSpan(text), tag));
    EXPECT_EQ(text, Hex(v.plain));
  }
}

TEST(DirectGcmTest, AgreesWithEvpBothWaysAtEveryLength) {
  std::mt19937 rng(7);
  auto fill = [&rng](Bytes& b) {
    for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  };
  KeyBytes key;
  for (uint8_t& x : key) x = static_cast<uint8_t>(rng());
  absl::StatusOr<DirectGcm> g = DirectGcm::Create(key);
  ASSERT_TRUE(g.ok()) << g.status();
  // Lengths past two key-stream chunks (32 blocks each), every residue.
  for (size_t len = 0; len <= 1100; len += (len < 80 ? 1 : 13)) {
    SCOPED_TRACE(len);
    Nonce nonce;
    for (uint8_t& x : nonce) x = static_cast<uint8_t>(rng());
    Bytes aad(len % 45), plain(len);
    fill(aad);
    fill(plain);

    Bytes direct = plain, evp = plain;
    uint8_t direct_tag[16], evp_tag[16];
    ASSERT_TRUE(g->Seal(nonce, aad, absl::MakeSpan(direct), direct_tag));
    ASSERT_TRUE(Evp(true, key, nonce, aad, evp, evp_tag));
    ASSERT_EQ(direct, evp);
    ASSERT_EQ(Bytes(direct_tag, direct_tag + 16), Bytes(evp_tag, evp_tag + 16));

    // EVP opens what DirectGcm sealed and the other way round.
    ASSERT_TRUE(Evp(false, key, nonce, aad, direct, direct_tag));
    ASSERT_EQ(direct, plain);
    ASSERT_TRUE(g->Open(nonce, aad, absl::MakeSpan(evp), evp_tag));
    ASSERT_EQ(evp, plain);
  }
}

TEST(DirectGcmTest, AnyChangeFailsOpen) {
  KeyBytes key{};
  key[0] = 1;
  absl::StatusOr<DirectGcm> g = DirectGcm::Create(key);
  ASSERT_TRUE(g.ok());
  const Nonce nonce{9};
  const Bytes aad = {1, 2, 3, 4, 5};
  const Bytes plain(70, 0x5a);
  Bytes sealed = plain;
  uint8_t tag[16];
  ASSERT_TRUE(g->Seal(nonce, aad, absl::MakeSpan(sealed), tag));

  auto opens = [&](const Nonce& n, const Bytes& a, Bytes text,
                   const uint8_t* t) {
    return g->Open(n, a, absl::MakeSpan(text), t);
  };
  EXPECT_TRUE(opens(nonce, aad, sealed, tag));
  for (size_t i = 0; i < sealed.size(); ++i) {
    Bytes c = sealed;
    c[i] ^= 0x10;
    EXPECT_FALSE(opens(nonce, aad, c, tag)) << "ciphertext byte " << i;
  }
  for (size_t i = 0; i < aad.size(); ++i) {
    Bytes a = aad;
    a[i] ^= 1;
    EXPECT_FALSE(opens(nonce, a, sealed, tag)) << "aad byte " << i;
  }
  for (size_t i = 0; i < 16; ++i) {
    uint8_t t[16];
    std::copy(tag, tag + 16, t);
    t[i] ^= 0x80;
    EXPECT_FALSE(opens(nonce, aad, sealed, t)) << "tag byte " << i;
  }
  Nonce other = nonce;
  other[11] ^= 1;
  EXPECT_FALSE(opens(other, aad, sealed, tag));
  // Another key.
  KeyBytes key2 = key;
  key2[15] ^= 1;
  absl::StatusOr<DirectGcm> g2 = DirectGcm::Create(key2);
  ASSERT_TRUE(g2.ok());
  Bytes copy = sealed;
  EXPECT_FALSE(g2->Open(nonce, aad, absl::MakeSpan(copy), tag));
  // The key still works after failures.
  EXPECT_TRUE(opens(nonce, aad, sealed, tag));
}

TEST(DirectGcmTest, EmptyRefusesAndMovedFromIsEmpty) {
  DirectGcm empty;
  EXPECT_TRUE(empty.empty());
  Bytes text(16);
  uint8_t tag[16] = {};
  EXPECT_FALSE(empty.Seal(Nonce{}, {}, absl::MakeSpan(text), tag));
  EXPECT_FALSE(empty.Open(Nonce{}, {}, absl::MakeSpan(text), tag));

  absl::StatusOr<DirectGcm> g = DirectGcm::Create(KeyBytes{});
  ASSERT_TRUE(g.ok());
  DirectGcm moved = *std::move(g);
  EXPECT_FALSE(moved.empty());
  EXPECT_TRUE(moved.Seal(Nonce{}, {}, absl::MakeSpan(text), tag));
}

}  // namespace
}  // namespace braid::crypto

#include "crypto/kdf.h"

#include <cstring>
#include <memory>

#include "openssl/core_names.h"
#include "openssl/crypto.h"
#include "openssl/kdf.h"
#include "openssl/params.h"

namespace braid::crypto {
namespace {

constexpr size_t kSha256Bytes = 32;
constexpr uint8_t kSalt[] = {'b', 'r', 'a', 'i', 'd', '-', 'v', '1'};
constexpr uint8_t kPairLabel[] = {'p', 'a', 'i', 'r'};
constexpr uint8_t kInitialLabel[] = {'i', 'n', 'i', 't', 'i', 'a', 'l'};

struct KdfDeleter {
  void operator()(EVP_KDF* k) const { EVP_KDF_free(k); }
  void operator()(EVP_KDF_CTX* c) const { EVP_KDF_CTX_free(c); }
};

void PutBigEndian64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}

// OSSL_PARAM wants non-const pointers; EVP_KDF_derive only reads them.
void* Mutable(absl::Span<const uint8_t> s) {
  return const_cast<uint8_t*>(s.data());
}

absl::StatusOr<KeyBytes> DeriveKey(absl::Span<const uint8_t> domain_key,
                                   absl::Span<const uint8_t> info) {
  KeyBytes key;
  absl::Status s = Hkdf(domain_key, kSalt, info, absl::MakeSpan(key));
  if (!s.ok()) return s;
  return key;
}

}  // namespace

absl::Status Hkdf(absl::Span<const uint8_t> ikm, absl::Span<const uint8_t> salt,
                  absl::Span<const uint8_t> info, absl::Span<uint8_t> out) {
  if (ikm.empty()) return absl::InvalidArgumentError("hkdf: empty key");
  if (out.empty() || out.size() > 255 * kSha256Bytes) {
    return absl::InvalidArgumentError("hkdf: output length not in 1..8160");
  }
  std::unique_ptr<EVP_KDF, KdfDeleter> kdf(
      EVP_KDF_fetch(nullptr, OSSL_KDF_NAME_HKDF, nullptr));
  if (kdf == nullptr) return absl::InternalError("hkdf: EVP_KDF_fetch failed");
  std::unique_ptr<EVP_KDF_CTX, KdfDeleter> ctx(EVP_KDF_CTX_new(kdf.get()));
  if (ctx == nullptr)
    return absl::InternalError("hkdf: EVP_KDF_CTX_new failed");
  char digest[] = "SHA256";
  OSSL_PARAM params[5];
  OSSL_PARAM* p = params;
  *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, Mutable(ikm),
                                           ikm.size());
  // An absent salt is HKDF's default (a hash length of zeros); OpenSSL
  // rejects a zero-length salt parameter, so leave it out instead.
  if (!salt.empty()) {
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, Mutable(salt),
                                             salt.size());
  }
  if (!info.empty()) {
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, Mutable(info),
                                             info.size());
  }
  *p = OSSL_PARAM_construct_end();
  if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1) {
    OPENSSL_cleanse(out.data(), out.size());
    return absl::InternalError("hkdf: EVP_KDF_derive failed");
  }
  return absl::OkStatus();
}

absl::StatusOr<KeyBytes> DerivePairKey(absl::Span<const uint8_t> domain_key,
                                       uint64_t src, uint64_t dst) {
  uint8_t info[sizeof(kPairLabel) + 16];
  std::memcpy(info, kPairLabel, sizeof(kPairLabel));
  PutBigEndian64(info + sizeof(kPairLabel), src);
  PutBigEndian64(info + sizeof(kPairLabel) + 8, dst);
  return DeriveKey(domain_key, info);
}

absl::StatusOr<KeyBytes> DeriveInitialKey(
    absl::Span<const uint8_t> domain_key) {
  return DeriveKey(domain_key, kInitialLabel);
}

}  // namespace braid::crypto

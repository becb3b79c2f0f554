#include "crypto/protector.h"

#include <cstring>

#include "openssl/core_names.h"
#include "openssl/evp.h"
#include "openssl/params.h"

namespace braid::crypto {
namespace {

// The header of `datagram` (at least kMinProtectedDatagram bytes) if it is
// well formed, names `key`'s kind, and `key` is made for `use`.
bool HeaderSuits(const PacketKey& key, PacketKey::Use use,
                 absl::Span<const uint8_t> datagram, SecurityHeader* h) {
  if (key.empty() || key.use() != use || !ParseSecurityHeader(datagram, h)) {
    return false;
  }
  return h->initial_key() == (key.kind() == PacketKey::Kind::kInitial);
}

// Bytes before the frames that GCM authenticates without encrypting:
// everything in kAuth, the preamble and header in kEncrypt.
size_t AadBytes(SecurityMode mode, size_t before_tag) {
  return mode == SecurityMode::kAuth ? before_tag : kProtectedFramesOffset;
}

// EVP's AES-GCM over the `aad` bytes at p (authenticated) and the
// [aad, len) bytes after them (sealed in place), the tag at p + len: the
// path for plaintexts longer than kDirectGcmMaxPlaintext.
bool EvpSeal(EVP_CIPHER_CTX* ctx, const std::array<uint8_t, 12>& nonce,
             uint8_t* p, size_t aad, size_t len) {
  int out = 0;
  return EVP_EncryptInit_ex2(ctx, nullptr, nullptr, nonce.data(), nullptr) ==
             1 &&
         EVP_EncryptUpdate(ctx, nullptr, &out, p, static_cast<int>(aad)) == 1 &&
         (len == aad || EVP_EncryptUpdate(ctx, p + aad, &out, p + aad,
                                          static_cast<int>(len - aad)) == 1) &&
         EVP_EncryptFinal_ex(ctx, p + len, &out) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, kTagSize, p + len) ==
             1;
}

// EvpSeal's inverse: opens in place, true iff the tag at p + len matches.
bool EvpOpen(EVP_CIPHER_CTX* ctx, const std::array<uint8_t, 12>& nonce,
             uint8_t* p, size_t aad, size_t len) {
  uint8_t tag_bytes[kTagSize];
  std::memcpy(tag_bytes, p + len, kTagSize);
  OSSL_PARAM tag[] = {OSSL_PARAM_construct_octet_string(
                          OSSL_CIPHER_PARAM_AEAD_TAG, tag_bytes, kTagSize),
                      OSSL_PARAM_construct_end()};
  int out = 0;
  return EVP_DecryptInit_ex2(ctx, nullptr, nullptr, nonce.data(), nullptr) ==
             1 &&
         EVP_CIPHER_CTX_set_params(ctx, tag) == 1 &&
         EVP_DecryptUpdate(ctx, nullptr, &out, p, static_cast<int>(aad)) == 1 &&
         (len == aad || EVP_DecryptUpdate(ctx, p + aad, &out, p + aad,
                                          static_cast<int>(len - aad)) == 1) &&
         EVP_DecryptFinal_ex(ctx, p + len, &out) == 1;
}

}  // namespace

size_t Seal(SecurityMode mode, PacketKey& key, absl::Span<uint8_t> datagram,
            size_t len) {
  SecurityHeader h;
  if (mode == SecurityMode::kNone || len < kProtectedFramesOffset ||
      datagram.size() < len + kTagSize ||
      !HeaderSuits(key, PacketKey::Use::kSeal, datagram.first(len + kTagSize),
                   &h)) {
    return 0;
  }
  const std::array<uint8_t, 12> nonce = NonceFor(h);
  uint8_t* p = datagram.data();
  const size_t aad = AadBytes(mode, len);
  const bool sealed =
      len - aad <= kDirectGcmMaxPlaintext
          ? key.direct().Seal(nonce, {p, aad}, {p + aad, len - aad}, p + len)
          : EvpSeal(key.context(), nonce, p, aad, len);
  return sealed ? len + kTagSize : 0;
}

bool Open(SecurityMode mode, PacketKey& key, absl::Span<uint8_t> datagram,
          size_t* frames_len) {
  SecurityHeader h;
  if (mode == SecurityMode::kNone ||
      !HeaderSuits(key, PacketKey::Use::kOpen, datagram, &h)) {
    return false;
  }
  const std::array<uint8_t, 12> nonce = NonceFor(h);
  uint8_t* p = datagram.data();
  const size_t len = datagram.size() - kTagSize;
  const size_t aad = AadBytes(mode, len);
  const bool opened =
      len - aad <= kDirectGcmMaxPlaintext
          ? key.direct().Open(nonce, {p, aad}, {p + aad, len - aad}, p + len)
          : EvpOpen(key.context(), nonce, p, aad, len);
  if (!opened) return false;
  *frames_len = len - kProtectedFramesOffset;
  return true;
}

}  // namespace braid::crypto

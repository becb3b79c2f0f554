#include "crypto/packet_key.h"

#include "openssl/crypto.h"
#include "openssl/evp.h"

namespace braid::crypto {
namespace {

struct CipherDeleter {
  void operator()(EVP_CIPHER* c) const { EVP_CIPHER_free(c); }
};

}  // namespace

void PacketKey::CtxDeleter::operator()(EVP_CIPHER_CTX* c) const {
  EVP_CIPHER_CTX_free(c);  // also wipes the key schedule
}

absl::StatusOr<PacketKey> PacketKey::Create(Kind kind, const KeyBytes& key) {
  std::unique_ptr<EVP_CIPHER, CipherDeleter> cipher(
      EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr));
  if (cipher == nullptr) {
    return absl::InternalError("packet key: libcrypto has no AES-128-GCM");
  }
  PacketKey k;
  k.kind_ = kind;
  k.seal_.reset(EVP_CIPHER_CTX_new());
  k.open_.reset(EVP_CIPHER_CTX_new());
  if (k.seal_ == nullptr || k.open_ == nullptr ||
      EVP_EncryptInit_ex2(k.seal_.get(), cipher.get(), key.data(), nullptr,
                          nullptr) != 1 ||
      EVP_DecryptInit_ex2(k.open_.get(), cipher.get(), key.data(), nullptr,
                          nullptr) != 1) {
    return absl::InternalError("packet key: AES-128-GCM setup failed");
  }
  return k;
}

absl::StatusOr<PeerKeys> MakePeerKeys(absl::Span<const uint8_t> domain_key,
                                      uint64_t local, uint64_t remote) {
  absl::StatusOr<KeyBytes> tx = DerivePairKey(domain_key, local, remote);
  if (!tx.ok()) return tx.status();
  absl::StatusOr<KeyBytes> rx = DerivePairKey(domain_key, remote, local);
  if (!rx.ok()) return rx.status();
  PeerKeys keys;
  absl::StatusOr<PacketKey> t = PacketKey::Create(PacketKey::Kind::kPair, *tx);
  absl::StatusOr<PacketKey> r = PacketKey::Create(PacketKey::Kind::kPair, *rx);
  OPENSSL_cleanse(tx->data(), tx->size());
  OPENSSL_cleanse(rx->data(), rx->size());
  if (!t.ok()) return t.status();
  if (!r.ok()) return r.status();
  keys.tx = *std::move(t);
  keys.rx = *std::move(r);
  return keys;
}

absl::StatusOr<PacketKey> MakeInitialKey(absl::Span<const uint8_t> domain_key) {
  absl::StatusOr<KeyBytes> key = DeriveInitialKey(domain_key);
  if (!key.ok()) return key.status();
  absl::StatusOr<PacketKey> k =
      PacketKey::Create(PacketKey::Kind::kInitial, *key);
  OPENSSL_cleanse(key->data(), key->size());
  return k;
}

}  // namespace braid::crypto

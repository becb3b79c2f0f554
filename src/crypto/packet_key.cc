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

absl::StatusOr<PacketKey> PacketKey::Create(Kind kind, Use use,
                                            const KeyBytes& key) {
  std::unique_ptr<EVP_CIPHER, CipherDeleter> cipher(
      EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr));
  if (cipher == nullptr) {
    return absl::InternalError("packet key: libcrypto has no AES-128-GCM");
  }
  PacketKey k;
  k.kind_ = kind;
  k.use_ = use;
  k.ctx_.reset(EVP_CIPHER_CTX_new());
  if (k.ctx_ == nullptr ||
      EVP_CipherInit_ex2(k.ctx_.get(), cipher.get(), key.data(), nullptr,
                         use == Use::kSeal ? 1 : 0, nullptr) != 1) {
    return absl::InternalError("packet key: AES-128-GCM setup failed");
  }
  absl::StatusOr<DirectGcm> direct = DirectGcm::Create(key);
  if (!direct.ok()) return direct.status();
  k.direct_ = *std::move(direct);
  return k;
}

absl::StatusOr<PeerKeys> MakePeerKeys(absl::Span<const uint8_t> domain_key,
                                      uint64_t local, uint64_t remote) {
  absl::StatusOr<KeyBytes> tx = DerivePairKey(domain_key, local, remote);
  if (!tx.ok()) return tx.status();
  absl::StatusOr<KeyBytes> rx = DerivePairKey(domain_key, remote, local);
  if (!rx.ok()) return rx.status();
  using K = PacketKey;
  absl::StatusOr<K> t = K::Create(K::Kind::kPair, K::Use::kSeal, *tx);
  absl::StatusOr<K> r = K::Create(K::Kind::kPair, K::Use::kOpen, *rx);
  OPENSSL_cleanse(tx->data(), tx->size());
  OPENSSL_cleanse(rx->data(), rx->size());
  if (!t.ok()) return t.status();
  if (!r.ok()) return r.status();
  return PeerKeys{*std::move(t), *std::move(r)};
}

absl::StatusOr<InitialKeys> MakeInitialKeys(
    absl::Span<const uint8_t> domain_key) {
  absl::StatusOr<KeyBytes> key = DeriveInitialKey(domain_key);
  if (!key.ok()) return key.status();
  using K = PacketKey;
  absl::StatusOr<K> s = K::Create(K::Kind::kInitial, K::Use::kSeal, *key);
  absl::StatusOr<K> o = K::Create(K::Kind::kInitial, K::Use::kOpen, *key);
  OPENSSL_cleanse(key->data(), key->size());
  if (!s.ok()) return s.status();
  if (!o.ok()) return o.status();
  return InitialKeys{*std::move(s), *std::move(o)};
}

}  // namespace braid::crypto

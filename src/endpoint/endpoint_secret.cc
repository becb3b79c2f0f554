#include "endpoint/endpoint_secret.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <sys/random.h>

#include <cstring>
#include <random>

namespace braid::endpoint {
namespace {

// family, port, ip, and the QP number's high byte for a UD queue pair.
constexpr size_t kAddrBytes = 1 + 2 + 16 + 1;

// Writes the address's identity bytes at `p` (at most kAddrBytes); returns
// the bytes written.
size_t PutAddr(const NetAddr& a, uint8_t* p) {
  p[0] = static_cast<uint8_t>(a.family);
  p[1] = static_cast<uint8_t>(a.port >> 8);
  p[2] = static_cast<uint8_t>(a.port);
  std::memcpy(p + 3, a.ip.data(), a.ip.size());
  if (a.family != NetAddr::Family::kIbUd) return kAddrBytes - 1;
  p[kAddrBytes - 1] = a.qpn_hi;
  return kAddrBytes;
}

size_t Put64(uint64_t v, uint8_t* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
  return 8;
}

EVP_MAC_CTX* NewSipHash(const uint8_t* key, size_t key_len) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "SIPHASH", nullptr);
  if (mac == nullptr) return nullptr;
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  EVP_MAC_free(mac);  // the context holds its own reference
  if (ctx == nullptr) return nullptr;
  size_t out = 8;
  OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &out),
                         OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(ctx, key, key_len, params) != 1) {
    EVP_MAC_CTX_free(ctx);
    return nullptr;
  }
  return ctx;
}

}  // namespace

EndpointSecret::Key EndpointSecret::RandomKey() {
  Key k{};
  size_t got = 0;
  while (got < k.size()) {
    const ssize_t n = getrandom(k.data() + got, k.size() - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  if (got < k.size() && RAND_bytes(k.data(), static_cast<int>(k.size())) != 1) {
    // No kernel entropy and no OpenSSL DRBG: the best left.
    std::random_device rd;
    for (auto& b : k) b = static_cast<uint8_t>(rd());
  }
  return k;
}

absl::Status EndpointSecret::CheckAvailable() {
  const Key k{};
  EVP_MAC_CTX* ctx = NewSipHash(k.data(), k.size());
  if (ctx == nullptr) {
    return absl::UnavailableError(
        "OpenSSL libcrypto provides no SIPHASH MAC (EVP_MAC_fetch failed): "
        "braid needs OpenSSL 3 with its default provider");
  }
  EVP_MAC_CTX_free(ctx);
  return absl::OkStatus();
}

EndpointSecret::EndpointSecret(const Key& key)
    : ctx_(NewSipHash(key.data(), key.size())) {}

EndpointSecret::~EndpointSecret() { EVP_MAC_CTX_free(ctx_); }

uint64_t EndpointSecret::Prf(absl::Span<const uint8_t> in) const {
  uint8_t out[8] = {};
  size_t out_len = 0;
  // Re-initialising with no key keeps the key set at construction.
  if (ctx_ == nullptr || EVP_MAC_init(ctx_, nullptr, 0, nullptr) != 1 ||
      EVP_MAC_update(ctx_, in.data(), in.size()) != 1 ||
      EVP_MAC_final(ctx_, out, &out_len, sizeof(out)) != 1 || out_len != 8) {
    // Endpoint::Open checked CheckAvailable; a failure here is a broken
    // libcrypto. 0 matches no incarnation and no nonce we accept.
    return 0;
  }
  uint64_t v = 0;
  for (uint8_t b : out) v = (v << 8) | b;
  return v;
}

uint64_t EndpointSecret::PairIncarnation(uint64_t incarnation,
                                         const NetAddr& peer) const {
  uint8_t in[1 + 8 + kAddrBytes];
  size_t n = 0;
  in[n++] = 'I';
  n += Put64(incarnation, in + n);
  n += PutAddr(peer, in + n);
  const uint64_t v = Prf(absl::MakeConstSpan(in, n));
  return v != 0 ? v : 1;
}

uint64_t EndpointSecret::ChallengeNonce(uint64_t epoch, uint64_t our_inc,
                                        const NetAddr& peer, uint64_t claimed,
                                        uint8_t kind) const {
  uint8_t in[2 + 8 + 8 + 8 + kAddrBytes];
  size_t n = 0;
  in[n++] = 'C';
  in[n++] = kind;
  n += Put64(epoch, in + n);
  n += Put64(our_inc, in + n);
  n += Put64(claimed, in + n);
  n += PutAddr(peer, in + n);
  return Prf(absl::MakeConstSpan(in, n));
}

}  // namespace braid::endpoint

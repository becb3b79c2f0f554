#include "crypto/direct_gcm.h"

#include <algorithm>
#include <cstring>

#include "openssl/crypto.h"
#include "openssl/evp.h"
#include "openssl/modes.h"

namespace braid::crypto {

// `ecb` encrypts whole blocks; `gcm` holds GHASH's key and the running
// tag state and calls back into Block / Ctr32 with this State as the key.
// A failed ECB call (never expected: whole blocks, no padding) sets
// `failed`, which the caller checks after the GCM calls.
struct DirectGcmState {
  EVP_CIPHER_CTX* ecb = nullptr;
  GCM128_CONTEXT* gcm = nullptr;
  bool failed = false;
};

void DirectGcm::StateDeleter::operator()(DirectGcmState* s) const {
  if (s->gcm != nullptr) CRYPTO_gcm128_release(s->gcm);  // wipes H
  EVP_CIPHER_CTX_free(s->ecb);  // wipes the key schedule
  delete s;
}

namespace {

// Encrypts `len` bytes (whole blocks) at `p` in place.
void EncryptBlocks(DirectGcmState* s, uint8_t* p, size_t len) {
  int out = 0;
  if (EVP_EncryptUpdate(s->ecb, p, &out, p, static_cast<int>(len)) != 1 ||
      static_cast<size_t>(out) != len) {
    s->failed = true;
  }
}

uint32_t LoadBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | p[3];
}

void StoreBe32(uint32_t v, uint8_t* p) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// libcrypto's block128_f: one AES block.
void Block(const unsigned char in[16], unsigned char out[16], const void* key) {
  auto* s = static_cast<DirectGcmState*>(const_cast<void*>(key));
  if (in != out) std::memcpy(out, in, 16);
  EncryptBlocks(s, out, 16);
}

// libcrypto's ctr128_f: `blocks` whole blocks of CTR mode from counter
// block `ivec`, whose last 32 bits (big-endian) count; ivec is not updated.
// The key stream is made up to kChunk blocks at a time, by one ECB call.
void Ctr32(const unsigned char* in, unsigned char* out, size_t blocks,
           const void* key, const unsigned char ivec[16]) {
  constexpr size_t kChunk = 32;
  auto* s = static_cast<DirectGcmState*>(const_cast<void*>(key));
  alignas(16) uint8_t stream[kChunk * 16];
  uint32_t counter = LoadBe32(ivec + 12);
  while (blocks > 0) {
    const size_t n = std::min(blocks, kChunk);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(stream + 16 * i, ivec, 12);
      StoreBe32(counter++, stream + 16 * i + 12);
    }
    EncryptBlocks(s, stream, 16 * n);
    for (size_t j = 0; j < 16 * n; j += 8) {  // whole blocks: words
      uint64_t a, k;
      std::memcpy(&a, in + j, 8);
      std::memcpy(&k, stream + j, 8);
      a ^= k;
      std::memcpy(out + j, &a, 8);
    }
    in += 16 * n;
    out += 16 * n;
    blocks -= n;
  }
  OPENSSL_cleanse(stream, sizeof(stream));
}

}  // namespace

DirectGcm::~DirectGcm() = default;

absl::StatusOr<DirectGcm> DirectGcm::Create(const KeyBytes& key) {
  EVP_CIPHER* cipher = EVP_CIPHER_fetch(nullptr, "AES-128-ECB", nullptr);
  if (cipher == nullptr) {
    return absl::InternalError("direct GCM: libcrypto has no AES-128-ECB");
  }
  DirectGcm g;
  g.state_.reset(new DirectGcmState);
  DirectGcmState& s = *g.state_;
  s.ecb = EVP_CIPHER_CTX_new();
  const bool keyed =
      s.ecb != nullptr &&
      EVP_EncryptInit_ex2(s.ecb, cipher, key.data(), nullptr, nullptr) == 1 &&
      EVP_CIPHER_CTX_set_padding(s.ecb, 0) == 1;
  EVP_CIPHER_free(cipher);
  if (!keyed)
    return absl::InternalError("direct GCM: AES-128-ECB setup failed");
  s.gcm = CRYPTO_gcm128_new(&s, Block);  // computes H = E(K, 0)
  if (s.gcm == nullptr || s.failed) {
    return absl::InternalError("direct GCM: GCM setup failed");
  }
  return g;
}

namespace {

// Runs GCM over `aad` and `text` (encrypting or decrypting it in place)
// under `nonce`, up to the tag. False if libcrypto refused.
bool Crypt(DirectGcmState& s, const std::array<uint8_t, 12>& nonce,
           absl::Span<const uint8_t> aad, absl::Span<uint8_t> text,
           bool encrypt) {
  s.failed = false;
  CRYPTO_gcm128_setiv(s.gcm, nonce.data(), nonce.size());
  if (CRYPTO_gcm128_aad(s.gcm, aad.data(), aad.size()) != 0) return false;
  if (text.empty()) return true;
  uint8_t* t = text.data();
  return (encrypt ? CRYPTO_gcm128_encrypt_ctr32(s.gcm, t, t, text.size(), Ctr32)
                  : CRYPTO_gcm128_decrypt_ctr32(s.gcm, t, t, text.size(),
                                                Ctr32)) == 0;
}

}  // namespace

bool DirectGcm::Seal(const std::array<uint8_t, kNonceSize>& nonce,
                     absl::Span<const uint8_t> aad, absl::Span<uint8_t> text,
                     uint8_t tag[kTagSize]) {
  if (state_ == nullptr || !Crypt(*state_, nonce, aad, text, true)) {
    return false;
  }
  CRYPTO_gcm128_tag(state_->gcm, tag, kTagSize);
  return !state_->failed;
}

bool DirectGcm::Open(const std::array<uint8_t, kNonceSize>& nonce,
                     absl::Span<const uint8_t> aad, absl::Span<uint8_t> text,
                     const uint8_t tag[kTagSize]) {
  if (state_ == nullptr || !Crypt(*state_, nonce, aad, text, false)) {
    return false;
  }
  // Constant-time compare (CRYPTO_memcmp); 0 = the tag matches.
  const bool match = CRYPTO_gcm128_finish(state_->gcm, tag, kTagSize) == 0;
  return match && !state_->failed;
}

}  // namespace braid::crypto

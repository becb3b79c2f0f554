// Cost of packet protection per datagram: Seal alone and Seal + Open (what
// one datagram costs its sender plus its receiver) in the none, auth and
// encrypt modes, and the per-peer key setup. `s_per_byte` is the time per
// byte of datagram (displayed as e.g. 150p = 0.15 ns per byte).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "crypto/direct_gcm.h"
#include "crypto/packet_key.h"
#include "crypto/protector.h"
#include "crypto/security_header.h"
#include "openssl/evp.h"
#include "wire/frames.h"

namespace braid::crypto {
namespace {

const std::string kDomainKey(32, 'd');
constexpr uint64_t kA = 0x1111222233334444;
constexpr uint64_t kB = 0x5555666677778888;

void SetCounters(benchmark::State& state, size_t bytes) {
  const double n = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(n * bytes));
  state.counters["s_per_byte"] = benchmark::Counter(
      n * static_cast<double>(bytes),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Endpoint A sealing datagrams of one size to B, in the benchmark's mode.
// In mode none there is nothing to seal or open (the datagram goes as it
// is), so each step costs nothing beyond the loop.
class Sender {
 public:
  explicit Sender(const benchmark::State& state)
      : mode_(static_cast<SecurityMode>(state.range(0))),
        total_(static_cast<size_t>(state.range(1))),
        bytes_(total_ + kTagSize, 0x5a),
        a_(*MakePeerKeys(AsBytes(kDomainKey), kA, kB)),
        b_(*MakePeerKeys(AsBytes(kDomainKey), kB, kA)) {
    wire::WritePreamble(4791, absl::MakeSpan(bytes_));
  }

  size_t total() const { return total_; }

  // Writes the next header and seals the datagram; returns its length.
  size_t SealNext() {
    if (mode_ == SecurityMode::kNone) {
      benchmark::DoNotOptimize(bytes_.data());
      benchmark::ClobberMemory();
      return total_;
    }
    WriteSecurityHeader({kA, kB, ++pn_}, absl::MakeSpan(bytes_));
    return Seal(mode_, a_.tx, absl::MakeSpan(bytes_), total_ - kTagSize);
  }

  // B opens what SealNext sealed.
  bool OpenAtB(size_t len) {
    if (mode_ == SecurityMode::kNone) return len == total_;
    size_t frames = 0;
    return Open(mode_, b_.rx, absl::MakeSpan(bytes_).first(len), &frames);
  }

 private:
  SecurityMode mode_;
  size_t total_;  // datagram bytes in all, tag included
  std::vector<uint8_t> bytes_;
  PeerKeys a_;
  PeerKeys b_;
  uint64_t pn_ = 0;
};

void BM_Seal(benchmark::State& state) {
  Sender s(state);
  for (auto _ : state) benchmark::DoNotOptimize(s.SealNext());
  SetCounters(state, s.total());
}

void BM_SealOpen(benchmark::State& state) {
  Sender s(state);
  for (auto _ : state) {
    if (!s.OpenAtB(s.SealNext())) {
      state.SkipWithError("Open failed");
      break;
    }
  }
  SetCounters(state, s.total());
}

void DatagramArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"mode", "bytes"});
  for (int mode : {0, 1, 2}) {
    for (int bytes : {64, 1472, 8972}) b->Args({mode, bytes});
  }
}
BENCHMARK(BM_Seal)->Apply(DatagramArgs);
BENCHMARK(BM_SealOpen)->Apply(DatagramArgs);

// The two AES-128-GCM implementations the protector chooses between
// (kDirectGcmMaxPlaintext), sealing and opening `bytes` of plaintext after
// 24 bytes of associated data (encrypt mode's preamble and header) with a
// context keyed once: DirectGcm, and EVP as protector.cc drives it (nonce
// set per datagram, tag through the ctrl / params interface).
void BM_GcmDirect(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  absl::StatusOr<DirectGcm> g = DirectGcm::Create(KeyBytes{1, 2, 3});
  std::vector<uint8_t> aad(24, 7), text(n, 0x5a);
  std::array<uint8_t, 12> nonce{};
  uint8_t tag[16];
  for (auto _ : state) {
    ++nonce[11];
    if (!g->Seal(nonce, aad, absl::MakeSpan(text), tag) ||
        !g->Open(nonce, aad, absl::MakeSpan(text), tag)) {
      state.SkipWithError("DirectGcm failed");
      break;
    }
  }
  SetCounters(state, n);
}
BENCHMARK(BM_GcmDirect)
    ->Arg(0)
    ->Arg(64)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(1448);

void BM_GcmEvp(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const KeyBytes key{1, 2, 3};
  EVP_CIPHER_CTX* seal = EVP_CIPHER_CTX_new();
  EVP_CIPHER_CTX* open = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(seal, EVP_aes_128_gcm(), nullptr, key.data(), nullptr);
  EVP_DecryptInit_ex(open, EVP_aes_128_gcm(), nullptr, key.data(), nullptr);
  std::vector<uint8_t> aad(24, 7), text(n + 16, 0x5a);
  std::array<uint8_t, 12> nonce{};
  uint8_t tag[16];
  int out = 0;
  for (auto _ : state) {
    ++nonce[11];
    bool ok =
        EVP_EncryptInit_ex2(seal, nullptr, nullptr, nonce.data(), nullptr) &&
        EVP_EncryptUpdate(seal, nullptr, &out, aad.data(), 24) &&
        (n == 0 || EVP_EncryptUpdate(seal, text.data(), &out, text.data(),
                                     static_cast<int>(n))) &&
        EVP_EncryptFinal_ex(seal, text.data() + n, &out) &&
        EVP_CIPHER_CTX_ctrl(seal, EVP_CTRL_AEAD_GET_TAG, 16, tag) &&
        EVP_DecryptInit_ex2(open, nullptr, nullptr, nonce.data(), nullptr) &&
        EVP_CIPHER_CTX_ctrl(open, EVP_CTRL_AEAD_SET_TAG, 16, tag) &&
        EVP_DecryptUpdate(open, nullptr, &out, aad.data(), 24) &&
        (n == 0 || EVP_DecryptUpdate(open, text.data(), &out, text.data(),
                                     static_cast<int>(n))) &&
        EVP_DecryptFinal_ex(open, text.data() + n, &out);
    if (!ok) {
      state.SkipWithError("EVP failed");
      break;
    }
  }
  EVP_CIPHER_CTX_free(seal);
  EVP_CIPHER_CTX_free(open);
  SetCounters(state, n);
}
BENCHMARK(BM_GcmEvp)->Arg(0)->Arg(64)->Arg(256)->Arg(512)->Arg(1024)->Arg(1448);

// The reference in the same run: copying a datagram's payload, which the
// send path does once per datagram (docs/performance.md, "The budget per
// gigabyte": about an eighth of the sender's CPU in a bulk transfer).
void BM_PayloadCopy(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> from(n, 0x5a), to(n);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), n);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, n);
}
BENCHMARK(BM_PayloadCopy)->Arg(64)->Arg(1472)->Arg(8972);

// What an endpoint pays once per peer incarnation: two HKDF runs and two
// AES-GCM contexts.
void BM_MakePeerKeys(benchmark::State& state) {
  uint64_t remote = kB;
  for (auto _ : state) {
    benchmark::DoNotOptimize(MakePeerKeys(AsBytes(kDomainKey), kA, ++remote));
  }
}
BENCHMARK(BM_MakePeerKeys);

void BM_DerivePairKey(benchmark::State& state) {
  uint64_t remote = kB;
  for (auto _ : state) {
    benchmark::DoNotOptimize(DerivePairKey(AsBytes(kDomainKey), kA, ++remote));
  }
}
BENCHMARK(BM_DerivePairKey);

}  // namespace
}  // namespace braid::crypto

BENCHMARK_MAIN();

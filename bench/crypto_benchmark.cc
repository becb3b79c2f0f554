// Cost of packet protection per datagram: Seal alone and Seal + Open (what
// one datagram costs its sender plus its receiver) in the none, auth and
// encrypt modes, and the per-peer key setup. `s_per_byte` is the time per
// byte of datagram (displayed as e.g. 150p = 0.15 ns per byte).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "crypto/packet_key.h"
#include "crypto/protector.h"
#include "crypto/security_header.h"
#include "wire/frames.h"

namespace braid::crypto {
namespace {

const std::string kDomainKey(32, 'd');
constexpr uint64_t kA = 0x1111222233334444;
constexpr uint64_t kB = 0x5555666677778888;

SecurityMode ModeArg(const benchmark::State& state) {
  return static_cast<SecurityMode>(state.range(0));
}

// A datagram of `size` bytes in all (tag included in the secure modes).
struct Datagram {
  explicit Datagram(size_t size) : bytes(size + kTagSize, 0x5a), total(size) {
    wire::WritePreamble(4791, absl::MakeSpan(bytes));
  }
  std::vector<uint8_t> bytes;
  size_t total;
  size_t before_tag() const { return total - kTagSize; }
};

void SetCounters(benchmark::State& state, size_t bytes) {
  const double n = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(n * bytes));
  state.counters["s_per_byte"] = benchmark::Counter(
      n * static_cast<double>(bytes),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_Seal(benchmark::State& state) {
  const SecurityMode mode = ModeArg(state);
  Datagram d(static_cast<size_t>(state.range(1)));
  PeerKeys keys = *MakePeerKeys(AsBytes(kDomainKey), kA, kB);
  uint64_t pn = 0;
  for (auto _ : state) {
    if (mode == SecurityMode::kNone) {
      benchmark::DoNotOptimize(d.bytes.data());
      benchmark::ClobberMemory();
      continue;
    }
    WriteSecurityHeader({kA, kB, ++pn}, absl::MakeSpan(d.bytes));
    benchmark::DoNotOptimize(
        Seal(mode, keys.tx, absl::MakeSpan(d.bytes), d.before_tag()));
  }
  SetCounters(state, d.total);
}

void BM_SealOpen(benchmark::State& state) {
  const SecurityMode mode = ModeArg(state);
  Datagram d(static_cast<size_t>(state.range(1)));
  PeerKeys a = *MakePeerKeys(AsBytes(kDomainKey), kA, kB);
  PeerKeys b = *MakePeerKeys(AsBytes(kDomainKey), kB, kA);
  uint64_t pn = 0;
  size_t frames = 0;
  for (auto _ : state) {
    if (mode == SecurityMode::kNone) {
      benchmark::DoNotOptimize(d.bytes.data());
      benchmark::ClobberMemory();
      continue;
    }
    WriteSecurityHeader({kA, kB, ++pn}, absl::MakeSpan(d.bytes));
    const size_t len =
        Seal(mode, a.tx, absl::MakeSpan(d.bytes), d.before_tag());
    if (!Open(mode, b.rx, absl::MakeSpan(d.bytes).first(len), &frames)) {
      state.SkipWithError("Open failed");
      break;
    }
  }
  SetCounters(state, d.total);
}

void DatagramArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"mode", "bytes"});
  for (int mode : {0, 1, 2}) {
    for (int bytes : {64, 1472, 8972}) b->Args({mode, bytes});
  }
}
BENCHMARK(BM_Seal)->Apply(DatagramArgs);
BENCHMARK(BM_SealOpen)->Apply(DatagramArgs);

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

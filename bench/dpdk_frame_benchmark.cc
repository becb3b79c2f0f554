// Per-packet costs of the DPDK backend's framing code: the software UDP
// checksum, writing a frame header, and classifying a received frame with
// the checksums verified in software (a port without checksum offload).
//
//   ninja -C build dpdk_frame_benchmark && build/bench/dpdk_frame_benchmark
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/dpdk/checksum.h"
#include "backend/dpdk/frame.h"
#include "benchmark/benchmark.h"

namespace braid::backend::dpdk {
namespace {

FrameHeaderSpec Spec() {
  FrameHeaderSpec s;
  s.src_mac = {2, 0, 0, 0, 0, 1};
  s.dst_mac = {2, 0, 0, 0, 0, 2};
  s.src = NetAddr::Ipv4(0x0a000001, 40000);
  s.dst = NetAddr::Ipv4(0x0a000002, 9000);
  s.ect = true;
  return s;
}

std::vector<uint8_t> Payload(size_t n) {
  std::vector<uint8_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 131 + 7);
  return p;
}

void BM_InternetChecksum(benchmark::State& state) {
  const std::vector<uint8_t> p = Payload(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    InternetChecksum c;
    c.Add(p);
    benchmark::DoNotOptimize(c.Sum());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}
BENCHMARK(BM_InternetChecksum)->Arg(64)->Arg(1472)->Arg(8972)->Arg(65536);

// One MTU frame's header with the UDP checksum in software (the payload as
// two pieces, the first of odd length, as a message split at an odd offset).
void BM_WriteHeaderSoftwareChecksum(benchmark::State& state) {
  const std::vector<uint8_t> p = Payload(static_cast<size_t>(state.range(0)));
  FrameHeaderSpec s = Spec();
  s.payload_len = static_cast<uint32_t>(p.size());
  uint8_t hdr[64];
  const absl::Span<const uint8_t> all(p);
  const size_t cut = std::min<size_t>(33, p.size());
  const absl::Span<const uint8_t> pieces[] = {all.subspan(0, cut),
                                              all.subspan(cut)};
  for (auto _ : state) {
    WriteFrameHeader(s, false, absl::MakeSpan(hdr));
    FinishUdpChecksum(absl::MakeSpan(hdr), pieces);
    benchmark::DoNotOptimize(hdr);
  }
}
BENCHMARK(BM_WriteHeaderSoftwareChecksum)->Arg(18)->Arg(1472);

void BM_WriteHeaderOffload(benchmark::State& state) {
  FrameHeaderSpec s = Spec();
  s.payload_len = 1472;
  uint8_t hdr[64];
  for (auto _ : state) {
    WriteFrameHeader(s, true, absl::MakeSpan(hdr));
    SetUdpPseudoHeaderChecksum(absl::MakeSpan(hdr));
    benchmark::DoNotOptimize(hdr);
  }
}
BENCHMARK(BM_WriteHeaderOffload);

void BM_ClassifySoftwareChecksum(benchmark::State& state) {
  const std::vector<uint8_t> p = Payload(static_cast<size_t>(state.range(0)));
  FrameHeaderSpec s = Spec();
  s.payload_len = static_cast<uint32_t>(p.size());
  std::vector<uint8_t> frame(FrameHeaderLen(s.src.family));
  WriteFrameHeader(s, false, absl::MakeSpan(frame));
  const absl::Span<const uint8_t> pieces[] = {p};
  FinishUdpChecksum(absl::MakeSpan(frame), pieces);
  frame.insert(frame.end(), p.begin(), p.end());
  const LocalIdentity me{s.dst_mac, s.dst};
  ParsedUdp udp;
  RxDrop why;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ClassifyFrame(frame, me, HwChecksum::kUnknown,
                                           HwChecksum::kUnknown, &udp, &why));
  }
}
BENCHMARK(BM_ClassifySoftwareChecksum)->Arg(18)->Arg(1472);

}  // namespace
}  // namespace braid::backend::dpdk

BENCHMARK_MAIN();

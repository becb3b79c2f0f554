// libFuzzer entry point for the DPDK backend's receive-side framing code
// (built only with -DBRAID_LIBFUZZER=ON and clang). Checks the same
// invariants as dpdk_frame_fuzz_test.cc and aborts on the first violation.
//
//   cmake -G Ninja -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ \
//         -DBRAID_LIBFUZZER=ON
//   ninja -C build-fuzz dpdk_frame_libfuzzer
//   build-fuzz/tests/fuzz/dpdk_frame_libfuzzer -max_total_time=60
//
// The first input byte picks the identity's family (bit 0) and the NIC's
// checksum verdicts (bits 1-4); the rest is the Ethernet frame.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "tests/fuzz/dpdk_frame_check.h"

namespace {

braid::backend::dpdk::HwChecksum Hw(uint8_t bits) {
  using braid::backend::dpdk::HwChecksum;
  return bits == 1 ? HwChecksum::kGood
                   : (bits == 2 ? HwChecksum::kBad : HwChecksum::kUnknown);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fz = braid::backend::dpdk::fuzz;
  if (size == 0) return 0;
  const uint8_t sel = data[0];
  ++data;
  --size;
  // A small table, fresh per input so every run replays alone; one request
  // outstanding so replies can be learnt.
  braid::backend::dpdk::NeighborTable table(4);
  const braid::TimeNs now(1000000000);
  const braid::backend::dpdk::LocalIdentity me = fz::FuzzIdentity(sel & 1);
  braid::NetAddr peer = me.addr;
  peer.ip[me.addr.family == braid::NetAddr::Family::kIpv4 ? 3 : 15] = 1;
  table.ShouldRequest(peer, now);
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size]);
  if (size > 0) std::memcpy(buf.get(), data, size);
  const fz::EthCheckResult r = fz::CheckEthFrame(
      buf.get(), size, me, Hw((sel >> 1) & 3), Hw((sel >> 3) & 3), now, &table);
  if (!r.violation.empty()) {
    std::fprintf(stderr, "dpdk framing invariant broken: %s\n",
                 r.violation.c_str());
    std::abort();
  }
  return 0;
}

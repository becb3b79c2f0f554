// libFuzzer entry point for the state-machine fuzzer (core_fuzz_harness.h):
// the input is the run's choices. Aborts on the first broken check.
// Attacks: BRAID_FUZZ_ATTACKS (a bit mask of fuzz::Attack; default those
// the core withstands today, FuzzOptions::attacks).
//
//   cmake -G Ninja -B build-fuzz -DCMAKE_CXX_COMPILER=clang++
//         -DCMAKE_C_COMPILER=clang -DBRAID_LIBFUZZER=ON
//         -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined
//   ninja -C build-fuzz endpoint_core_libfuzzer
//   build-fuzz/tests/fuzz/endpoint_core_libfuzzer -max_total_time=60
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "tests/fuzz/core_fuzz_harness.h"

namespace {

uint32_t Attacks() {
  static const uint32_t attacks = [] {
    const char* v = std::getenv("BRAID_FUZZ_ATTACKS");
    uint32_t out = 0;
    if (v != nullptr && absl::SimpleAtoi(v, &out)) return out;
    return braid::endpoint::fuzz::FuzzOptions().attacks;
  }();
  return attacks;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braid::endpoint::fuzz::ByteChoices choices(data, size);
  braid::endpoint::fuzz::FuzzOptions opt;
  opt.attacks = Attacks();
  opt.steps = 400;  // the input's length bounds the run
  braid::endpoint::fuzz::CoreFuzzHarness h(&choices, opt);
  const std::vector<std::string> v = h.Run();
  if (!v.empty()) {
    std::fprintf(stderr, "endpoint core fuzzer: %s\nlast events:\n%s",
                 v.front().c_str(), h.Trace().c_str());
    std::abort();
  }
  return 0;
}

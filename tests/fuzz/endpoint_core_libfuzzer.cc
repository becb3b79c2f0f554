// libFuzzer entry point for the state-machine fuzzer (core_fuzz_harness.h):
// the input is the run's choices. Aborts on the first broken check.
// Attacks: BRAID_FUZZ_ATTACKS (a bit mask of fuzz::Attack; default those
// the core withstands today, FuzzOptions::attacks).
//
//   cmake -G Ninja -B build-fuzz -DCMAKE_CXX_COMPILER=clang++
//         -DCMAKE_C_COMPILER=clang -DBRAID_LIBFUZZER=ON
//         "-DCMAKE_CXX_FLAGS=-O1 -fsanitize=fuzzer-no-link,address,undefined"
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

// Runs the input; true if every check held. With `report`, the run keeps
// its trace and prints its first broken check with the last events.
bool RunInput(const uint8_t* data, size_t size, bool report) {
  braid::endpoint::fuzz::ByteChoices choices(data, size);
  braid::endpoint::fuzz::FuzzOptions opt;
  opt.attacks = Attacks();
  opt.steps = 400;  // the input's length bounds the run
  opt.trace = report;
  braid::endpoint::fuzz::CoreFuzzHarness h(&choices, opt);
  const std::vector<std::string> v = h.Run();
  if (!v.empty() && report) {
    std::fprintf(stderr, "endpoint core fuzzer: %s\nlast events:\n%s",
                 v.front().c_str(), h.Trace().c_str());
  }
  return v.empty();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Untraced (no event is formatted); an input
  // that breaks a check is played again with its trace: the same input
  // gives the same run.
  if (RunInput(data, size, false)) return 0;
  if (RunInput(data, size, true)) {
    std::fprintf(stderr,
                 "endpoint core fuzzer: the input broke a check untraced and "
                 "none traced: the run is not deterministic\n");
  }
  std::abort();
}

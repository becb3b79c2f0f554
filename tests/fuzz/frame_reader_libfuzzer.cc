// libFuzzer entry point for wire::FrameReader (built only with
// -DBRAID_LIBFUZZER=ON and clang). Checks the same invariants as
// frame_reader_fuzz_test.cc and aborts on the first violation.
//
//   cmake -G Ninja -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ \
//         -DBRAID_LIBFUZZER=ON
//   ninja -C build-fuzz frame_reader_libfuzzer
//   build-fuzz/tests/fuzz/frame_reader_libfuzzer -max_total_time=60 \
//       -dict=tests/fuzz/frame_reader.dict
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "tests/fuzz/frame_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // libFuzzer's buffer is already exactly sized; copy anyway so the reader
  // never sees memory it could legally read past.
  std::unique_ptr<uint8_t[]> buf(new uint8_t[size]);
  if (size > 0) std::memcpy(buf.get(), data, size);
  // As a frame sequence (the reader alone), and as the endpoint sees a
  // datagram (preamble, then frames).
  for (const auto check : {&braid::wire::fuzz::CheckDatagram,
                           &braid::wire::fuzz::CheckFullDatagram}) {
    const braid::wire::fuzz::CheckResult r = check(buf.get(), size);
    if (!r.violation.empty()) {
      std::fprintf(stderr, "frame reader invariant broken: %s\n",
                   r.violation.c_str());
      std::abort();
    }
  }
  return 0;
}

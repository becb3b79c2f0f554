// dpdk-raw control frames (start, end, report, acks): a bench header alone
// in a frame, sent and awaited off the hot path.
#ifndef BRAID_BENCH_DPDK_RAW_RAW_CONTROL_H_
#define BRAID_BENCH_DPDK_RAW_RAW_CONTROL_H_

#include <cstdint>

#include "bench/dpdk_raw/raw_frame.h"
#include "bench/dpdk_raw/raw_port.h"

namespace braid::dpdkraw {

// Sends one frame from `src` to `dst` whose payload is `h` alone; retries a
// full tx queue for up to 10 ms. Returns whether the port took it.
bool SendControl(const Port& port, const Endpoint& src, const Endpoint& dst,
                 const BenchHeader& h);

// Polls the port for up to `seconds` for a bench frame of `type` and `run`
// (other frames are freed). Returns whether one came; fills *out.
bool AwaitControl(const Port& port, uint8_t type, uint32_t run, double seconds,
                  RxFrame* out);

// Sends `h` every `interval` seconds until a frame of `reply_type` and h.run
// comes back, for at most `seconds`. Returns whether it came; fills *reply.
bool Exchange(const Port& port, const Endpoint& src, const Endpoint& dst,
              const BenchHeader& h, uint8_t reply_type, double interval,
              double seconds, RxFrame* reply);

}  // namespace braid::dpdkraw

#endif  // BRAID_BENCH_DPDK_RAW_RAW_CONTROL_H_

// The control messages of a braid-perf run, carried over braid itself
// (reliable, so no retries of its own): a 16-byte payload header
// (payload.h) followed by little fixed bodies of u64 fields.
//
//   client                         server
//   Hello{test,size,iters}  --->
//                           <---   HelloAck
//   Data/Ping ...           --->   (verified, counted; Ping echoed as Pong)
//   Done{sent,bytes}        --->
//                           <---   Result{counts, server counters}
//   ... next size ...
//   Bye                     --->   (server exits unless --persistent)
#ifndef BRAID_TOOLS_BRAID_PERF_CONTROL_H_
#define BRAID_TOOLS_BRAID_PERF_CONTROL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "tools/braid_perf/flags.h"
#include "tools/braid_perf/payload.h"

namespace braid::perf {

struct HelloMsg {
  Test test = Test::kBw;
  uint32_t size = 0;
  bool verify = true;
};

struct DoneMsg {
  uint64_t sent = 0;   // messages the client saw completed (ids 0..sent-1)
  uint64_t bytes = 0;  // their bytes
};

// What the server counted for one run, plus its endpoint's counters over
// the run (deltas).
struct ResultMsg {
  uint64_t received = 0;    // distinct valid messages
  uint64_t bytes = 0;       // their bytes
  uint64_t duplicates = 0;  // a valid id seen again
  uint64_t bad = 0;         // failed verification
  uint64_t missing = 0;     // ids below Done.sent never seen
  uint64_t foreign = 0;     // other run, kind or peer
  uint64_t first_bad = 0;   // Verdict of the first bad message
  uint64_t recv_ns = 0;     // first to last data arrival
  uint64_t datagrams_sent = 0;
  uint64_t datagrams_received = 0;
  uint64_t tx_syscalls = 0;
  uint64_t rx_syscalls = 0;
  uint64_t retransmits = 0;
  uint64_t allocations = 0;  // operator new calls in the server over the run
};

std::vector<uint8_t> EncodeHello(uint32_t run, const HelloMsg& m);
std::vector<uint8_t> EncodeHelloAck(uint32_t run);
// The server's answer to a Hello while another client's run is in progress.
std::vector<uint8_t> EncodeBusy(uint32_t run);
std::vector<uint8_t> EncodeDone(uint32_t run, const DoneMsg& m);
std::vector<uint8_t> EncodeResult(uint32_t run, const ResultMsg& m);
std::vector<uint8_t> EncodeBye(uint32_t run);

// Decoders: nullopt when `msg` is not a well-formed message of that kind.
std::optional<HelloMsg> DecodeHello(absl::Span<const uint8_t> msg);
std::optional<DoneMsg> DecodeDone(absl::Span<const uint8_t> msg);
std::optional<ResultMsg> DecodeResult(absl::Span<const uint8_t> msg);

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_CONTROL_H_

// Command-line flags of braid-perf, in perftest's vocabulary. Parsing is
// strict: an unknown flag, a missing or malformed value, an out-of-range
// number or a contradictory combination is an error naming the flag.
#ifndef BRAID_TOOLS_BRAID_PERF_FLAGS_H_
#define BRAID_TOOLS_BRAID_PERF_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "braid/address.h"
#include "braid/options.h"
#include "braid/testing/impairment.h"
#include "tools/common/flag_parser.h"

namespace braid::perf {

enum class Role : uint8_t { kServer, kClient };
enum class Test : uint8_t {
  kBw,    // one way, W messages outstanding: goodput
  kLat,   // ping-pong: one-way latency = RTT / 2
  kRate,  // one way, small messages, many outstanding: messages per second
};
const char* TestName(Test t);

// Exit codes of the tool.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // verification or transport failure
inline constexpr int kExitUsage = tools::kExitBadFlags;  // bad flags
inline constexpr int kExitTimeLimit = 3;  // --time-limit exceeded

// Smallest message: the id/check header every message carries.
inline constexpr uint32_t kMinMessageBytes = 16;
// Largest message (the endpoint's default max_message_bytes, which both sides
// use, and no more than one peer's default receive budget).
inline constexpr uint32_t kMaxMessageBytes = 64u << 20;

struct PerfFlags {
  Role role = Role::kClient;
  NetAddr server;    // client: the server's address
  std::string bind;  // local address; "" = derived (see ResolvedBind)
  Test test = Test::kBw;
  // Message sizes to run (one, or the -a sweep 16, 32, ... max_size).
  std::vector<uint32_t> sizes;
  bool sweep = false;
  uint32_t max_size = 8u << 20;  // -a upper bound
  uint64_t iters = 0;            // -n; 0 = test default (DefaultIters)
  double seconds = 0;            // -D; 0 = count iterations instead
  uint32_t window = 0;           // --window; 0 = test default
  bool block = false;            // --block: wait on fd() instead of spinning
  bool json = false;
  bool stats = false;       // print the endpoint's stats after the run
  bool persistent = false;  // server: serve clients until killed
  bool verify = true;       // --no-verify skips the payload comparison
  double time_limit = 60;   // hard bound on the whole run, seconds
  // bw / rate: print the goodput of every interval of this many seconds on
  // stderr while the run goes (0 = not).
  double interval = 0;
  uint64_t seed = 1;         // impairment seed (client uses it, server seed+1)
  EndpointOptions endpoint;  // mtu, paths, mode, cc, gso/gro
  TestImpairments impair;    // --loss/--dup/--reorder/--corrupt
  std::string command_line;
};

// Parses argv. Returns InvalidArgument with a message naming the flag;
// "help" when -h/--help was given.
absl::StatusOr<PerfFlags> ParsePerfFlags(int argc, char** argv);
const char* PerfUsage();

// Iterations per size when -n and -D are absent (and the sweep's per-size cap).
uint64_t DefaultIters(Test t);
// Iterations for one size of a run: -n (or the default), capped in a sweep
// so large sizes move at most 256 MiB.
uint64_t ItersForSize(const PerfFlags& f, uint32_t size);
// Outstanding messages for one size: --window (or the test default), capped
// so the sender's buffers stay within 64 MiB.
uint32_t WindowForSize(const PerfFlags& f, uint32_t size);
// The local bind address: --bind, else loopback of the server's family when
// the server is on loopback, else the wildcard address; server default
// 0.0.0.0:18515 (perftest's port).
std::string ResolvedBind(const PerfFlags& f);

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_FLAGS_H_

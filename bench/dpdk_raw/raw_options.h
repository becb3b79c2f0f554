// dpdk-raw: the raw DPDK baseline braid over DPDK is compared against (the
// analogue of udp-blast for a poll-mode port). Its options and their parser.
#ifndef BRAID_BENCH_DPDK_RAW_RAW_OPTIONS_H_
#define BRAID_BENCH_DPDK_RAW_RAW_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace braid::dpdkraw {

// Frame limits: the UDP payload of one frame, which carries the 48-byte
// bench header, fits an Ethernet jumbo frame of 9216 bytes.
inline constexpr uint32_t kMinSize = 48;
inline constexpr uint32_t kMaxSize = 9216 - 42;

struct Options {
  std::string role;          // "server" or "client"
  std::string mode = "bw";   // client: "bw" or "lat"
  std::string eal;           // EAL arguments, split on spaces
  std::string port;          // port name (e.g. net_memif0); "": the first
  uint32_t size = 0;         // UDP payload bytes per frame (0: mode default)
  double seconds = 0;        // client: run length; server: lifetime (0: none)
  uint64_t count = 0;        // bw frames or lat measured ping-pongs
  int burst = 32;            // frames per rte_eth_tx_burst/rx_burst
  double link_timeout = 10;  // seconds to wait for the port's link
  bool tx_only = false;      // client bw: no server, count what was sent
  bool once = false;         // server: exit after one run
  bool json = false;
  bool help = false;  // -h/--help: print Usage() and exit 0
};

// Parses argv (see Usage()): argv[1] is the role, the rest flags. Errors are
// InvalidArgument naming the flag ("--size: expected an integer in
// 48..9174, got '1'"); with -h/--help returns Options with only `help` set.
absl::StatusOr<Options> ParseArgs(int argc, char** argv);

// The usage text.
std::string Usage();

}  // namespace braid::dpdkraw

#endif  // BRAID_BENCH_DPDK_RAW_RAW_OPTIONS_H_

// Command-line flags of braid-forge. Parsing is strict: an unknown flag, a
// malformed or out-of-range value, a missing required flag or a combination
// that makes no sense is an InvalidArgument naming the flag (exit code 2).
#ifndef BRAID_TOOLS_BRAID_FORGE_FORGE_FLAGS_H_
#define BRAID_TOOLS_BRAID_FORGE_FORGE_FLAGS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "tools/braid_forge/forger.h"

namespace braid::forge {

struct ForgeFlags {
  Attack attack = Attack::kSync;
  ForgeTarget target;
  uint64_t count = 0;   // datagrams; 0 = no bound
  double rate = 0;      // datagrams per second; 0 = as fast as possible
  double duration = 0;  // seconds; 0 = no bound
  uint32_t batch = 64;  // datagrams per sendmmsg
  uint64_t seed = 0;    // 0 = drawn from getrandom
  bool json = false;    // the summary as one JSON line on stdout
};

// Parses argv. InvalidArgument naming the flag; "help" for -h / --help.
absl::StatusOr<ForgeFlags> ParseForgeFlags(int argc, char** argv);
const char* ForgeUsage();

}  // namespace braid::forge

#endif  // BRAID_TOOLS_BRAID_FORGE_FORGE_FLAGS_H_

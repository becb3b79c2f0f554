// The protocol flags braid-perf and braid-sim share, defined once: same
// names, ranges, defaults (ProtocolOptions') and messages in both tools.
#ifndef BRAID_TOOLS_COMMON_PROTOCOL_FLAGS_H_
#define BRAID_TOOLS_COMMON_PROTOCOL_FLAGS_H_

#include "braid/options.h"
#include "tools/common/flag_parser.h"

namespace braid::tools {

// Registers on `parser`, writing into *protocol:
//   --paths N       entropy values per peer, 1..256
//   --spray-run N   datagrams sent on one path before the next, 1..1024
//   --spray-choices N   paths compared for each spray run, 1..8
//   --cc C          congestion control, swift | none
void AddProtocolFlags(FlagParser& parser, ProtocolOptions* protocol);

// The words of --mode (spray | gbn) and their modes.
std::vector<std::pair<std::string, Mode>> ModeChoices();

}  // namespace braid::tools

#endif  // BRAID_TOOLS_COMMON_PROTOCOL_FLAGS_H_

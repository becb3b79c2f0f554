#include "tools/common/protocol_flags.h"

namespace braid::tools {

void AddProtocolFlags(FlagParser& parser, ProtocolOptions* protocol) {
  parser.Int({"--paths"}, 1, 256, &protocol->paths);
  parser.Int({"--spray-run"}, 1, 1024, &protocol->spray_run);
  parser.Int({"--spray-choices"}, 1, 8, &protocol->spray_choices);
  parser.Choice<CcAlgorithm>(
      {"--cc"},
      {{CcName(CcAlgorithm::kSwift), CcAlgorithm::kSwift},
       {CcName(CcAlgorithm::kNone), CcAlgorithm::kNone}},
      &protocol->cc);
}

std::vector<std::pair<std::string, Mode>> ModeChoices() {
  return {{ModeName(Mode::kSpray), Mode::kSpray},
          {ModeName(Mode::kGoBackN), Mode::kGoBackN}};
}

}  // namespace braid::tools

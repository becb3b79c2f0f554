// braid-sim: runs one simulated scenario from flags and prints a table (or
// --json). Same flags, same output, byte for byte (wall time is printed only
// with --wall, since it is the one thing that is not deterministic).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "sim/scenario/scenario.h"
#include "tools/braid_sim/flags.h"
#include "tools/braid_sim/report.h"
#include "tools/common/flag_parser.h"

int main(int argc, char** argv) {
  using namespace braid::simtool;
  absl::StatusOr<SimFlags> flags = ParseSimFlags(argc, argv);
  if (!flags.ok())
    return braid::tools::ReportBadFlags("braid-sim", flags.status());
  if (flags->help) {
    std::fputs(SimUsage(), stdout);
    return 0;
  }
  std::vector<std::pair<std::string, ScenarioResult>> runs;
  if (flags->ab_demo) {
    // The A/B demo: spray vs gbn under each condition, one table.
    for (const DemoCondition& dc : DemoConditions(flags->config)) {
      for (braid::Mode m : {braid::Mode::kSpray, braid::Mode::kGoBackN}) {
        ScenarioConfig cfg = dc.config;
        cfg.protocol.mode = m;
        runs.emplace_back(absl::StrCat(dc.name, "/", braid::ModeName(m)),
                          RunScenario(cfg));
      }
    }
    const std::string out =
        flags->json ? FormatJson(*flags, runs) : FormatDemoTable(runs);
    std::fputs(out.c_str(), stdout);
    bool clean = true;
    for (const auto& [name, r] : runs) clean = clean && r.Clean();
    return clean ? 0 : 1;
  }
  for (braid::Mode m : flags->modes) {
    ScenarioConfig cfg = flags->config;
    cfg.protocol.mode = m;
    runs.emplace_back(braid::ModeName(m), RunScenario(cfg));
  }
  const std::string out =
      flags->json ? FormatJson(*flags, runs) : FormatTable(*flags, runs);
  std::fputs(out.c_str(), stdout);
  bool clean = true;
  for (const auto& [name, r] : runs) clean = clean && r.Clean();
  return clean ? 0 : 1;
}

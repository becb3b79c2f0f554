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

namespace {

using braid::simtool::ScenarioConfig;
using braid::simtool::ScenarioResult;
using Runs = std::vector<std::pair<std::string, ScenarioResult>>;

// Exit status 3 (a run could not start, or ran out of simulated time with
// sends pending), with the reason on stderr; 1 if an invariant broke; else 0.
int ExitStatus(const Runs& runs, const ScenarioConfig& cfg) {
  int rc = 0;
  for (const auto& [name, r] : runs) {
    if (!r.setup_error.empty()) {
      std::fprintf(stderr, "braid-sim: %s: could not start: %s\n", name.c_str(),
                   r.setup_error.c_str());
      rc = 3;
    } else if (r.timed_out) {
      std::fprintf(stderr,
                   "braid-sim: %s: timed out: %llu of %llu sends still "
                   "pending after %lld ms of simulated time "
                   "(--time-limit-ms)\n",
                   name.c_str(),
                   static_cast<unsigned long long>(
                       r.messages_sent - r.messages_done - r.messages_failed -
                       r.messages_gone_with_restart),
                   static_cast<unsigned long long>(r.messages_sent),
                   static_cast<long long>(cfg.time_limit.ns() / 1'000'000));
      rc = 3;
    } else if (!r.Clean() && rc == 0) {
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace braid::simtool;
  absl::StatusOr<SimFlags> flags = ParseSimFlags(argc, argv);
  if (!flags.ok())
    return braid::tools::ReportBadFlags("braid-sim", flags.status());
  if (flags->help) {
    std::fputs(SimUsage(), stdout);
    return 0;
  }
  Runs runs;
  if (flags->ab_demo) {
    // The A/B demo: spray vs gbn under each condition, one table. The clean
    // runs go first: the impaired spine is the one gbn used most in them.
    const DemoCondition clean = DemoConditions(flags->config, 0).front();
    for (braid::Mode m : {braid::Mode::kSpray, braid::Mode::kGoBackN}) {
      ScenarioConfig cfg = clean.config;
      cfg.protocol.mode = m;
      runs.emplace_back(absl::StrCat(clean.name, "/", braid::ModeName(m)),
                        RunScenario(cfg));
    }
    const int impaired = DemoImpairedSpine(runs.back().second.spine_packets);
    const std::vector<DemoCondition> conditions =
        DemoConditions(flags->config, impaired);
    for (size_t i = 1; i < conditions.size(); ++i) {
      for (braid::Mode m : {braid::Mode::kSpray, braid::Mode::kGoBackN}) {
        ScenarioConfig cfg = conditions[i].config;
        cfg.protocol.mode = m;
        runs.emplace_back(
            absl::StrCat(conditions[i].name, "/", braid::ModeName(m)),
            RunScenario(cfg));
      }
    }
    const std::string out = flags->json ? FormatJson(*flags, runs)
                                        : FormatDemoTable(runs, impaired);
    std::fputs(out.c_str(), stdout);
    return ExitStatus(runs, flags->config);
  }
  for (braid::Mode m : flags->modes) {
    ScenarioConfig cfg = flags->config;
    cfg.protocol.mode = m;
    runs.emplace_back(braid::ModeName(m), RunScenario(cfg));
  }
  const std::string out =
      flags->json ? FormatJson(*flags, runs) : FormatTable(*flags, runs);
  std::fputs(out.c_str(), stdout);
  return ExitStatus(runs, flags->config);
}

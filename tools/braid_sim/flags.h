// Command-line flags of braid-sim. Parsing is strict: an unknown flag, a
// malformed value or an out-of-range number is an error naming the flag. A
// value is given as "--flag value" or "--flag=value"; a flag without a value
// (--json, --wall, --ab-demo, --help) given one ("--json=1") is an error.
#ifndef BRAID_TOOLS_BRAID_SIM_FLAGS_H_
#define BRAID_TOOLS_BRAID_SIM_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/scenario/scenario.h"

namespace braid::simtool {

// The scenario harness's types, as the tool names them.
using sim::Restart;
using sim::RunScenario;
using sim::ScenarioConfig;
using sim::ScenarioResult;
using sim::ScenarioShape;
using sim::ShapeOf;
using sim::TimedImpairment;
using sim::TimelineGbps;
using sim::TopologyKind;
using sim::Traffic;

struct SimFlags {
  ScenarioConfig config;
  std::vector<Mode> modes{Mode::kSpray};  // --mode both → spray then gbn
  bool json = false;
  bool wall = false;
  bool timeline = false;  // --timeline-us: goodput per bin in the JSON
  bool help = false;
  bool ab_demo = false;      // --ab-demo: spray vs gbn under four conditions
  std::string command_line;  // echoed in the output
};

absl::StatusOr<SimFlags> ParseSimFlags(int argc, char** argv);

// The A/B demo's conditions, derived from the flags' base scenario: clean;
// 1 % loss on spine `impaired`; spine `impaired` blackholed from 200 us;
// spine `impaired` a 4x slower bottleneck with ECN marking.
struct DemoCondition {
  std::string name;
  ScenarioConfig config;
};
std::vector<DemoCondition> DemoConditions(const ScenarioConfig& base,
                                          int impaired);
// The spine the demo impairs: the one that carried the most packets of the
// clean go-back-N run (`spine_packets` of that run), so that every impaired
// row impairs a path both modes use. 0 if nothing was counted.
int DemoImpairedSpine(const std::vector<uint64_t>& gbn_spine_packets);
const char* SimUsage();

// Parses one --impair spec, e.g.
//   "spine=1,dir=up,loss=0.01,start_us=100,stop_us=900"
// keys: spine (index or "all"), dir (up|down|both), loss, ge (p_gb:p_bg),
// dup, corrupt, ecn_kb, blackhole, delay_us, start_us, stop_us.
absl::StatusOr<TimedImpairment> ParseImpairment(const std::string& spec);

}  // namespace braid::simtool

#endif  // BRAID_TOOLS_BRAID_SIM_FLAGS_H_

// braid-sim output: a table for people, one JSON object for scripts.
#ifndef BRAID_TOOLS_BRAID_SIM_REPORT_H_
#define BRAID_TOOLS_BRAID_SIM_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/scenario.h"
#include "tools/braid_sim/flags.h"

namespace braid::simtool {

using Runs = std::vector<std::pair<std::string, ScenarioResult>>;

// The --wall line's figures: wall and CPU seconds of the run, and the
// simulated packets (ScenarioResult::sim_packets) per second of each.
std::string FormatSpeed(const ScenarioResult& r);
std::string FormatTable(const SimFlags& flags, const Runs& runs);
std::string FormatJson(const SimFlags& flags, const Runs& runs);
// One row per (condition/mode) run (spray then gbn per condition): goodput,
// latency, retransmissions, failures and packets per spine; the spray row
// carries spray/gbn ratios. A p99 ratio is printed only when neither mode
// failed a message (completion times cover completed sends only). The first
// line names the impaired spine.
std::string FormatDemoTable(const Runs& runs, int impaired_spine);

}  // namespace braid::simtool

#endif  // BRAID_TOOLS_BRAID_SIM_REPORT_H_

// One measured row of braid-perf (a test at one message size) and its
// printing: a table for people, JSON for scripts.
#ifndef BRAID_TOOLS_BRAID_PERF_REPORT_H_
#define BRAID_TOOLS_BRAID_PERF_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/braid_perf/control.h"
#include "tools/braid_perf/flags.h"
#include "tools/common/json_writer.h"

namespace braid::perf {

// Counter deltas of one side's endpoint over a run.
struct SideCounters {
  uint64_t datagrams_sent = 0;
  uint64_t datagrams_received = 0;
  uint64_t tx_syscalls = 0;
  uint64_t rx_syscalls = 0;
  uint64_t retransmits = 0;
  uint64_t allocations = 0;  // operator new calls in the process
};

struct RunResult {
  Test test = Test::kBw;
  uint32_t size = 0;
  uint32_t window = 0;
  uint64_t iters = 0;  // messages completed (bw, rate) or ping-pongs (lat)
  double seconds = 0;  // first send to last completion
  double gbps = 0;     // message bytes only (no headers), client-measured
  double msg_per_s = 0;
  double server_gbps = 0;  // bytes over the server's first-to-last arrival
  // Latency: bw/rate = Send to its kSendDone; lat = RTT / 2. Microseconds.
  double min_us = 0, mean_us = 0, p50_us = 0, p99_us = 0, p999_us = 0,
         max_us = 0;
  uint64_t retransmits = 0;  // client + server
  // Errors seen by the client.
  uint64_t send_failed = 0;
  uint64_t client_bad = 0;         // pongs failing verification
  uint64_t client_duplicates = 0;  // a pong seen twice
  std::string failure;             // first failure, human-readable
  bool time_limit = false;         // the run hit --time-limit
  bool have_server = false;        // a Result arrived
  ResultMsg server;
  SideCounters client;

  // No failure, no bad/duplicate/missing message on either side.
  bool ok() const;
};

// The table header line and one row per result, then an error line per
// failing result.
std::string FormatTable(const std::vector<RunResult>& rows);
// One JSON object (one line) describing the whole invocation.
// `stats_json` (a JSON object or "") is embedded as "stats".
std::string FormatJson(const PerfFlags& f, const std::vector<RunResult>& rows,
                       const std::string& stats_json);
// One row as a JSON object.
tools::Json RowJson(const RunResult& r);
// The server's line (one JSON object) for one finished run.
std::string FormatServerRunJson(uint32_t run, const HelloMsg& hello,
                                const ResultMsg& res, bool ok);

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_REPORT_H_

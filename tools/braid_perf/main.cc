// braid-perf: perftest-style bandwidth, latency and message-rate tests over
// braid's datagram API (kernel UDP). See PerfUsage() or --help.
#include <cstdio>
#include <string>

#include "tools/braid_perf/client.h"
#include "tools/braid_perf/flags.h"
#include "tools/braid_perf/server.h"
#include "tools/common/flag_parser.h"

int main(int argc, char** argv) {
  absl::StatusOr<braid::perf::PerfFlags> f =
      braid::perf::ParsePerfFlags(argc, argv);
  if (!f.ok()) {
    if (f.status().message() == "help") {
      std::fputs(braid::perf::PerfUsage(), stdout);
      return braid::perf::kExitOk;
    }
    return braid::tools::ReportBadFlags("braid-perf", f.status());
  }
  if (f->role == braid::perf::Role::kServer) return braid::perf::RunServer(*f);
  return braid::perf::RunClient(*f);
}

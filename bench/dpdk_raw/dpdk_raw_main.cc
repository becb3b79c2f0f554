// dpdk-raw: the raw DPDK baseline ("the limit of the port") for braid over
// DPDK, the analogue of udp-blast.
//   dpdk-raw server --eal "EAL ARGS" [--port NAME] ...
//   dpdk-raw client --eal "EAL ARGS" [--port NAME] --mode bw|lat ...
#include <cstdio>
#include <string>

#include "bench/dpdk_raw/raw_client.h"
#include "bench/dpdk_raw/raw_options.h"
#include "bench/dpdk_raw/raw_port.h"
#include "bench/dpdk_raw/raw_server.h"
#include "tools/common/flag_parser.h"

namespace braid::dpdkraw {
namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "dpdk-raw: %s\n", std::string(s.message()).c_str());
  return 1;
}

int Run(const Options& o) {
  InstallStopHandlers();
  absl::Status s = InitEal(o.eal);
  if (!s.ok()) return Fail(s);
  absl::StatusOr<Port> port = OpenPort(o.port, 1024);
  if (!port.ok()) {
    CleanupEal();
    return Fail(port.status());
  }
  int rc = 0;
  if (o.role == "client") s = CheckFramesFit(o, *port);
  if (s.ok()) s = StartPort(&*port, o.link_timeout);
  if (s.ok()) s = WaitLinkUp(&*port, o.link_timeout);
  if (!s.ok()) {
    rc = Fail(s);
  } else if (o.role == "server") {
    rc = RunServer(o, *port);
  } else if (o.mode == "lat") {
    rc = RunLatency(o, *port);
  } else {
    rc = RunBandwidth(o, *port);
  }
  ClosePort(*port);
  CleanupEal();
  return rc;
}

}  // namespace
}  // namespace braid::dpdkraw

int main(int argc, char** argv) {
  absl::StatusOr<braid::dpdkraw::Options> o =
      braid::dpdkraw::ParseArgs(argc, argv);
  if (!o.ok()) return braid::tools::ReportBadFlags("dpdk-raw", o.status());
  if (o->help) {
    std::fputs(braid::dpdkraw::Usage().c_str(), stdout);
    return 0;
  }
  return braid::dpdkraw::Run(*o);
}

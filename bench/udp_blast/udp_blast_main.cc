// udp-blast: raw UDP baseline ("the limit of the path") for braid.
//   udp-blast server [-b ADDR:PORT] ...
//   udp-blast client -c ADDR:PORT bw|lat ...
#include <cstdio>
#include <string>

#include "bench/udp_blast/blast_client.h"
#include "bench/udp_blast/blast_common.h"
#include "bench/udp_blast/blast_server.h"

int main(int argc, char** argv) {
  absl::StatusOr<braid::blast::Options> o = braid::blast::ParseArgs(argc, argv);
  if (!o.ok()) {
    std::fprintf(stderr, "udp-blast: %s\n",
                 std::string(o.status().message()).c_str());
    std::fputs(braid::blast::Usage().c_str(), stderr);
    return 2;
  }
  if (o->help) {
    std::fputs(braid::blast::Usage().c_str(), stdout);
    return 0;
  }
  if (o->role == "server") return braid::blast::RunServer(*o);
  if (o->mode == "lat") return braid::blast::RunLatency(*o);
  return braid::blast::RunBandwidth(*o);
}

#include "bench/dpdk_raw/raw_options.h"

#include "absl/strings/str_cat.h"
#include "tools/common/flag_parser.h"

namespace braid::dpdkraw {

std::string Usage() {
  return R"(usage:
  dpdk-raw server --eal "EAL ARGS" [--port NAME] [--once] [--duration S]
                  [--burst N] [--link-timeout S] [--json]
  dpdk-raw client --eal "EAL ARGS" [--port NAME] [--mode bw|lat]
                  [--size BYTES] [--duration S | --count N] [--burst N]
                  [--tx-only] [--link-timeout S] [--json]
  dpdk-raw -h|--help

  The raw DPDK baseline: Ethernet + IPv4 + UDP frames (42-byte header) on
  one port, busy-polling rte_eth_tx_burst/rx_burst. No braid code.
  bw   blast frames as fast as the port takes them; the server counts what
       arrives: frames/s and goodput (UDP payload bits/s), receiver-counted.
       With --tx-only no server is needed (e.g. net_null): the sender's
       figures are reported.
  lat  ping-pong, one frame in flight; prints RTT/2 percentiles. A ping
       without a pong for 1 s is lost; the run fails without a pong in the
       first 3 s, or for 5 s later on.
  --eal    EAL arguments, split on spaces, e.g. "--no-huge -m 512 --no-pci
           --file-prefix=rs --vdev=net_memif0,role=server,socket=/tmp/r.sock"
  --port   the port's name (rte_eth_dev_get_port_by_name); default the first
  --size   UDP payload bytes per frame incl. the 48-byte bench header,
           48..9174 (default 1472 for bw, 64 for lat)
  --duration  client: seconds to run (bw default 5; lat: the first 10%, at
           most 1000 pings, warm up); server: exit after this long
  --count  bw: frames to send; lat: measured ping-pongs after up to 1000
           warm-up ones (default 10000)
  --burst  frames per tx/rx burst, 1..512 (default 32)
  --once   (server) exit after one bw or lat run, or when the peer leaves
  --link-timeout  seconds to wait for the port's link (memif: the peer),
           default 10
)";
}

absl::StatusOr<Options> ParseArgs(int argc, char** argv) {
  Options o;
  if (argc < 2) {
    return absl::InvalidArgumentError("missing role: server or client");
  }
  o.role = argv[1];
  if (o.role == "-h" || o.role == "--help") {
    o.help = true;
    return o;
  }
  if (o.role != "server" && o.role != "client") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown role '", o.role, "' (expected server or client)"));
  }
  const bool client = o.role == "client";
  bool size_set = false;
  tools::FlagParser p;
  p.Value({"--eal"}, [&](absl::string_view, absl::string_view v) {
    o.eal = std::string(v);
    return absl::OkStatus();
  });
  p.Value({"--port"}, [&](absl::string_view f, absl::string_view v) {
    if (v.empty()) return tools::FlagError(f, "expected a port name");
    o.port = std::string(v);
    return absl::OkStatus();
  });
  p.Value({"--size"}, [&](absl::string_view f, absl::string_view v) {
    size_set = true;
    return tools::ParseIntFlag<uint32_t>(f, v, kMinSize, kMaxSize, &o.size);
  });
  p.Real({"--duration"}, {0, 1e6, /*lo_open=*/true, false}, &o.seconds);
  p.Int<uint64_t>({"--count"}, 1, uint64_t{1} << 40, &o.count);
  p.Int<int>({"--burst"}, 1, 512, &o.burst);
  p.Real({"--link-timeout"}, {0, 3600, /*lo_open=*/true, false},
         &o.link_timeout);
  p.Choice<std::string>({"--mode"}, {{"bw", "bw"}, {"lat", "lat"}}, &o.mode);
  p.Switch({"--tx-only"}, &o.tx_only);
  p.Switch({"--once"}, &o.once);
  p.Switch({"--json"}, &o.json);
  absl::Status s = p.Parse(argc - 1, argv + 1);
  if (!s.ok()) return s;
  if (p.help()) {
    Options help;
    help.help = true;
    return help;
  }
  auto client_only = [&](bool set, const char* flag) -> absl::Status {
    if (set && !client) {
      return tools::FlagError(flag, "is a client flag");
    }
    return absl::OkStatus();
  };
  for (absl::Status c :
       {client_only(size_set, "--size"), client_only(o.count > 0, "--count"),
        client_only(o.tx_only, "--tx-only"),
        client_only(o.mode != "bw", "--mode")}) {
    if (!c.ok()) return c;
  }
  if (o.once && client) return tools::FlagError("--once", "is a server flag");
  if (o.tx_only && o.mode != "bw") {
    return tools::FlagError("--tx-only", "needs --mode bw");
  }
  if (!size_set) o.size = o.mode == "lat" ? 64 : 1472;
  if (client && o.seconds == 0 && o.count == 0) {
    if (o.mode == "bw") o.seconds = 5;
    if (o.mode == "lat") o.count = 10000;
  }
  return o;
}

}  // namespace braid::dpdkraw

#include "tools/braid_perf/flags.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tools/common/flag_parser.h"
#include "tools/common/protocol_flags.h"

namespace braid::perf {

const char* TestName(Test t) {
  switch (t) {
    case Test::kBw:
      return "bw";
    case Test::kLat:
      return "lat";
    case Test::kRate:
      return "rate";
  }
  return "?";
}

const char* PerfUsage() {
  return R"(usage:
  braid-perf --server [--bind ADDR:PORT] [--persistent] [common flags]
             (--persistent: serve clients one after another until SIGINT /
             SIGTERM, which print --stats and exit 0, or 1 if any run failed
             or was abandoned by its client)
  braid-perf --client HOST:PORT [--test bw|lat|rate] [-s SIZE | -a] [-n ITERS | -D SECONDS]
             [--window W] [common flags]

  --test bw    (default) one way, W messages outstanding; goodput (default -s 65536, W 32)
  --test lat   ping-pong; one-way latency = RTT/2 (default -s 64)
  --test rate  one way, small messages; messages/s (default -s 64, W 1024)
  -s SIZE      message size in bytes, 16..64M (suffixes k/K = KiB,
               m/M = MiB, g/G = GiB)
  -a           size sweep 16, 32, ... up to --max-size (default 8M); large
               sizes are capped at 256 MiB of traffic each
  -n ITERS     messages (bw, rate) or ping-pongs (lat) per size
  -D SECONDS   run each size for this long instead of -n
  --window W   messages outstanding (bw, rate)
  --no-verify  skip the payload comparison (ids and duplicates still checked)

common flags (give the impairment flags to both sides to impair acks too):
  --bind ADDR:PORT   local address (server default 0.0.0.0:18515)
  --paths N          entropy values per peer, 1..256 (default 16)
  --entropy-sockets N  UDP source ports opened (default 2 x paths, spares
                     for recycling failed paths); with --backend dpdk the
                     source ports used
  --spray-run N      datagrams sent in a row on one path before the next,
                     1..1024 (default: as many as one 64 KiB GSO send
                     holds, 44 at MTU 1500)
  --spray-choices N  each run goes on the least loaded of the next N paths
                     in round-robin order, 1..8 (default 2; 1 = round robin)
  --ack-every N      ack after N data packets, 1..65536 (default 8)
  --ack-delay-us U   or after U microseconds, 0..1000000 (default 10)
  --mode spray|gbn   multipath spraying or the go-back-N baseline
  --cc swift|none    congestion control
  --poll | --block   busy-poll (default) or block on the endpoint's fd
  --mtu M            IP MTU; datagram = M - 28 (IPv4) (default 1500)
  --gso/--no-gso --gro/--no-gro   UDP segmentation/receive offload
  --connect/--no-connect   connect each source-port socket to its first
                     peer (default on when --bind names a specific IP)
  --backend udp|dpdk|verbs_ud   what moves the datagrams (default udp: kernel
                     sockets). dpdk needs --bind with this side's own IP
                     and busy-polls (no --block); docs/dpdk.md
  --dpdk-eal "ARGS"  EAL arguments, e.g. "--no-huge -m 512 --no-pci
                     --file-prefix=s --vdev=net_memif0,role=server,socket=/tmp/m"
  --dpdk-port PORT   port name (PCI address or vdev name), or a vdev's full
                     arguments to create it (default: the only port)
  --dpdk-next-hop-mac MAC  send every frame to this MAC (no ARP/ND)
  --dpdk-gateway IP  router for peers outside --dpdk-prefix-len (default
                     none: every peer on-link, resolved by ARP/ND)
  --dpdk-prefix-len N  on-link prefix of --bind's IP (default 24 / 64)
  --dpdk-local-mac MAC  source MAC (default: the port's)
  --dpdk-src-port-base P  entropy i sends from source port P + i
  --ud-device DEV    with --backend verbs_ud: the RDMA device (ibv_devices;
                     default the first); the server prints its address
                     [gid]/qpn, which the client takes as --client;
                     busy-polled; docs/verbs-ud.md
  --ud-port N        the device's port (default 1)
  --ud-gid-index N   GID table index (default 0; RoCE v2: the v2 GID of
                     your IP, see show_gids)
  --ud-qkey K        Q_Key both sides use (default 0x1ba1d000)
                     (default 49152)
  --security none|auth|encrypt  packet protection (default none): auth
                     authenticates every datagram (AES-GMAC), encrypt
                     also encrypts its frames (AES-GCM); both sides must
                     use the same mode and --key-file (docs/security.md)
  --key-file PATH    the security domain key: 32 raw bytes or 64 hex
                     digits, readable by its owner only
  --rx-timestamps auto|on|off   kernel receive timestamps (default auto:
                     on with --block; when busy-polling, on after two
                     polls more than 250 us apart (a descheduled poller)
                     until polls have been prompt for 10 ms)
  --loss P --dup P --reorder P --corrupt P   TEST impairments of outbound
                     datagrams, probabilities in [0, 1); a corrupted
                     datagram is discarded as the receiver's UDP checksum
                     would (counted apart from --loss under --stats)
  --seed S           impairment seed (default 1)
  --time-limit S     hard limit on the whole run (default 60); exit 3 past it
  --interval S       bw/rate client: every S seconds, one line on stderr
                     {"interval_s":T,"mono_s":M,"gbps":G,"messages":N}: the
                     goodput of the interval ending T seconds into the run
                     (M: that moment on CLOCK_MONOTONIC)
  --stats            print the endpoint's counters after the run: the
                     client on stdout after its table (with --json, as the
                     object's "stats"), the server on stderr (with --json
                     as a last line {"server_stats":{...}} on its stdout,
                     after its one object per run)
  --json             JSON on stdout instead of the table: the client prints
                     one object; the server one line (an object) per run,
                     i.e. per size of a client's -a sweep

exit: 0 ok, 1 verification/transport failure, 2 bad flags, 3 time limit.
)";
}

uint64_t DefaultIters(Test t) {
  switch (t) {
    case Test::kBw:
      return 10000;
    case Test::kLat:
      return 10000;
    case Test::kRate:
      return 500000;
  }
  return 10000;
}

uint64_t ItersForSize(const PerfFlags& f, uint32_t size) {
  uint64_t n = f.iters ? f.iters : DefaultIters(f.test);
  if (f.sweep) {
    const uint64_t cap =
        std::max<uint64_t>(16, (256ull << 20) / std::max(size, 1u));
    n = std::min(n, cap);
  }
  return n;
}

uint32_t WindowForSize(const PerfFlags& f, uint32_t size) {
  if (f.test == Test::kLat) return 1;
  uint32_t w = f.window;
  if (w == 0) w = f.test == Test::kRate ? 1024 : 32;
  const uint64_t cap =
      std::max<uint64_t>(1, (64ull << 20) / std::max(size, 1u));
  return static_cast<uint32_t>(std::min<uint64_t>(w, cap));
}

std::string ResolvedBind(const PerfFlags& f) {
  if (!f.bind.empty()) return f.bind;
  if (f.role == Role::kServer) return "0.0.0.0:18515";
  if (f.server.family == NetAddr::Family::kIpv6) {
    static const std::array<uint8_t, 16> kLoop6 = {0, 0, 0, 0, 0, 0, 0, 0,
                                                   0, 0, 0, 0, 0, 0, 0, 1};
    return f.server.ip == kLoop6 ? "[::1]:0" : "[::]:0";
  }
  return f.server.ip[0] == 127 ? "127.0.0.1:0" : "0.0.0.0:0";
}

namespace {

absl::StatusOr<uint64_t> ParseSize(absl::string_view flag,
                                   absl::string_view v) {
  uint64_t mult = 1;
  if (!v.empty()) {
    const char last = v.back();
    if (last == 'k' || last == 'K') mult = 1024;
    if (last == 'm' || last == 'M') mult = 1024 * 1024;
    if (last == 'g' || last == 'G') mult = 1024 * 1024 * 1024;
    if (mult != 1) v.remove_suffix(1);
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(v, &n)) {
    return tools::FlagError(
        flag, absl::StrCat("expected a size in bytes (suffix k, m or g for "
                           "KiB, MiB or GiB), got '",
                           v, "'"));
  }
  if (n > UINT64_MAX / mult) {
    return tools::FlagError(flag, absl::StrCat("'", v, "' is too large"));
  }
  return n * mult;
}

// "ip:port" / "[ip6]:port" as NetAddr::Parse takes them, or "name:port"
// resolved with getaddrinfo (IPv4 preferred: the server binds 0.0.0.0 by
// default).
absl::StatusOr<NetAddr> ParseOrResolve(const std::string& text) {
  absl::StatusOr<NetAddr> a = NetAddr::Parse(text);
  if (a.ok()) return a;
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || text[0] == '[') return a;
  const std::string host = text.substr(0, colon);
  // "::1:5" is itself an IPv6 address (::0.1:0.5, not ::1 port 5): an
  // IPv6 host needs brackets, and no host name has a colon.
  if (host.find(':') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': an IPv6 address needs brackets: [", host,
                     "]:", text.substr(colon + 1)));
  }
  uint32_t port = 0;
  if (!absl::SimpleAtoi(text.substr(colon + 1), &port) || port < 1 ||
      port > 65535) {
    return a;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': not an address, and resolving '", host,
                     "' failed: ", gai_strerror(rc)));
  }
  std::optional<NetAddr> v4, v6;
  for (addrinfo* p = res; p != nullptr; p = p->ai_next) {
    if (p->ai_family == AF_INET && !v4) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(p->ai_addr);
      v4 = NetAddr::Ipv4(ntohl(sin->sin_addr.s_addr),
                         static_cast<uint16_t>(port));
    } else if (p->ai_family == AF_INET6 && !v6) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(p->ai_addr);
      NetAddr n;
      n.family = NetAddr::Family::kIpv6;
      n.port = static_cast<uint16_t>(port);
      std::memcpy(n.ip.data(), &sin6->sin6_addr, 16);
      v6 = n;
    }
  }
  freeaddrinfo(res);
  if (v4) return *v4;
  if (v6) return *v6;
  return absl::InvalidArgumentError(
      absl::StrCat("'", host, "' has no IPv4 or IPv6 address"));
}

}  // namespace

namespace {

// What the flags said beyond PerfFlags' fields, for the checks that combine
// several flags.
struct Given {
  bool role = false, size = false, iters = false, max_size = false;
  std::string server_text;
};

// A message size flag (-s, --max-size): 16..64M, suffixes k/M/g.
absl::Status MessageSize(absl::string_view flag, absl::string_view v,
                         absl::string_view why_min, uint32_t* out) {
  absl::StatusOr<uint64_t> n = ParseSize(flag, v);
  if (!n.ok()) return n.status();
  if (*n < kMinMessageBytes || *n > kMaxMessageBytes) {
    return tools::FlagError(
        flag, absl::StrCat(*n, " bytes is outside [", kMinMessageBytes,
                           ", 64M]", why_min));
  }
  *out = static_cast<uint32_t>(*n);
  return absl::OkStatus();
}

void AddRunFlags(tools::FlagParser& p, PerfFlags& f, Given& g) {
  auto role = [&f, &g](Role r) {
    if (g.role)
      return absl::InvalidArgumentError("give one of --server, --client");
    g.role = true;
    f.role = r;
    return absl::OkStatus();
  };
  p.Switch({"--server"},
           [role](absl::string_view) { return role(Role::kServer); });
  p.Value({"--client", "-c"},
          [role, &g](absl::string_view, absl::string_view v) {
            g.server_text = std::string(v);
            return role(Role::kClient);
          });
  p.Value({"--bind", "-b"}, [&f](absl::string_view, absl::string_view v) {
    f.bind = std::string(v);
    return absl::OkStatus();
  });
  p.Choice<Test>(
      {"--test", "-t"},
      {{"bw", Test::kBw}, {"lat", Test::kLat}, {"rate", Test::kRate}}, &f.test);
  p.Value(
      {"-s", "--size"}, [&f, &g](absl::string_view flag, absl::string_view v) {
        f.sizes = {0};
        g.size = true;
        return MessageSize(flag, v,
                           " (every message carries a 16-byte id/check header)",
                           &f.sizes[0]);
      });
  p.Switch({"-a", "--all"}, &f.sweep);
  p.Value({"--max-size"},
          [&f, &g](absl::string_view flag, absl::string_view v) {
            g.max_size = true;
            return MessageSize(flag, v, "", &f.max_size);
          });
  p.Value({"-n", "--iters"},
          [&f, &g](absl::string_view flag, absl::string_view v) {
            g.iters = true;
            return tools::ParseIntFlag<uint64_t>(flag, v, 1, uint64_t{1} << 40,
                                                 &f.iters);
          });
  p.Real({"-D", "--duration"}, {0, 86400, true, false}, &f.seconds);
  p.Int({"--window", "-w"}, 1, 16384, &f.window);
  p.Switch({"--poll"}, &f.block, false);
  p.Switch({"--block"}, &f.block, true);
  p.Real({"--time-limit"}, {0, 86400, true, false}, &f.time_limit);
  p.Real({"--interval"}, {0, 3600, true, false}, &f.interval);
  p.Switch({"--json"}, &f.json);
  p.Switch({"--stats"}, &f.stats);
  p.Switch({"--persistent"}, &f.persistent);
  p.Switch({"--no-verify"}, &f.verify, false);
}

void AddEndpointFlags(tools::FlagParser& p, PerfFlags& f) {
  EndpointOptions& e = f.endpoint;
  tools::AddProtocolFlags(p, &e.protocol);
  p.Choice<Mode>({"--mode"}, tools::ModeChoices(), &e.protocol.mode);
  p.Int({"--ack-every"}, 1, 65536, &e.protocol.ack_every_packets);
  p.Value({"--ack-delay-us"}, [&e](absl::string_view flag,
                                   absl::string_view v) {
    uint64_t us = 0;
    absl::Status s = tools::ParseIntFlag<uint64_t>(flag, v, 0, 1000000, &us);
    if (s.ok()) e.protocol.ack_delay = DurationNs::Micros(us);
    return s;
  });
  // Source ports: sockets of the UDP backend, entropy values (consecutive
  // source ports) of the dpdk backend.
  p.Value({"--entropy-sockets"},
          [&e](absl::string_view flag, absl::string_view v) {
            uint16_t n = 0;
            absl::Status s = tools::ParseIntFlag<uint16_t>(flag, v, 1, 256, &n);
            if (s.ok()) {
              e.udp.entropy_sockets = n;
              e.dpdk.entropies = n;
              e.ud.entropies = n;
            }
            return s;
          });
  p.Int({"--mtu"}, 576, 65535, &e.mtu);
  p.Switch({"--gso"}, &e.udp.gso, true);
  p.Switch({"--no-gso"}, &e.udp.gso, false);
  p.Switch({"--gro"}, &e.udp.gro, true);
  p.Switch({"--no-gro"}, &e.udp.gro, false);
  p.Switch({"--connect"}, &e.udp.connect_sockets, true);
  p.Switch({"--no-connect"}, &e.udp.connect_sockets, false);
  p.Choice<RxTimestamps>({"--rx-timestamps"},
                         {{"auto", RxTimestamps::kAuto},
                          {"on", RxTimestamps::kAlways},
                          {"off", RxTimestamps::kNever}},
                         &e.udp.rx_timestamps);
  p.Value({"--backend"}, [&e](absl::string_view flag, absl::string_view v) {
    absl::StatusOr<BackendKind> b = ParseBackend(v);
    if (!b.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": ", b.status().message()));
    }
    e.backend = *b;
    return absl::OkStatus();
  });
  const auto text = [](std::string* out) {
    return [out](absl::string_view, absl::string_view v) {
      *out = std::string(v);
      return absl::OkStatus();
    };
  };
  p.Value({"--dpdk-eal"}, text(&e.dpdk.eal_args));
  p.Value({"--dpdk-port"}, text(&e.dpdk.port));
  p.Value({"--dpdk-next-hop-mac"}, text(&e.dpdk.next_hop_mac));
  p.Value({"--dpdk-gateway"}, text(&e.dpdk.gateway));
  p.Value({"--dpdk-local-mac"}, text(&e.dpdk.local_mac));
  p.Int({"--dpdk-prefix-len"}, 1, 128, &e.dpdk.prefix_len);
  p.Int({"--dpdk-src-port-base"}, 1, 65535, &e.dpdk.src_port_base);
  p.Value({"--ud-device"}, text(&e.ud.device));
  p.Int({"--ud-port"}, 1, 255, &e.ud.port);
  p.Int({"--ud-gid-index"}, 0, 255, &e.ud.gid_index);
  p.Int({"--ud-qkey"}, 0, 0x7fffffff, &e.ud.qkey);
  p.Value({"--security"}, [&e](absl::string_view flag, absl::string_view v) {
    absl::StatusOr<SecurityMode> m = ParseSecurityMode(v);
    if (!m.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": ", m.status().message()));
    }
    e.security.mode = *m;
    return absl::OkStatus();
  });
  p.Value({"--key-file"}, [&e](absl::string_view flag, absl::string_view v) {
    absl::StatusOr<std::string> k = LoadDomainKey(v);
    if (!k.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": ", k.status().message()));
    }
    e.security.domain_key = *std::move(k);
    return absl::OkStatus();
  });
  // Test impairments of outbound datagrams: probabilities in [0, 1).
  const tools::RealRange probability{0, 1, false, true};
  TestImpairments& im = f.impair;
  p.Real({"--loss"}, probability, &im.drop);
  p.Real({"--dup"}, probability, &im.duplicate);
  p.Real({"--reorder"}, probability, &im.reorder);
  p.Real({"--corrupt"}, probability, &im.corrupt);
  p.Int({"--seed"}, 0, UINT64_MAX, &f.seed);
}

// --backend verbs_ud and the --ud-* flags.
absl::Status CheckVerbsUd(const PerfFlags& f) {
  const VerbsUdBackendOptions& u = f.endpoint.ud;
  const VerbsUdBackendOptions defaults;
  const bool ud_flags = !u.device.empty() || u.port != defaults.port ||
                        u.gid_index != defaults.gid_index ||
                        u.qkey != defaults.qkey;
  if (f.endpoint.backend != BackendKind::kVerbsUd) {
    if (ud_flags) {
      return absl::InvalidArgumentError(
          "the --ud-* flags apply only with --backend verbs_ud");
    }
    return absl::OkStatus();
  }
  if (f.block) {
    return absl::InvalidArgumentError(
        "--backend verbs_ud is busy-polled: --block does not apply");
  }
  if (!f.bind.empty()) {
    return absl::InvalidArgumentError(
        "--backend verbs_ud takes no --bind: the endpoint's address is its "
        "UD queue pair's ([gid]/qpn, printed by the server)");
  }
  if (f.role == Role::kClient && f.server.family != NetAddr::Family::kIbUd) {
    return absl::InvalidArgumentError(
        "--backend verbs_ud: --client needs the server's UD address "
        "[gid]/qpn (the server prints it)");
  }
  return absl::OkStatus();
}

// --backend and the flags that belong to one backend.
absl::Status CheckBackend(const PerfFlags& f) {
  if (absl::Status s = CheckVerbsUd(f); !s.ok()) return s;
  const DpdkBackendOptions& d = f.endpoint.dpdk;
  const bool dpdk_flags = !d.eal_args.empty() || !d.port.empty() ||
                          !d.next_hop_mac.empty() || !d.gateway.empty() ||
                          !d.local_mac.empty() || d.prefix_len != 0 ||
                          d.src_port_base != 0;
  if (f.endpoint.backend != BackendKind::kDpdk) {
    if (dpdk_flags) {
      return absl::InvalidArgumentError(
          "the --dpdk-* flags apply only with --backend dpdk");
    }
    return absl::OkStatus();
  }
  if (f.block) {
    return absl::InvalidArgumentError(
        "--backend dpdk is busy-polled: --block does not apply");
  }
  absl::StatusOr<NetAddr> b =
      NetAddr::Parse(f.bind.empty() ? "0.0.0.0:0" : f.bind, true);
  if (!b.ok() || b->IsWildcard()) {
    return absl::InvalidArgumentError(
        "--backend dpdk needs --bind IP:PORT with this side's own IP (there "
        "is no kernel to choose one)");
  }
  return absl::OkStatus();
}

// --security and --key-file go together.
absl::Status CheckSecurity(const PerfFlags& f) {
  const SecurityOptions& s = f.endpoint.security;
  if (s.mode == SecurityMode::kNone && !s.domain_key.empty()) {
    return absl::InvalidArgumentError(
        "--key-file applies only with --security auth or encrypt");
  }
  if (s.mode != SecurityMode::kNone && s.domain_key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--security ", SecurityModeName(s.mode),
                     " needs --key-file PATH (the security domain key)"));
  }
  return absl::OkStatus();
}

// The checks that need several flags; resolves --client's address.
absl::Status CheckCombinations(PerfFlags& f, const Given& g) {
  if (!g.role) {
    return absl::InvalidArgumentError("give --server or --client HOST:PORT");
  }
  if (f.role == Role::kClient) {
    absl::StatusOr<NetAddr> a = ParseOrResolve(g.server_text);
    if (!a.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--client: ", a.status().message()));
    }
    // [::ffff:a.b.c.d]:p as a.b.c.d:p: completions name the peer so, and
    // the client matches replies against f.server.
    f.server = a->Canonical();
  } else if (g.size || f.sweep || g.iters || f.seconds > 0 || f.window != 0) {
    return absl::InvalidArgumentError(
        "the server takes no -s/-a/-n/-D/--window: the client chooses them");
  }
  if (g.size && f.sweep) {
    return absl::InvalidArgumentError("give -s SIZE or -a, not both");
  }
  if (g.max_size && !f.sweep) {
    return absl::InvalidArgumentError("--max-size applies only with -a");
  }
  if (f.window != 0 && f.test == Test::kLat) {
    return absl::InvalidArgumentError(
        "--window applies to bw and rate; lat keeps one message in flight");
  }
  if (!f.bind.empty()) {
    absl::StatusOr<NetAddr> b =
        NetAddr::Parse(f.bind, /*allow_port_zero=*/true);
    if (!b.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--bind: ", b.status().message()));
    }
    if (f.role == Role::kClient && b->family != f.server.family &&
        !(b->family == NetAddr::Family::kIpv6 && b->IsWildcard())) {
      return absl::InvalidArgumentError(
          absl::StrCat("--bind ", f.bind, " and --client ", g.server_text,
                       " are of different address families"));
    }
  }
  if (g.iters && f.seconds > 0) {
    return absl::InvalidArgumentError("give -n ITERS or -D SECONDS, not both");
  }
  if (absl::Status s = CheckSecurity(f); !s.ok()) return s;
  return CheckBackend(f);
}

}  // namespace

absl::StatusOr<PerfFlags> ParsePerfFlags(int argc, char** argv) {
  PerfFlags f;
  f.command_line = tools::JoinArgs(argc, argv, 0);
  Given given;
  tools::FlagParser p;
  AddRunFlags(p, f, given);
  AddEndpointFlags(p, f);
  absl::Status s = p.Parse(argc, argv);
  if (!s.ok()) return s;
  if (p.help()) return absl::InvalidArgumentError("help");
  s = CheckCombinations(f, given);
  if (!s.ok()) return s;
  if (f.sweep) {
    f.sizes.clear();
    for (uint64_t n = kMinMessageBytes; n <= f.max_size; n *= 2) {
      f.sizes.push_back(static_cast<uint32_t>(n));
    }
  } else if (!given.size) {
    f.sizes = {f.test == Test::kBw ? 65536u : 64u};
  }
  f.impair.seed = f.seed * 2 + (f.role == Role::kServer ? 1 : 0);
  f.endpoint.bind = ResolvedBind(f);
  f.endpoint.protocol.max_message_bytes = kMaxMessageBytes;
  return f;
}

}  // namespace braid::perf

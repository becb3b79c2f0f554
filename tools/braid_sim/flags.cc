#include "tools/braid_sim/flags.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/common/flag_parser.h"
#include "tools/common/protocol_flags.h"

namespace braid::simtool {
namespace {

absl::Status Bad(absl::string_view flag, absl::string_view why) {
  return tools::FlagError(flag, why);
}

template <typename T>
absl::Status Int(absl::string_view flag, absl::string_view v, T lo, T hi,
                 T* out) {
  return tools::ParseIntFlag(flag, v, lo, hi, out);
}

absl::Status Real(absl::string_view flag, absl::string_view v, double lo,
                  double hi, double* out) {
  return tools::ParseRealFlag(flag, v, {lo, hi}, out);
}

}  // namespace

const char* SimUsage() {
  return R"(usage: braid-sim [flags]
Runs one simulated scenario (deterministic for a given --seed) and prints a table.
A flag's value may follow it (--hosts 8) or be joined to it (--hosts=8).
Topology
  --topology T         leaf-spine | fat-tree (default leaf-spine)
  --hosts N            leaf-spine: hosts, split evenly over the leaves
                       (default 8; a multiple of --leaves, at most 254 a leaf)
  --leaves L           leaf-spine: leaf switches (default 2; 1..256)
  --spines N           leaf-spine: spine switches (default 4; 1..256)
  --k K                fat-tree: k-ary three-tier fat-tree, k pods, (k/2)^2
                       core switches, k^3/4 hosts (default 4; even, 2..64;
                       16 = 1,024 hosts)
  --hosts-per-edge H   fat-tree: hosts on each edge switch (default k/2; more
                       oversubscribes the edge tier H:(k/2))
  --link-gbps R        fabric link rate (default 100)
  --host-gbps R        host link rate (default 100)
  --delay-us D         per-link propagation delay (default 1)
  --spine-delays-us L  comma list, one delay per spine (e.g. 1,2,5,10)
  --queue-kb Q         fabric link queue, KiB (default 512)
  --mtu B              largest datagram in bytes (default 4096)
Traffic
  --traffic T          pairs | permutation | incast | all-to-all | mix
                       (default pairs; all-to-all: each host sends message m
                       to host (i + 1 + m % (hosts-1)) % hosts; mix: incast
                       onto host 0 while the other hosts run a permutation)
  --incast N           senders for incast and mix (default 8)
  --size S             message size in bytes (default 65536, min 16)
  --size-range A:B     uniform sizes in [A, B]
  --messages N         messages per sender (default 1000)
  --window W           outstanding messages per sender (default 16)
  --streams N          cycle messages over N ordered streams (default 0 = unordered)
Protocol
  --mode M             spray | gbn | both (default spray)
  --paths N            entropies per peer (default 16)
  --cc C               swift | none (default swift)
  --spray-run N        datagrams per path before switching (default 1)
  --spray-choices N    each run goes on the least loaded of the next N paths
                       in round-robin order, 1..8 (default 2; 1 = round robin)
  --dup-urgent-acks B  on | off: send acks answering a repair on two paths
                       (default on)
  --peer-timeout-ms T  sends fail after T ms of peer silence (default 50)
  --start-cwnd-kb K    a session's window starts at K KiB and doubles per RTT
                       up to the initial 512 KiB until the first queueing
                       signal (default 0: start at 512 KiB)
Impairments (repeatable)
  --impair SPEC        e.g. spine=1,dir=up,loss=0.01,start_us=0,stop_us=5000
                       spine=K names a spine (leaf-spine) or a core switch
                       (fat-tree); link=J only its link to leaf (pod) J;
                       blackhole with start_us fails the switch or link
                       mid-run; dir=up is towards the spine (core)
                       keys: spine=K|all link=J dir=up|down|both loss=P ge=PGB:PBG dup=P
                       corrupt=P ecn_kb=K blackhole delay_us=D start_us=T stop_us=T
                       reorder=P reorder_us=D (hold a packet D us, default 10,
                       so later ones on the link overtake it)
  --loss P             shorthand: random loss P on every spine, both directions
  --restart H@US       host H restarts (new incarnation) at time US microseconds
Run
  --seed X             RNG seed (default 1)
  --time-limit-ms T    simulated time limit (default 2000)
  --json               one JSON object instead of the table
  --payload P          bytes | checksum (default bytes): bytes carries every
                       payload byte and checks each message byte for byte;
                       checksum carries lengths, headers and each message's
                       16-byte header only (same packets, same table; no
                       per-byte work: for scale runs)
  --wall               also print wall-clock time (not deterministic)
  --timeline-us B      with --json: goodput per B-microsecond bin of
                       simulated time ("timeline_gbps", every host's
                       deliveries summed; default bin 100)
  --ab-demo            spray vs gbn under: clean, 1% loss on one spine, that
                       spine blackholed mid-run, that spine congested (one
                       table); the spine is the one gbn uses most when clean
Exit status: 0 if every invariant held, 1 if not, 2 on bad flags, 3 if a run
could not start or hit --time-limit-ms with sends pending (the reason goes to
stderr).
)";
}

absl::StatusOr<TimedImpairment> ParseImpairment(const std::string& spec) {
  TimedImpairment t;
  t.spine = 0;
  for (absl::string_view kv : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
    std::vector<std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    const std::string& k = p[0];
    const std::string v = p.size() > 1 ? p[1] : "";
    absl::Status s;
    if (k == "spine") {
      if (v == "all") {
        t.spine = -1;
      } else {
        s = Int<int>("--impair spine", v, 0, 4095, &t.spine);
      }
    } else if (k == "link") {
      s = Int<int>("--impair link", v, 0, 255, &t.link);
    } else if (k == "dir") {
      if (v == "up") {
        t.dir = sim::LeafSpine::Direction::kUp;
      } else if (v == "down") {
        t.dir = sim::LeafSpine::Direction::kDown;
      } else if (v == "both") {
        t.dir = sim::LeafSpine::Direction::kBoth;
      } else {
        return Bad("--impair dir", "expected up, down or both");
      }
    } else if (k == "loss") {
      s = Real("--impair loss", v, 0, 1, &t.impairment.loss);
    } else if (k == "ge") {
      std::vector<std::string> g = absl::StrSplit(v, ':');
      if (g.size() != 2) return Bad("--impair ge", "expected PGB:PBG");
      s = Real("--impair ge", g[0], 0, 1, &t.impairment.ge_p_good_to_bad);
      if (s.ok())
        s = Real("--impair ge", g[1], 0, 1, &t.impairment.ge_p_bad_to_good);
    } else if (k == "dup") {
      s = Real("--impair dup", v, 0, 1, &t.impairment.duplicate);
    } else if (k == "corrupt") {
      s = Real("--impair corrupt", v, 0, 1, &t.impairment.corrupt);
    } else if (k == "ecn_kb") {
      uint32_t kb;
      s = Int<uint32_t>("--impair ecn_kb", v, 1, 1u << 20, &kb);
      t.impairment.ecn_threshold_bytes = kb * 1024;
    } else if (k == "blackhole") {
      t.impairment.blackhole = true;
    } else if (k == "delay_us") {
      int64_t d;
      s = Int<int64_t>("--impair delay_us", v, 0, 1000000, &d);
      t.impairment.extra_delay = DurationNs::Micros(d);
    } else if (k == "reorder") {
      s = Real("--impair reorder", v, 0, 1, &t.impairment.reorder);
    } else if (k == "reorder_us") {
      int64_t d;
      s = Int<int64_t>("--impair reorder_us", v, 1, 1000000, &d);
      t.impairment.reorder_delay = DurationNs::Micros(d);
    } else if (k == "start_us" || k == "stop_us") {
      int64_t d;
      s = Int<int64_t>("--impair " + k, v, 0, int64_t{1} << 40, &d);
      (k == "start_us" ? t.start : t.stop) =
          TimeNs::Zero() + DurationNs::Micros(d);
    } else {
      return Bad("--impair", absl::StrCat("unknown key '", k, "'"));
    }
    if (!s.ok()) return s;
  }
  return t;
}

namespace {

// A duration flag in whole milliseconds, 1..3600000.
void Millis(tools::FlagParser& p, const char* name, DurationNs* out) {
  p.Value({name}, [out](absl::string_view flag, absl::string_view v) {
    int64_t ms = 0;
    absl::Status s = tools::ParseIntFlag<int64_t>(flag, v, 1, 3600000, &ms);
    if (s.ok()) *out = DurationNs::Millis(ms);
    return s;
  });
}

// Topology flags, applied to the config after parsing (they combine).
struct TopologyFlags {
  double link_gbps = 100, host_gbps = 100;
  int64_t delay_us = 1, queue_kb = 512;
  std::vector<int64_t> spine_delays;
  int hosts = 0;  // --hosts (0: not given)
  bool hosts_given = false, leaves_given = false, spines_given = false;
  bool k_given = false, hosts_per_edge_given = false;
};

void AddTopologyFlags(tools::FlagParser& p, ScenarioConfig& c,
                      TopologyFlags& t) {
  p.Choice<TopologyKind>({"--topology"},
                         {{"leaf-spine", TopologyKind::kLeafSpine},
                          {"fat-tree", TopologyKind::kFatTree}},
                         &c.topology_kind);
  p.Value({"--hosts"}, [&t](absl::string_view flag, absl::string_view v) {
    t.hosts_given = true;
    return tools::ParseIntFlag<int>(
        flag, v, 2, sim::kMaxLeaves * sim::kMaxHostsPerLeaf, &t.hosts);
  });
  p.Value({"--leaves"}, [&c, &t](absl::string_view flag, absl::string_view v) {
    t.leaves_given = true;
    return tools::ParseIntFlag<int>(flag, v, 1, sim::kMaxLeaves,
                                    &c.topology.num_leaves);
  });
  p.Value({"--spines"}, [&c, &t](absl::string_view flag, absl::string_view v) {
    t.spines_given = true;
    return tools::ParseIntFlag<int>(flag, v, 1, 256, &c.topology.num_spines);
  });
  p.Value({"--k"}, [&c, &t](absl::string_view flag, absl::string_view v) {
    t.k_given = true;
    absl::Status s =
        tools::ParseIntFlag<int>(flag, v, 2, sim::kMaxFatTreeK, &c.fat_tree.k);
    if (s.ok() && c.fat_tree.k % 2 != 0) s = Bad(flag, "must be even");
    return s;
  });
  p.Value({"--hosts-per-edge"}, [&c, &t](absl::string_view flag,
                                         absl::string_view v) {
    t.hosts_per_edge_given = true;
    return tools::ParseIntFlag<int>(flag, v, 1, sim::kMaxFatTreeHostsPerEdge,
                                    &c.fat_tree.hosts_per_edge);
  });
  p.Real({"--link-gbps"}, {0.001, 10000}, &t.link_gbps);
  p.Real({"--host-gbps"}, {0.001, 10000}, &t.host_gbps);
  p.Int({"--delay-us"}, 0, 1000000, &t.delay_us);
  p.Value({"--spine-delays-us"}, [&t](absl::string_view flag,
                                      absl::string_view v) {
    for (absl::string_view d : absl::StrSplit(v, ',')) {
      int64_t x;
      absl::Status s = tools::ParseIntFlag<int64_t>(flag, d, 0, 1000000, &x);
      if (!s.ok()) return s;
      t.spine_delays.push_back(x);
    }
    return absl::OkStatus();
  });
  p.Int({"--queue-kb"}, 1, 1 << 20, &t.queue_kb);
  p.Int({"--mtu"}, 256, 9000, &c.mtu_payload);
}

void AddTrafficFlags(tools::FlagParser& p, ScenarioConfig& c) {
  p.Choice<Traffic>({"--traffic"},
                    {{"pairs", Traffic::kPairs},
                     {"permutation", Traffic::kPermutation},
                     {"incast", Traffic::kIncast},
                     {"all-to-all", Traffic::kAllToAll},
                     {"mix", Traffic::kMix}},
                    &c.traffic);
  p.Int({"--incast"}, 1, 65535, &c.incast);
  p.Value({"--size"}, [&c](absl::string_view flag, absl::string_view v) {
    absl::Status s =
        tools::ParseIntFlag<uint32_t>(flag, v, 16, 1u << 30, &c.sizes.min);
    c.sizes.max = c.sizes.min;
    return s;
  });
  p.Value({"--size-range"}, [&c](absl::string_view flag, absl::string_view v) {
    std::vector<std::string> r = absl::StrSplit(v, ':');
    if (r.size() != 2) return Bad(flag, "expected A:B");
    absl::Status s =
        tools::ParseIntFlag<uint32_t>(flag, r[0], 16, 1u << 30, &c.sizes.min);
    if (s.ok()) {
      s = tools::ParseIntFlag<uint32_t>(flag, r[1], c.sizes.min, 1u << 30,
                                        &c.sizes.max);
    }
    return s;
  });
  p.Int({"--messages"}, 1, 10'000'000, &c.messages_per_sender);
  p.Int({"--window"}, 1, 100000, &c.window);
  p.Int({"--streams"}, 0, 4096, &c.streams);
}

void AddSimProtocolFlags(tools::FlagParser& p, SimFlags& f) {
  ScenarioConfig& c = f.config;
  std::vector<std::pair<std::string, std::vector<Mode>>> modes;
  for (const auto& [word, mode] : tools::ModeChoices()) {
    modes.push_back({word, {mode}});
  }
  modes.push_back({"both", {Mode::kSpray, Mode::kGoBackN}});
  p.Choice<std::vector<Mode>>({"--mode"}, std::move(modes), &f.modes);
  tools::AddProtocolFlags(p, &c.protocol);
  p.Choice<bool>({"--dup-urgent-acks"}, {{"on", true}, {"off", false}},
                 &c.protocol.duplicate_urgent_acks);
  Millis(p, "--peer-timeout-ms", &c.protocol.peer_timeout);
  p.Value({"--start-cwnd-kb"}, [&c](absl::string_view flag,
                                    absl::string_view v) {
    uint64_t kb = 0;
    absl::Status s = tools::ParseIntFlag<uint64_t>(flag, v, 0, 1u << 20, &kb);
    c.protocol.start_cwnd_bytes = kb * 1024;
    return s;
  });
}

void AddImpairmentFlags(tools::FlagParser& p, ScenarioConfig& c) {
  p.Value({"--impair"}, [&c](absl::string_view, absl::string_view v) {
    absl::StatusOr<TimedImpairment> t = ParseImpairment(std::string(v));
    if (!t.ok()) return t.status();
    c.impairments.push_back(*t);
    return absl::OkStatus();
  });
  p.Value({"--loss"}, [&c](absl::string_view flag, absl::string_view v) {
    TimedImpairment t;
    t.spine = -1;
    absl::Status s = tools::ParseRealFlag(flag, v, {0, 1}, &t.impairment.loss);
    c.impairments.push_back(t);
    return s;
  });
  p.Value({"--restart"}, [&c](absl::string_view flag, absl::string_view v) {
    std::vector<std::string> r = absl::StrSplit(v, '@');
    Restart rs;
    int64_t us = 0;
    absl::Status s;
    if (r.size() != 2) {
      s = Bad(flag, "expected HOST@MICROSECONDS");
    } else {
      s = tools::ParseIntFlag<int>(flag, r[0], 0, 65535, &rs.host);
      if (s.ok()) {
        s = tools::ParseIntFlag<int64_t>(flag, r[1], 0, int64_t{1} << 40, &us);
      }
    }
    rs.at = TimeNs::Zero() + DurationNs::Micros(us);
    c.restarts.push_back(rs);
    return s;
  });
}

void AddRunFlags(tools::FlagParser& p, SimFlags& f) {
  ScenarioConfig& c = f.config;
  p.Int({"--seed"}, 0, UINT32_MAX, &c.seed);
  Millis(p, "--time-limit-ms", &c.time_limit);
  p.Switch({"--json"}, &f.json);
  p.Switch({"--wall"}, &f.wall);
  p.Value({"--timeline-us"}, [&f](absl::string_view flag, absl::string_view v) {
    int64_t us = 0;
    absl::Status s = tools::ParseIntFlag<int64_t>(flag, v, 1, 1000000, &us);
    f.timeline = true;
    f.config.goodput_bin = DurationNs::Micros(us);
    return s;
  });
  p.Choice<sim::PayloadMode>({"--payload"},
                             {{"bytes", sim::PayloadMode::kBytes},
                              {"checksum", sim::PayloadMode::kChecksum}},
                             &c.payload);
  p.Switch({"--ab-demo"}, &f.ab_demo);
}

// The simulated fabric's defaults (the flags' documented defaults).
void SetDefaults(ScenarioConfig& c) {
  c.topology.num_leaves = 2;
  c.topology.hosts_per_leaf = 4;
  c.topology.num_spines = 4;
  c.topology.host_link.rate_bps = 100'000'000'000ULL;
  c.topology.fabric_link.rate_bps = 100'000'000'000ULL;
  c.topology.host_link.queue_bytes = 16u << 20;  // a deep NIC transmit queue
  c.protocol.peer_timeout = DurationNs::Millis(50);
  c.protocol.min_rto =
      DurationNs::Micros(200);  // simulated fabric: no host jitter
}

// Fills c.topology (leaf-spine) from the topology flags.
absl::Status FinishLeafSpine(const TopologyFlags& t, ScenarioConfig& c) {
  if (t.k_given || t.hosts_per_edge_given) {
    return Bad(t.k_given ? "--k" : "--hosts-per-edge",
               "applies to --topology fat-tree only");
  }
  const int leaves = c.topology.num_leaves;
  if (t.hosts_given) {
    if (t.hosts % leaves != 0) {
      return Bad("--hosts", absl::StrCat(t.hosts,
                                         " hosts do not split evenly "
                                         "over ",
                                         leaves, " leaves"));
    }
    if (t.hosts / leaves > sim::kMaxHostsPerLeaf) {
      return Bad("--hosts",
                 absl::StrCat("at most ", sim::kMaxHostsPerLeaf,
                              " hosts a leaf (", leaves, " leaves: at most ",
                              leaves * sim::kMaxHostsPerLeaf, ")"));
    }
    c.topology.hosts_per_leaf = t.hosts / leaves;
  }
  if (!t.spine_delays.empty() &&
      t.spine_delays.size() != static_cast<size_t>(c.topology.num_spines)) {
    return Bad("--spine-delays-us", "needs one delay per spine");
  }
  c.topology.fabric_link.rate_bps = static_cast<uint64_t>(t.link_gbps * 1e9);
  c.topology.host_link.rate_bps = static_cast<uint64_t>(t.host_gbps * 1e9);
  c.topology.fabric_link.delay = DurationNs::Micros(t.delay_us);
  c.topology.host_link.delay = DurationNs::Micros(t.delay_us);
  c.topology.fabric_link.queue_bytes = static_cast<uint32_t>(t.queue_kb * 1024);
  for (int64_t d : t.spine_delays) {
    sim::LinkOptions lo = c.topology.fabric_link;
    lo.delay = DurationNs::Micros(d);
    c.topology.per_spine_fabric_link.push_back(lo);
  }
  absl::Status topo = sim::ValidateLeafSpineOptions(c.topology);
  if (!topo.ok()) return Bad("topology", topo.message());
  return absl::OkStatus();
}

// Fills c.fat_tree from the topology flags.
absl::Status FinishFatTree(const TopologyFlags& t, ScenarioConfig& c) {
  if (t.hosts_given || t.leaves_given || t.spines_given ||
      !t.spine_delays.empty()) {
    return Bad(t.hosts_given    ? "--hosts"
               : t.leaves_given ? "--leaves"
               : t.spines_given ? "--spines"
                                : "--spine-delays-us",
               "applies to --topology leaf-spine only (a fat-tree is sized "
               "by --k and --hosts-per-edge)");
  }
  sim::FatTreeOptions& f = c.fat_tree;
  f.host_link = c.topology.host_link;  // the defaults' deep transmit queue
  f.host_link.rate_bps = static_cast<uint64_t>(t.host_gbps * 1e9);
  f.host_link.delay = DurationNs::Micros(t.delay_us);
  f.edge_link = c.topology.fabric_link;
  f.edge_link.rate_bps = static_cast<uint64_t>(t.link_gbps * 1e9);
  f.edge_link.delay = DurationNs::Micros(t.delay_us);
  f.edge_link.queue_bytes = static_cast<uint32_t>(t.queue_kb * 1024);
  f.core_link = f.edge_link;
  absl::Status topo = sim::ValidateFatTreeOptions(f);
  if (!topo.ok()) return Bad("topology", topo.message());
  return absl::OkStatus();
}

// Checks that need several flags, then applies the topology flags.
absl::Status Finish(const TopologyFlags& t, ScenarioConfig& c) {
  absl::Status s = c.topology_kind == TopologyKind::kFatTree
                       ? FinishFatTree(t, c)
                       : FinishLeafSpine(t, c);
  if (!s.ok()) return s;
  const ScenarioShape shape = ShapeOf(c);
  if ((c.traffic == Traffic::kIncast || c.traffic == Traffic::kMix) &&
      c.incast >= shape.hosts) {
    return Bad("--incast", absl::StrCat("needs fewer senders than hosts (",
                                        shape.hosts, ")"));
  }
  for (const TimedImpairment& i : c.impairments) {
    if (i.spine >= shape.top_switches) {
      return Bad("--impair",
                 absl::StrCat(
                     c.topology_kind == TopologyKind::kFatTree ? "core switch "
                                                               : "spine ",
                     i.spine, " does not exist (", shape.top_switches, ")"));
    }
    if (i.link >= shape.top_links) {
      return Bad(
          "--impair",
          absl::StrCat(
              "link ", i.link, " does not exist (", shape.top_links, " ",
              c.topology_kind == TopologyKind::kFatTree ? "pods" : "leaves",
              ")"));
    }
  }
  for (const Restart& r : c.restarts) {
    if (r.host >= shape.hosts) return Bad("--restart", "no such host");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SimFlags> ParseSimFlags(int argc, char** argv) {
  SimFlags f;
  SetDefaults(f.config);
  f.command_line = tools::JoinArgs(argc, argv, 1);
  TopologyFlags topology;
  tools::FlagParser p;
  AddTopologyFlags(p, f.config, topology);
  AddTrafficFlags(p, f.config);
  AddSimProtocolFlags(p, f);
  AddImpairmentFlags(p, f.config);
  AddRunFlags(p, f);
  absl::Status s = p.Parse(argc, argv);
  if (!s.ok()) return s;
  if (p.help()) {
    f.help = true;
    return f;
  }
  s = Finish(topology, f.config);
  if (!s.ok()) return s;
  if (f.ab_demo && f.config.topology_kind != TopologyKind::kLeafSpine) {
    return Bad("--ab-demo", "runs on --topology leaf-spine only");
  }
  return f;
}

std::vector<DemoCondition> DemoConditions(const ScenarioConfig& base,
                                          int impaired) {
  const int s = impaired % base.topology.num_spines;
  std::vector<DemoCondition> v;
  v.push_back({"clean", base});
  DemoCondition loss{"loss1%", base};
  TimedImpairment l;
  l.spine = s;
  l.impairment.loss = 0.01;
  loss.config.impairments.push_back(l);
  v.push_back(loss);
  DemoCondition bh{"blackhole", base};
  TimedImpairment b;
  b.spine = s;
  b.impairment.blackhole = true;
  b.start = TimeNs::Zero() + DurationNs::Micros(200);
  bh.config.impairments.push_back(b);
  v.push_back(bh);
  DemoCondition cg{"congested", base};
  cg.config.topology.per_spine_fabric_link.assign(base.topology.num_spines,
                                                  base.topology.fabric_link);
  cg.config.topology.per_spine_fabric_link[s].rate_bps =
      base.topology.fabric_link.rate_bps / 4;
  TimedImpairment e;
  e.spine = s;
  e.impairment.ecn_threshold_bytes = 64 * 1024;
  cg.config.impairments.push_back(e);
  v.push_back(cg);
  return v;
}

int DemoImpairedSpine(const std::vector<uint64_t>& gbn_spine_packets) {
  int best = 0;
  for (size_t i = 1; i < gbn_spine_packets.size(); ++i) {
    if (gbn_spine_packets[i] > gbn_spine_packets[best]) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace braid::simtool

#include "tools/braid_sim/flags.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace braid::simtool {
namespace {

absl::StatusOr<SimFlags> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "braid-sim");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseSimFlags(static_cast<int>(argv.size()), argv.data());
}

// Every flag that takes a value, with a value other than its default.
// clang-format off
const std::vector<std::pair<std::string, std::string>> kValueFlags = {
    {"--hosts", "6"}, {"--leaves", "3"}, {"--spines", "3"},
    {"--link-gbps", "40"},
    {"--host-gbps", "25"}, {"--delay-us", "3"},
    {"--spine-delays-us", "1,2,5"}, {"--queue-kb", "64"}, {"--mtu", "1500"},
    {"--traffic", "incast"}, {"--incast", "4"}, {"--size", "1024"},
    {"--size-range", "100:200"}, {"--messages", "77"}, {"--window", "5"},
    {"--streams", "2"}, {"--mode", "both"}, {"--paths", "8"},
    {"--cc", "none"}, {"--spray-run", "4"}, {"--dup-urgent-acks", "off"},
    {"--peer-timeout-ms", "20"},
    {"--impair", "spine=1,dir=up,loss=0.25,start_us=10,stop_us=90"},
    {"--loss", "0.01"}, {"--restart", "2@500"}, {"--seed", "9"},
    {"--time-limit-ms", "300"},
};
// clang-format on

std::vector<std::string> Spaced() {
  std::vector<std::string> args;
  for (const auto& [flag, value] : kValueFlags) {
    args.push_back(flag);
    args.push_back(value);
  }
  return args;
}

std::vector<std::string> Joined() {
  std::vector<std::string> args;
  for (const auto& [flag, value] : kValueFlags) {
    args.push_back(flag + "=" + value);
  }
  return args;
}

void ExpectAllValuesApplied(const SimFlags& f) {
  const ScenarioConfig& c = f.config;
  EXPECT_EQ(c.topology_kind, TopologyKind::kLeafSpine);
  EXPECT_EQ(c.topology.num_leaves, 3);
  EXPECT_EQ(c.topology.hosts_per_leaf, 2);
  EXPECT_EQ(c.topology.num_spines, 3);
  EXPECT_EQ(c.topology.fabric_link.rate_bps, 40'000'000'000ULL);
  EXPECT_EQ(c.topology.host_link.rate_bps, 25'000'000'000ULL);
  EXPECT_EQ(c.topology.fabric_link.delay, DurationNs::Micros(3));
  ASSERT_EQ(c.topology.per_spine_fabric_link.size(), 3u);
  EXPECT_EQ(c.topology.per_spine_fabric_link[2].delay, DurationNs::Micros(5));
  EXPECT_EQ(c.topology.fabric_link.queue_bytes, 64u * 1024);
  EXPECT_EQ(c.mtu_payload, 1500u);
  EXPECT_EQ(c.traffic, Traffic::kIncast);
  EXPECT_EQ(c.incast, 4);
  EXPECT_EQ(c.sizes.min, 100u);  // --size-range came after --size
  EXPECT_EQ(c.sizes.max, 200u);
  EXPECT_EQ(c.messages_per_sender, 77u);
  EXPECT_EQ(c.window, 5u);
  EXPECT_EQ(c.streams, 2);
  EXPECT_EQ(f.modes, (std::vector<Mode>{Mode::kSpray, Mode::kGoBackN}));
  EXPECT_EQ(c.protocol.paths, 8);
  EXPECT_EQ(c.protocol.cc, CcAlgorithm::kNone);
  EXPECT_EQ(c.protocol.spray_run, 4);
  EXPECT_FALSE(c.protocol.duplicate_urgent_acks);
  EXPECT_EQ(c.protocol.peer_timeout, DurationNs::Millis(20));
  ASSERT_EQ(c.impairments.size(), 2u);
  EXPECT_EQ(c.impairments[0].spine, 1);
  EXPECT_EQ(c.impairments[0].dir, sim::LeafSpine::Direction::kUp);
  EXPECT_DOUBLE_EQ(c.impairments[0].impairment.loss, 0.25);
  EXPECT_EQ(c.impairments[0].start, TimeNs::Zero() + DurationNs::Micros(10));
  EXPECT_EQ(c.impairments[0].stop, TimeNs::Zero() + DurationNs::Micros(90));
  EXPECT_EQ(c.impairments[1].spine, -1);
  EXPECT_DOUBLE_EQ(c.impairments[1].impairment.loss, 0.01);
  ASSERT_EQ(c.restarts.size(), 1u);
  EXPECT_EQ(c.restarts[0].host, 2);
  EXPECT_EQ(c.restarts[0].at, TimeNs::Zero() + DurationNs::Micros(500));
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.time_limit, DurationNs::Millis(300));
}

TEST(SimFlagsTest, EveryValueFlagAcceptsASeparateValue) {
  absl::StatusOr<SimFlags> f = Parse(Spaced());
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectAllValuesApplied(*f);
}

TEST(SimFlagsTest, EveryValueFlagAcceptsAJoinedValue) {
  absl::StatusOr<SimFlags> f = Parse(Joined());
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectAllValuesApplied(*f);
}

TEST(SimFlagsTest, EachValueFlagAloneAcceptsAJoinedValue) {
  for (const auto& [flag, value] : kValueFlags) {
    std::vector<std::string> joined = {flag + "=" + value};
    std::vector<std::string> spaced = {flag, value};
    // Flags whose value is only valid together with another flag's.
    if (flag == "--spine-delays-us") {
      joined.insert(joined.begin(), "--spines=3");
      spaced.insert(spaced.begin(), {"--spines", "3"});
    } else if (flag == "--traffic") {
      joined.insert(joined.begin(), "--incast=4");
      spaced.insert(spaced.begin(), {"--incast", "4"});
    }
    absl::StatusOr<SimFlags> j = Parse(joined);
    absl::StatusOr<SimFlags> s = Parse(spaced);
    ASSERT_TRUE(j.ok()) << flag << ": " << j.status();
    ASSERT_TRUE(s.ok()) << flag << ": " << s.status();
  }
}

TEST(SimFlagsTest, FormsMixAndTheCommandLineIsEchoedAsGiven) {
  absl::StatusOr<SimFlags> f =
      Parse({"--hosts=4", "--spines", "2", "--json", "--seed=3"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->config.topology.hosts_per_leaf, 2);
  EXPECT_EQ(f->config.topology.num_spines, 2);
  EXPECT_EQ(f->config.seed, 3u);
  EXPECT_TRUE(f->json);
  EXPECT_EQ(f->command_line, "--hosts=4 --spines 2 --json --seed=3");
}

TEST(SimFlagsTest, JoinedValueSplitsAtTheFirstEquals) {
  absl::StatusOr<SimFlags> f =
      Parse({"--impair=spine=all,dir=down,dup=0.5", "--loss=0"});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->config.impairments.size(), 2u);
  EXPECT_EQ(f->config.impairments[0].spine, -1);
  EXPECT_EQ(f->config.impairments[0].dir, sim::LeafSpine::Direction::kDown);
  EXPECT_DOUBLE_EQ(f->config.impairments[0].impairment.duplicate, 0.5);
}

TEST(SimFlagsTest, ReorderKeysSetTheLinkReordering) {
  absl::StatusOr<SimFlags> f =
      Parse({"--impair", "spine=2,reorder=0.1,reorder_us=20"});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->config.impairments.size(), 1u);
  EXPECT_DOUBLE_EQ(f->config.impairments[0].impairment.reorder, 0.1);
  EXPECT_EQ(f->config.impairments[0].impairment.reorder_delay,
            DurationNs::Micros(20));
}

TEST(SimFlagsTest, PayloadChoosesBytesOrChecksumAndDefaultsToBytes) {
  absl::StatusOr<SimFlags> f = Parse({});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->config.payload, sim::PayloadMode::kBytes);
  f = Parse({"--payload", "checksum"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->config.payload, sim::PayloadMode::kChecksum);
  f = Parse({"--payload=bytes"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->config.payload, sim::PayloadMode::kBytes);
  EXPECT_FALSE(Parse({"--payload", "none"}).ok());
}

TEST(SimFlagsTest, FlagsWithoutAValueStillWork) {
  absl::StatusOr<SimFlags> f = Parse({"--json", "--wall", "--ab-demo"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->json);
  EXPECT_TRUE(f->wall);
  EXPECT_TRUE(f->ab_demo);
  EXPECT_FALSE(f->help);
  for (const char* h : {"--help", "-h"}) {
    absl::StatusOr<SimFlags> g = Parse({h, "--bogus"});
    ASSERT_TRUE(g.ok()) << h << ": " << g.status();
    EXPECT_TRUE(g->help);
  }
}

TEST(SimFlagsTest, FatTreeFlagsBuildAFatTreeWithTheLinkRates) {
  absl::StatusOr<SimFlags> f =
      Parse({"--topology", "fat-tree", "--k", "16", "--hosts-per-edge", "12",
             "--link-gbps", "400", "--host-gbps", "100", "--queue-kb", "256",
             "--traffic", "all-to-all", "--impair",
             "spine=63,link=15,blackhole,start_us=100"});
  ASSERT_TRUE(f.ok()) << f.status();
  const ScenarioConfig& c = f->config;
  EXPECT_EQ(c.topology_kind, TopologyKind::kFatTree);
  EXPECT_EQ(c.fat_tree.k, 16);
  EXPECT_EQ(c.fat_tree.hosts_per_edge, 12);
  EXPECT_EQ(c.fat_tree.host_link.rate_bps, 100'000'000'000ULL);
  EXPECT_EQ(c.fat_tree.edge_link.rate_bps, 400'000'000'000ULL);
  EXPECT_EQ(c.fat_tree.core_link.rate_bps, 400'000'000'000ULL);
  EXPECT_EQ(c.fat_tree.core_link.queue_bytes, 256u * 1024);
  EXPECT_EQ(c.fat_tree.host_link.queue_bytes, 16u << 20);
  EXPECT_EQ(c.traffic, Traffic::kAllToAll);
  ASSERT_EQ(c.impairments.size(), 1u);
  EXPECT_EQ(c.impairments[0].spine, 63);
  EXPECT_EQ(c.impairments[0].link, 15);
  EXPECT_EQ(ShapeOf(c).hosts, 16 * 8 * 12);
}

TEST(SimFlagsTest, TimelineSetsTheGoodputBin) {
  absl::StatusOr<SimFlags> f = Parse({"--json", "--timeline-us", "20"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->timeline);
  EXPECT_EQ(f->config.goodput_bin, DurationNs::Micros(20));
  f = Parse({"--json"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->timeline);
  EXPECT_FALSE(Parse({"--timeline-us", "0"}).ok());
}

TEST(SimFlagsTest, BadFlagsAreErrorsNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;  // the whole status message
  };
  const std::vector<Case> cases = {
      // Flags without a value refuse a joined one.
      {{"--json=1"}, "--json: takes no value"},
      {{"--wall="}, "--wall: takes no value"},
      {{"--ab-demo=yes"}, "--ab-demo: takes no value"},
      {{"--help=1"}, "--help: takes no value"},
      // Unknown flags, in either form.
      {{"--hots=8"}, "--hots: unknown flag"},
      {{"--hots", "8"}, "--hots: unknown flag"},
      {{"--hots"}, "--hots: needs a value (or unknown flag)"},
      {{"-hosts=8"}, "-hosts=8: needs a value (or unknown flag)"},
      // A missing value; an empty joined value is a (bad) value.
      {{"--hosts"}, "--hosts: needs a value (or unknown flag)"},
      {{"--hosts="}, "--hosts: expected an integer in 2..65024, got ''"},
      // Ranges are the topology's: leaves of at most 254 hosts.
      {{"--hosts", "512"},
       "--hosts: at most 254 hosts a leaf (2 leaves: at most 508)"},
      {{"--hosts", "1024", "--leaves", "4"},
       "--hosts: at most 254 hosts a leaf (4 leaves: at most 1016)"},
      // Value checks are the same in both forms.
      {{"--hosts", "7"}, "--hosts: 7 hosts do not split evenly over 2 leaves"},
      {{"--hosts=7"}, "--hosts: 7 hosts do not split evenly over 2 leaves"},
      {{"--leaves=257"}, "--leaves: expected an integer in 1..256, got '257'"},
      {{"--spines=0"}, "--spines: expected an integer in 1..256, got '0'"},
      // Each topology's own flags, and only those.
      {{"--k=5", "--topology=fat-tree"}, "--k: must be even"},
      {{"--k=66"}, "--k: expected an integer in 2..64, got '66'"},
      {{"--k=8"}, "--k: applies to --topology fat-tree only"},
      {{"--hosts-per-edge=4"},
       "--hosts-per-edge: applies to --topology fat-tree only"},
      {{"--topology=fat-tree", "--spines=4"},
       "--spines: applies to --topology leaf-spine only (a fat-tree is sized "
       "by --k and --hosts-per-edge)"},
      {{"--topology=fat-tree", "--hosts=16"},
       "--hosts: applies to --topology leaf-spine only (a fat-tree is sized "
       "by --k and --hosts-per-edge)"},
      {{"--topology=torus"}, "--topology: expected leaf-spine or fat-tree"},
      {{"--topology=fat-tree", "--ab-demo"},
       "--ab-demo: runs on --topology leaf-spine only"},
      // Impairments name switches and links that exist.
      {{"--topology=fat-tree", "--impair=spine=4,blackhole"},
       "--impair: core switch 4 does not exist (4)"},
      {{"--impair=spine=4,blackhole"}, "--impair: spine 4 does not exist (4)"},
      {{"--impair=spine=1,link=2,blackhole"},
       "--impair: link 2 does not exist (2 leaves)"},
      {{"--topology=fat-tree", "--k=8", "--impair=spine=1,link=8,blackhole"},
       "--impair: link 8 does not exist (8 pods)"},
      {{"--topology=fat-tree", "--traffic=mix", "--incast=16"},
       "--incast: needs fewer senders than hosts (16)"},
      {{"--mode=rc"}, "--mode: expected spray, gbn or both"},
      {{"--traffic=all"},
       "--traffic: expected pairs, permutation, incast, all-to-all or mix"},
      {{"--size-range=5"}, "--size-range: expected A:B"},
      {{"--impair=spine=1,color=red"}, "--impair: unknown key 'color'"},
      {{"--impair=spine=1,reorder=2"},
       "--impair reorder: expected a number in 0..1, got '2'"},
      {{"--impair=spine=1,reorder_us=0"},
       "--impair reorder_us: expected an integer in 1..1000000, got '0'"},
      {{"--restart=1"}, "--restart: expected HOST@MICROSECONDS"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SimFlags> f = Parse(c.args);
    ASSERT_FALSE(f.ok()) << testing::PrintToString(c.args);
    EXPECT_EQ(f.status().message(), c.message)
        << testing::PrintToString(c.args);
  }
}

}  // namespace
}  // namespace braid::simtool

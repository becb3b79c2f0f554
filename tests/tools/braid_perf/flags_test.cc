#include "tools/braid_perf/flags.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace braid::perf {
namespace {

absl::StatusOr<PerfFlags> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "braid-perf");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParsePerfFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(PerfFlagsTest, ClientDefaultsToBwOf64KiBOnLoopback) {
  absl::StatusOr<PerfFlags> f = Parse({"--client", "127.0.0.1:9000"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->role, Role::kClient);
  EXPECT_EQ(f->test, perf::Test::kBw);
  EXPECT_EQ(f->sizes, std::vector<uint32_t>{65536});
  EXPECT_EQ(f->endpoint.bind, "127.0.0.1:0");
  EXPECT_FALSE(f->block);
  EXPECT_EQ(f->time_limit, 60);
}

TEST(PerfFlagsTest, EveryDocumentedFlagIsAccepted) {
  // clang-format off
  absl::StatusOr<PerfFlags> f = Parse(
      {"--client", "[::1]:7000", "--test", "rate", "-s", "4k", "-D", "1.5",
       "--paths", "4", "--mode", "gbn", "--cc", "none", "--block",
       "--mtu", "9000", "--no-gso", "--no-gro", "--loss", "0.01",
       "--dup", "0.02", "--reorder", "0.03", "--corrupt", "0.04",
       "--seed", "7", "--window=8", "--json", "--stats", "--time-limit", "20",
       "--ack-every", "64", "--ack-delay-us", "50", "--rx-timestamps", "off"});
  // clang-format on
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->test, perf::Test::kRate);
  EXPECT_EQ(f->sizes, std::vector<uint32_t>{4096});
  EXPECT_DOUBLE_EQ(f->seconds, 1.5);
  EXPECT_EQ(f->endpoint.protocol.paths, 4);
  EXPECT_EQ(f->endpoint.protocol.mode, Mode::kGoBackN);
  EXPECT_EQ(f->endpoint.protocol.cc, CcAlgorithm::kNone);
  EXPECT_TRUE(f->block);
  EXPECT_EQ(f->endpoint.mtu, 9000u);
  EXPECT_FALSE(f->endpoint.udp.gso);
  EXPECT_FALSE(f->endpoint.udp.gro);
  EXPECT_DOUBLE_EQ(f->impair.drop, 0.01);
  EXPECT_DOUBLE_EQ(f->impair.duplicate, 0.02);
  EXPECT_DOUBLE_EQ(f->impair.reorder, 0.03);
  EXPECT_DOUBLE_EQ(f->impair.corrupt, 0.04);
  EXPECT_EQ(f->seed, 7u);
  EXPECT_EQ(f->window, 8u);
  EXPECT_TRUE(f->json);
  EXPECT_TRUE(f->stats);
  EXPECT_EQ(f->endpoint.bind, "[::1]:0");
  EXPECT_EQ(f->endpoint.protocol.ack_every_packets, 64u);
  EXPECT_EQ(f->endpoint.protocol.ack_delay, DurationNs::Micros(50));
  EXPECT_EQ(f->endpoint.udp.rx_timestamps, RxTimestamps::kNever);
}

TEST(PerfFlagsTest, SweepRunsPowersOfTwoUpToMaxSize) {
  absl::StatusOr<PerfFlags> f =
      Parse({"--client", "127.0.0.1:9000", "-a", "--max-size", "256"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->sizes, (std::vector<uint32_t>{16, 32, 64, 128, 256}));
}

TEST(PerfFlagsTest, SweepCapsTrafficOfLargeSizes) {
  absl::StatusOr<PerfFlags> f =
      Parse({"--client", "127.0.0.1:9000", "-a", "-n", "100000"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(ItersForSize(*f, 64), 100000u);
  EXPECT_EQ(ItersForSize(*f, 8u << 20), 32u);
}

TEST(PerfFlagsTest, WindowIsCappedBySenderBufferMemory) {
  absl::StatusOr<PerfFlags> f =
      Parse({"--client", "127.0.0.1:9000", "--window", "1000"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(WindowForSize(*f, 64), 1000u);
  EXPECT_EQ(WindowForSize(*f, 8u << 20), 8u);
}

TEST(PerfFlagsTest, ServerSideImpairmentSeedDiffersFromClientSeed) {
  absl::StatusOr<PerfFlags> s = Parse({"--server", "--seed", "5"});
  absl::StatusOr<PerfFlags> c =
      Parse({"--client", "127.0.0.1:1", "--seed", "5"});
  ASSERT_TRUE(s.ok() && c.ok());
  EXPECT_NE(s->impair.seed, c->impair.seed);
  EXPECT_EQ(s->endpoint.bind, "0.0.0.0:18515");
}

TEST(PerfFlagsTest, BadFlagsAreRejectedWithTheFlagNamed) {
  struct Case {
    std::vector<std::string> args;
    std::string mention;
  };
  const std::vector<Case> cases = {
      {{}, "--server or --client"},
      {{"--client", "127.0.0.1:1", "--bogus"}, "--bogus"},
      {{"--client", "nohost"}, "--client"},
      {{"--client", "127.0.0.1:1", "--test", "foo"}, "--test"},
      {{"--client", "127.0.0.1:1", "-s", "8"}, "-s"},
      {{"--client", "127.0.0.1:1", "-s", "65M"}, "-s"},
      {{"--client", "127.0.0.1:1", "-s", "abc"}, "-s"},
      {{"--client", "127.0.0.1:1", "-s", "64", "-a"}, "not both"},
      {{"--client", "127.0.0.1:1", "-n", "5", "-D", "1"}, "not both"},
      {{"--client", "127.0.0.1:1", "-n", "0"}, "-n"},
      {{"--client", "127.0.0.1:1", "-D", "-1"}, "-D"},
      {{"--client", "127.0.0.1:1", "--loss", "1.5"}, "--loss"},
      {{"--client", "127.0.0.1:1", "--dup", "x"}, "--dup"},
      {{"--client", "127.0.0.1:1", "--paths", "0"}, "--paths"},
      {{"--client", "127.0.0.1:1", "--paths", "300"}, "--paths"},
      {{"--client", "127.0.0.1:1", "--mode", "rc"}, "--mode"},
      {{"--client", "127.0.0.1:1", "--cc", "cubic"}, "--cc"},
      {{"--client", "127.0.0.1:1", "--mtu", "100"}, "--mtu"},
      {{"--client", "127.0.0.1:1", "--ack-every", "0"}, "--ack-every"},
      {{"--client", "127.0.0.1:1", "--rx-timestamps", "yes"},
       "--rx-timestamps"},
      {{"--client", "127.0.0.1:1", "--ack-delay-us", "2000000"},
       "--ack-delay-us"},
      {{"--client", "127.0.0.1:1", "--window"}, "needs a value"},
      {{"--client", "127.0.0.1:1", "--json=1"}, "takes no value"},
      {{"--server", "--client", "127.0.0.1:1"}, "one of"},
      {{"--server", "-s", "64"}, "server takes no"},
      {{"--client", "127.0.0.1:1", "-s", "18014398509481985k"}, "too large"},
      {{"--client", "127.0.0.1:1", "--max-size", "1K"}, "only with -a"},
      {{"--client", "127.0.0.1:1", "--test", "lat", "--window", "4"},
       "--window"},
      {{"--client", "127.0.0.1:1", "--bind", "127.0.0.1:99999"}, "--bind"},
      {{"--server", "--bind", "nonsense"}, "--bind"},
      {{"--client", "[::1]:1", "--bind", "127.0.0.1:0"}, "address families"},
      {{"--client", "no-such-host.invalid:1"}, "resolving"},
      {{"--client", "::1:5"}, "needs brackets: [::1]:5"},
      {{"--client", "fe80::2:9000"}, "needs brackets"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<PerfFlags> f = Parse(c.args);
    ASSERT_FALSE(f.ok()) << testing::PrintToString(c.args);
    EXPECT_NE(std::string(f.status().message()).find(c.mention),
              std::string::npos)
        << f.status() << " should mention " << c.mention;
  }
}

TEST(PerfFlagsTest, ServerMayBeNamedByHostName) {
  absl::StatusOr<PerfFlags> f = Parse({"--client", "localhost:9000"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->server, NetAddr::Ipv4(0x7f000001, 9000));
  EXPECT_EQ(f->endpoint.bind, "127.0.0.1:0");
}

TEST(PerfFlagsTest, AnIpv6AnyBindTakesAnIpv4Server) {
  absl::StatusOr<PerfFlags> f =
      Parse({"--client", "127.0.0.1:9000", "--bind", "[::]:0"});
  ASSERT_TRUE(f.ok()) << f.status();
}

TEST(PerfFlagsTest, DpdkSourcePortsFollowEntropySocketsAndBase) {
  absl::StatusOr<PerfFlags> f = Parse(
      {"--client", "10.0.0.2:9000", "--bind", "10.0.0.1:9100", "--backend",
       "dpdk", "--entropy-sockets", "16", "--dpdk-src-port-base", "40000"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->endpoint.dpdk.entropies, 16);
  EXPECT_EQ(f->endpoint.dpdk.src_port_base, 40000);
  EXPECT_EQ(f->endpoint.udp.entropy_sockets, 16);
}

TEST(PerfFlagsTest, DpdkSourcePortBaseNeedsTheDpdkBackend) {
  absl::StatusOr<PerfFlags> f =
      Parse({"--client", "127.0.0.1:9000", "--dpdk-src-port-base", "40000"});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(std::string(f.status().message()).find("--backend dpdk"),
            std::string::npos)
      << f.status();
}

TEST(PerfFlagsTest, HelpIsReportedAsHelp) {
  absl::StatusOr<PerfFlags> f = Parse({"--help"});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "help");
}

}  // namespace
}  // namespace braid::perf

#include "verbs_compat/config.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "gtest/gtest.h"

namespace braid::verbs_compat {
namespace {

absl::StatusOr<VerbsConfig> Load(std::map<std::string, std::string> env) {
  return LoadConfig([&env](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(VerbsConfigTest, DefaultsBindLoopbackWithSixteenPaths) {
  absl::StatusOr<VerbsConfig> c = Load({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->bind_ipv4, 0x7f000001u);
  EXPECT_EQ(c->paths, 16);
  EXPECT_EQ(c->mode, Mode::kSpray);
  EXPECT_EQ(c->loss, 0);
  EXPECT_FALSE(c->disabled);
  EXPECT_EQ(c->min_ack_timeout, DurationNs::Seconds(10));
  // Spinning only where a core can be spared.
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(c->progress_spin,
            CPU_COUNT(&set) >= 4 ? DurationNs::Micros(50) : DurationNs::Zero());
}

TEST(VerbsConfigTest, VerbsUdNeedsACarrierDeviceOtherThanItself) {
  absl::StatusOr<VerbsConfig> c = Load({{"BRAID_VERBS_BACKEND", "verbs_ud"},
                                        {"BRAID_VERBS_UD_DEVICE", "mlx5_0"},
                                        {"BRAID_VERBS_UD_PORT", "2"},
                                        {"BRAID_VERBS_UD_GID_INDEX", "3"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->backend, BackendKind::kVerbsUd);
  const EndpointOptions o = c->ToEndpointOptions(0);
  EXPECT_EQ(o.backend, BackendKind::kVerbsUd);
  EXPECT_EQ(o.ud.device, "mlx5_0");
  EXPECT_EQ(o.ud.port, 2);
  EXPECT_EQ(o.ud.gid_index, 3u);
  for (const char* dev : {"", "braid0"}) {
    c = Load(
        {{"BRAID_VERBS_BACKEND", "verbs_ud"}, {"BRAID_VERBS_UD_DEVICE", dev}});
    EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << dev;
    EXPECT_NE(c.status().message().find("BRAID_VERBS_UD_DEVICE"),
              absl::string_view::npos);
  }
  c = Load({{"BRAID_VERBS_UD_DEVICE", "mlx5_0"}});  // no verbs_ud backend
  EXPECT_TRUE(absl::IsInvalidArgument(c.status()));
  c = Load({{"BRAID_VERBS_BACKEND", "verbs_ud"},
            {"BRAID_VERBS_UD_DEVICE", "mlx5_0"},
            {"BRAID_VERBS_UD_PORT", "0"}});
  EXPECT_TRUE(absl::IsInvalidArgument(c.status()));
}

TEST(VerbsConfigTest, ParsesEveryVariable) {
  absl::StatusOr<VerbsConfig> c = Load({{"BRAID_VERBS_BIND", "10.1.2.3"},
                                        {"BRAID_VERBS_PORT_BASE", "30000"},
                                        {"BRAID_VERBS_PATHS", "4"},
                                        {"BRAID_VERBS_MODE", "gbn"},
                                        {"BRAID_VERBS_LOSS", "1%"},
                                        {"BRAID_VERBS_MTU", "9000"},
                                        {"BRAID_VERBS_MIN_ACK_TIMEOUT_MS", "0"},
                                        {"BRAID_VERBS_SPIN_US", "200"},
                                        {"BRAID_VERBS_SEED", "0"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->bind_ipv4, 0x0a010203u);
  EXPECT_EQ(c->port_base, 30000);
  EXPECT_EQ(c->paths, 4);
  EXPECT_EQ(c->mode, Mode::kGoBackN);
  EXPECT_DOUBLE_EQ(c->loss, 0.01);
  EXPECT_EQ(c->mtu, 9000u);
  EXPECT_EQ(c->min_ack_timeout, DurationNs::Zero());
  EXPECT_EQ(c->progress_spin, DurationNs::Micros(200));
  EXPECT_EQ(c->seed, 0u);
  EndpointOptions o = c->ToEndpointOptions(30001);
  EXPECT_EQ(o.bind, "10.1.2.3:30001");
  EXPECT_DOUBLE_EQ(c->ToImpairments().drop, 0.01);
}

TEST(VerbsConfigTest, BadValuesNameTheVariable) {
  const std::map<std::string, std::string> bad[] = {
      {{"BRAID_VERBS_BIND", "::1"}},
      {{"BRAID_VERBS_BIND", "nonsense"}},
      {{"BRAID_VERBS_PATHS", "0"}},
      {{"BRAID_VERBS_PATHS", "abc"}},
      {{"BRAID_VERBS_PORT_BASE", "60000"}},
      {{"BRAID_VERBS_MODE", "fast"}},
      {{"BRAID_VERBS_LOSS", "0.9"}},
      {{"BRAID_VERBS_LOSS", "-1"}},
      {{"BRAID_VERBS_MTU", "100"}},
      {{"BRAID_VERBS_MIN_ACK_TIMEOUT_MS", "-5"}},
      {{"BRAID_VERBS_MIN_ACK_TIMEOUT_MS", "3600001"}},
      {{"BRAID_VERBS_SPIN_US", "1000001"}},
      {{"BRAID_VERBS_SPIN_US", "x"}},
  };
  for (const auto& env : bad) {
    absl::StatusOr<VerbsConfig> c = Load(env);
    ASSERT_FALSE(c.ok()) << env.begin()->second;
    EXPECT_NE(std::string(c.status().message()).find(env.begin()->first),
              std::string::npos)
        << c.status();
  }
}

TEST(VerbsConfigTest, SecurityTakesAModeAndAKeyFileTogether) {
  char path[] = "/tmp/braid_verbs_key_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string hex(64, 'a');
  ASSERT_EQ(write(fd, hex.data(), hex.size()),
            static_cast<ssize_t>(hex.size()));
  close(fd);
  ASSERT_EQ(chmod(path, 0600), 0);
  absl::StatusOr<VerbsConfig> c = Load(
      {{"BRAID_VERBS_SECURITY", "encrypt"}, {"BRAID_VERBS_KEY_FILE", path}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->security.mode, SecurityMode::kEncrypt);
  EXPECT_EQ(c->security.domain_key, std::string(32, '\xaa'));
  EXPECT_EQ(c->ToEndpointOptions(1).security.mode, SecurityMode::kEncrypt);
  // Each without the other, a bad mode, a key file others may read.
  const std::map<std::string, std::string> bad[] = {
      {{"BRAID_VERBS_SECURITY", "auth"}},
      {{"BRAID_VERBS_KEY_FILE", path}},
      {{"BRAID_VERBS_SECURITY", "aes"}, {"BRAID_VERBS_KEY_FILE", path}},
      {{"BRAID_VERBS_SECURITY", "auth"},
       {"BRAID_VERBS_KEY_FILE", "/nonexistent/key"}},
  };
  for (const auto& env : bad) {
    absl::StatusOr<VerbsConfig> b = Load(env);
    ASSERT_FALSE(b.ok()) << env.begin()->second;
    EXPECT_NE(std::string(b.status().message()).find("BRAID_VERBS_"),
              std::string::npos)
        << b.status();
  }
  ASSERT_EQ(chmod(path, 0644), 0);
  EXPECT_FALSE(
      Load({{"BRAID_VERBS_SECURITY", "auth"}, {"BRAID_VERBS_KEY_FILE", path}})
          .ok());
  std::remove(path);
}

}  // namespace
}  // namespace braid::verbs_compat

#include "tools/braid_forge/forge_flags.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace braid::forge {
namespace {

absl::StatusOr<ForgeFlags> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "braid-forge");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseForgeFlags(static_cast<int>(argv.size()), argv.data());
}

std::string Error(std::vector<std::string> args) {
  absl::StatusOr<ForgeFlags> f = Parse(std::move(args));
  return f.ok() ? "ok" : std::string(f.status().message());
}

TEST(ForgeFlagsTest, ASyncAttackNeedsVictimSpoofAndABound) {
  absl::StatusOr<ForgeFlags> f =
      Parse({"--attack", "sync", "--victim", "10.77.0.10:9000", "--spoof",
             "10.77.1.11:9100", "--count", "50", "--rate", "1000"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->attack, Attack::kSync);
  EXPECT_EQ(f->target.victim_ip, 0x0a4d000au);
  EXPECT_EQ(f->target.victim_port, 9000);
  EXPECT_EQ(f->target.spoof_ip, 0x0a4d010bu);
  EXPECT_EQ(f->target.spoof_port, 9100);
  EXPECT_EQ(f->count, 50u);
  EXPECT_EQ(f->rate, 1000);
}

TEST(ForgeFlagsTest, FloodTakesAPrefixAndNoSpoof) {
  absl::StatusOr<ForgeFlags> f =
      Parse({"--attack", "flood", "--victim", "10.77.0.10:9000", "--prefix",
             "10.128.0.0/12", "--duration", "2"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->target.prefix_ip, 0x0a800000u);
  EXPECT_EQ(f->target.prefix_len, 12);
  EXPECT_EQ(Error({"--attack", "flood", "--victim", "1.2.3.4:1", "--spoof",
                   "1.2.3.5:2", "--count", "1"}),
            "--spoof: does not apply to --attack flood (use --prefix)");
}

TEST(ForgeFlagsTest, EachMistakeIsNamed) {
  EXPECT_EQ(Error({"--victim", "1.2.3.4:1", "--count", "1"}),
            "--attack: required");
  EXPECT_EQ(Error({"--attack", "reset", "--victim", "1.2.3.4:1"}),
            "--attack: expected sync, stale, needsync, ack, data, "
            "challenge-reply or flood");
  EXPECT_EQ(Error({"--attack", "ack", "--victim", "1.2.3.4", "--count", "1"}),
            "--victim: expected IPV4:PORT (port 1..65535), got '1.2.3.4'");
  EXPECT_EQ(Error({"--attack", "ack", "--victim", "1.2.3.4:1", "--count", "1"}),
            "--spoof: required by --attack ack");
  EXPECT_EQ(Error({"--attack", "ack", "--victim", "1.2.3.4:1", "--spoof",
                   "1.2.3.5:2"}),
            "--count: give --count or --duration (or both)");
  EXPECT_EQ(Error({"--attack", "flood", "--victim", "1.2.3.4:1", "--prefix",
                   "10.0.0.0/4", "--count", "1"}),
            "--prefix: expected A.B.C.D/LEN with LEN 8..30, got '10.0.0.0/4'");
  EXPECT_EQ(Error({"--attack", "stale", "--victim", "1.2.3.4:1", "--spoof",
                   "1.2.3.5:2", "--count", "1", "--victim-incarnation", "xyz"}),
            "--victim-incarnation: expected a non-zero hex number, got 'xyz'");
  EXPECT_EQ(Error({"--attack", "data", "--victim", "1.2.3.4:1", "--spoof",
                   "1.2.3.5:2", "--count", "1", "--msg-len", "100",
                   "--frag-len", "64", "--frag-offset", "40"}),
            "--frag-offset: fragment 40+64 ends beyond --msg-len 100");
}

}  // namespace
}  // namespace braid::forge

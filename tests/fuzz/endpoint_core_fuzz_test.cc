// The state-machine fuzzer (core_fuzz_harness.h) as a seeded unit test: a
// bounded number of runs per attack, each attack alone (with the wire's
// drops and duplicates) and all of them together.
//
// Attacks in kFailingToday are skipped (GTEST_SKIP names them) unless
// BRAID_FUZZ_ALL=1. Replay a failure with the seed and run it prints:
//   BRAID_FUZZ_SEED=<seed> BRAID_FUZZ_RUN=<i> [BRAID_FUZZ_ALL=1]
//   endpoint_core_fuzz_test --gtest_filter='*<attack>*'
// BRAID_FUZZ_RUNS=<n> sets the runs per attack.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/fuzz/core_fuzz_harness.h"

namespace braid::endpoint::fuzz {
namespace {

constexpr uint64_t kDefaultSeed = 0xc0de5eed;
constexpr uint64_t kDefaultRuns = 20;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  uint64_t out = 0;
  if (v != nullptr && absl::SimpleAtoi(v, &out)) return out;
  return fallback;
}

// The kind of a violation: its text up to the first digit (for the
// summary: "message #" rather than every message number).
std::string KindOf(const std::string& v) {
  std::string k;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      if (k.empty() || k.back() != 'N') k += 'N';
      continue;
    }
    k += c;
  }
  return k;
}

// Runs the harness `runs` times with `attacks`; fails with the first
// violating run's seed, run index and trace, and prints how often each
// kind of violation occurred.
void RunAttacks(uint32_t attacks, const std::string& name,
                SecurityMode security = SecurityMode::kNone) {
  const uint64_t seed = EnvOr("BRAID_FUZZ_SEED", kDefaultSeed);
  const uint64_t runs = EnvOr("BRAID_FUZZ_RUNS", kDefaultRuns);
  const uint64_t only = EnvOr("BRAID_FUZZ_RUN", ~uint64_t{0});
  std::map<std::string, uint64_t> kinds;
  uint64_t failed_runs = 0, forged = 0, delivered = 0;
  std::string first;
  for (uint64_t i = 0; i < runs; ++i) {
    if (only != ~uint64_t{0} && i != only) continue;
    RngChoices choices(seed ^ (i * 0x9e3779b97f4a7c15ULL) ^ attacks);
    FuzzOptions opt;
    opt.attacks = attacks;
    opt.security = security;
    CoreFuzzHarness h(&choices, opt);
    const std::vector<std::string> v = h.Run();
    forged += h.counts().forged;
    delivered += h.counts().delivered;
    if (v.empty()) continue;
    ++failed_runs;
    for (const std::string& s : v) ++kinds[KindOf(s)];
    if (first.empty()) {
      first =
          absl::StrCat("attack ", name, ": seed ", seed, " run ", i, ": ",
                       v.front(), "\n(replay: BRAID_FUZZ_SEED=", seed,
                       " BRAID_FUZZ_RUN=", i, ")\nlast events:\n", h.Trace());
    }
  }
  std::printf(
      "%s: %llu runs, %llu forged datagrams, %llu messages delivered, "
      "%llu runs with violations\n",
      name.c_str(), static_cast<unsigned long long>(runs),
      static_cast<unsigned long long>(forged),
      static_cast<unsigned long long>(delivered),
      static_cast<unsigned long long>(failed_runs));
  for (const auto& [kind, n] : kinds) {
    std::printf("  %6llu x %s\n", static_cast<unsigned long long>(n),
                kind.c_str());
  }
  EXPECT_TRUE(first.empty()) << first;
}

class EndpointCoreFuzzTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(EndpointCoreFuzzTest, ForgedFramesBreakNoDeliveryCompletionOrMemory) {
  const uint32_t attack = GetParam();
  if ((attack & (kFailingToday | kOnPath)) && !EnvOr("BRAID_FUZZ_ALL", 0)) {
    GTEST_SKIP() << AttackName(attack)
                 << " is known to break the core today (kFailingToday or "
                    "kOnPath); BRAID_FUZZ_ALL=1 runs it";
  }
  // A wrong incarnation modifies the forged frames: forge some.
  const uint32_t with =
      attack == kWrongIncarnation ? kForgedProbe | kForgedData | kForgedAck : 0;
  RunAttacks(attack | with | kDropDup, AttackName(attack));
}

std::vector<uint32_t> EveryAttack() {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < kAttackCount; ++i) v.push_back(1u << i);
  return v;
}

INSTANTIATE_TEST_SUITE_P(EachAttack, EndpointCoreFuzzTest,
                         ::testing::ValuesIn(EveryAttack()),
                         [](const ::testing::TestParamInfo<uint32_t>& p) {
                           return std::string(AttackName(p.param));
                         });

TEST(EndpointCoreFuzzAllTest, EveryAttackTheCoreWithstandsAtOnce) {
  RunAttacks(FuzzOptions().attacks, "all_withstood");
}

// A libFuzzer input (endpoint_core_libfuzzer): before core 0 has sent
// anything, a forged SYNC and data frame from its address reach core 1,
// which has sent to core 0 but not heard from it. The forged message is
// delivered, as docs/security.md says a first contact is (taken on trust);
// the run then goes on with no violation.
TEST(EndpointCoreFuzzInputTest, AForgedFirstContactIsTakenOnTrustNotAFault) {
  static const uint8_t kInput[] = {
      0xff, 0xff, 0xd5, 0x88, 0x60, 0x8c, 0x00, 0xb3, 0xf8, 0xda, 0x30, 0x85,
      0x30, 0x00, 0x10, 0x0b, 0xff, 0x07, 0xcf, 0x15, 0x20, 0xe8, 0xe8, 0x00,
      0x00, 0x04, 0x00, 0xe8, 0xe8, 0xe8, 0xe8, 0xe8, 0xe8, 0xe8, 0xe8, 0x05,
      0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfa, 0xe4,
      0xe8, 0xe8, 0xe8, 0xe8, 0xe8, 0xe4, 0xe8, 0xe8, 0xe8, 0xe8};
  ByteChoices choices(kInput, sizeof(kInput));
  FuzzOptions opt;
  opt.steps = 400;  // as the libFuzzer entry point
  CoreFuzzHarness h(&choices, opt);
  const std::vector<std::string> v = h.Run();
  EXPECT_TRUE(v.empty()) << v.front() << "\n" << h.Trace();
  EXPECT_GE(h.counts().forged_first_contact, 1u) << h.Trace();
}

// An on-path attacker's bit flips, and everything else at once, against
// cores that authenticate (or encrypt) every datagram: withstood.
class EndpointCoreFuzzSecureTest
    : public ::testing::TestWithParam<SecurityMode> {};

TEST_P(EndpointCoreFuzzSecureTest, OnPathFlipsAreWithstoodWithProtection) {
  const std::string mode = SecurityModeName(GetParam());
  RunAttacks(kHeaderFlip | kDropDup, "header_flip_" + mode, GetParam());
  RunAttacks(kPayloadFlip | kDropDup, "payload_flip_" + mode, GetParam());
  RunAttacks(kAllAttacks, "everything_" + mode, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Modes, EndpointCoreFuzzSecureTest,
                         ::testing::Values(SecurityMode::kAuth,
                                           SecurityMode::kEncrypt),
                         [](const auto& info) {
                           return std::string(SecurityModeName(info.param));
                         });

}  // namespace
}  // namespace braid::endpoint::fuzz

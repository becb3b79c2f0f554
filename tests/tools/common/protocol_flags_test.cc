#include "tools/common/protocol_flags.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace braid::tools {
namespace {

absl::Status Parse(ProtocolOptions* o, std::vector<std::string> args) {
  FlagParser p;
  AddProtocolFlags(p, o);
  args.insert(args.begin(), "tool");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return p.Parse(static_cast<int>(argv.size()), argv.data());
}

TEST(ProtocolFlagsTest, SharedFlagsSetTheProtocolOptions) {
  ProtocolOptions o;
  EXPECT_EQ(o.spray_choices, 2);
  ASSERT_TRUE(Parse(&o, {"--paths", "4", "--spray-run=8", "--spray-choices",
                         "1", "--cc", "none"})
                  .ok());
  EXPECT_EQ(o.paths, 4);
  EXPECT_EQ(o.spray_run, 8);
  EXPECT_EQ(o.spray_choices, 1);
  EXPECT_EQ(o.cc, CcAlgorithm::kNone);
}

TEST(ProtocolFlagsTest, SharedFlagsKeepTheirRanges) {
  ProtocolOptions o;
  EXPECT_EQ(Parse(&o, {"--paths=0"}).message(),
            "--paths: expected an integer in 1..256, got '0'");
  EXPECT_EQ(Parse(&o, {"--paths=257"}).message(),
            "--paths: expected an integer in 1..256, got '257'");
  EXPECT_EQ(Parse(&o, {"--spray-run=1025"}).message(),
            "--spray-run: expected an integer in 1..1024, got '1025'");
  EXPECT_EQ(Parse(&o, {"--spray-choices=9"}).message(),
            "--spray-choices: expected an integer in 1..8, got '9'");
  EXPECT_EQ(Parse(&o, {"--cc=cubic"}).message(),
            "--cc: expected swift or none");
}

TEST(ProtocolFlagsTest, ModeChoicesAreSprayAndGbn) {
  const auto m = ModeChoices();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], (std::pair<std::string, Mode>{"spray", Mode::kSpray}));
  EXPECT_EQ(m[1], (std::pair<std::string, Mode>{"gbn", Mode::kGoBackN}));
}

}  // namespace
}  // namespace braid::tools

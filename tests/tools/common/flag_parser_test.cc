#include "tools/common/flag_parser.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace braid::tools {
namespace {

absl::Status Parse(FlagParser& p, std::vector<std::string> args) {
  args.insert(args.begin(), "tool");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return p.Parse(static_cast<int>(argv.size()), argv.data());
}

struct Values {
  int count = 0;
  uint64_t big = 0;
  double ratio = 0;
  double prob = 0;
  bool on = false;
  std::string color;
  std::vector<std::string> order;
};

FlagParser Parser(Values& v) {
  FlagParser p;
  p.Int<int>({"--count", "-n"}, 1, 10, &v.count);
  p.Int<uint64_t>({"--big"}, 0, UINT64_MAX, &v.big);
  p.Real({"--ratio"}, {0.5, 2}, &v.ratio);
  p.Real({"--prob"}, {0, 1, false, true}, &v.prob);
  p.Switch({"--on"}, &v.on);
  p.Choice<std::string>(
      {"--color"}, {{"red", "R"}, {"green", "G"}, {"blue", "B"}}, &v.color);
  p.Value({"--tag"}, [&v](absl::string_view, absl::string_view value) {
    v.order.push_back(std::string(value));
    return absl::OkStatus();
  });
  return p;
}

TEST(FlagParserTest, ValuesAreTakenSpacedOrJoinedAndAliasesShareAFlag) {
  Values v;
  FlagParser p = Parser(v);
  ASSERT_TRUE(
      Parse(p, {"--count=3", "--big", "18446744073709551615", "--ratio=1.5",
                "--prob", "0.25", "--on", "--color", "green"})
          .ok());
  EXPECT_EQ(v.count, 3);
  EXPECT_EQ(v.big, UINT64_MAX);
  EXPECT_DOUBLE_EQ(v.ratio, 1.5);
  EXPECT_DOUBLE_EQ(v.prob, 0.25);
  EXPECT_TRUE(v.on);
  EXPECT_EQ(v.color, "G");
  ASSERT_TRUE(Parse(p, {"-n", "7"}).ok());
  EXPECT_EQ(v.count, 7);
  EXPECT_FALSE(p.help());
}

TEST(FlagParserTest,
     HandlersRunInCommandLineOrderAndJoinedSplitsAtFirstEquals) {
  Values v;
  FlagParser p = Parser(v);
  ASSERT_TRUE(Parse(p, {"--tag=a=b", "--tag", "--c", "--tag="}).ok());
  EXPECT_EQ(v.order, (std::vector<std::string>{"a=b", "--c", ""}));
}

TEST(FlagParserTest, HelpStopsParsingAndIgnoresTheRest) {
  for (const char* h : {"-h", "--help"}) {
    Values v;
    FlagParser p = Parser(v);
    ASSERT_TRUE(Parse(p, {"--on", h, "--bogus", "--count=99"}).ok()) << h;
    EXPECT_TRUE(p.help());
    EXPECT_TRUE(v.on);
    EXPECT_EQ(v.count, 0);
  }
}

TEST(FlagParserTest, EveryErrorNamesTheFlagAndWhatItAccepts) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--count=0"}, "--count: expected an integer in 1..10, got '0'"},
      {{"-n", "11"}, "-n: expected an integer in 1..10, got '11'"},
      {{"--count", "x"}, "--count: expected an integer in 1..10, got 'x'"},
      {{"--big=-1"},
       "--big: expected an integer in 0..18446744073709551615, got '-1'"},
      {{"--ratio=3"}, "--ratio: expected a number in 0.5..2, got '3'"},
      {{"--ratio=nan"}, "--ratio: expected a number in 0.5..2, got 'nan'"},
      {{"--prob", "1"}, "--prob: expected a number in [0, 1), got '1'"},
      {{"--color=pink"}, "--color: expected red, green or blue"},
      {{"--on=1"}, "--on: takes no value"},
      {{"--help=1"}, "--help: takes no value"},
      {{"--count"}, "--count: needs a value (or unknown flag)"},
      {{"--nope", "1"}, "--nope: unknown flag"},
      {{"--nope=1"}, "--nope: unknown flag"},
      {{"--nope"}, "--nope: needs a value (or unknown flag)"},
      {{"-x=1"}, "-x=1: needs a value (or unknown flag)"},
  };
  for (const Case& c : cases) {
    Values v;
    FlagParser p = Parser(v);
    const absl::Status s = Parse(p, c.args);
    ASSERT_FALSE(s.ok()) << testing::PrintToString(c.args);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), c.message) << testing::PrintToString(c.args);
  }
}

TEST(FlagParserTest, ABadValueLeavesTheTargetUnchanged) {
  int n = 5;
  EXPECT_FALSE(ParseIntFlag<int>("--n", "50", 1, 10, &n).ok());
  EXPECT_EQ(n, 5);
  double d = 0.5;
  EXPECT_FALSE(ParseRealFlag("--d", "inf", {0, 1e300}, &d).ok());
  EXPECT_EQ(d, 0.5);
}

TEST(FlagParserTest, OpenRangeEndsAreShownAsIntervals) {
  double d = 0;
  EXPECT_EQ(ParseRealFlag("-D", "0", {0, 86400, true, false}, &d).message(),
            "-D: expected a number in (0, 86400], got '0'");
  EXPECT_TRUE(ParseRealFlag("-D", "86400", {0, 86400, true, false}, &d).ok());
}

TEST(FlagParserTest, ChoiceListsReadAsASentence) {
  EXPECT_EQ(ChoiceList({"a"}), "a");
  EXPECT_EQ(ChoiceList({"a", "b"}), "a or b");
  EXPECT_EQ(ChoiceList({"a", "b", "c"}), "a, b or c");
}

TEST(FlagParserTest, JoinArgsEchoesTheCommandLineFromAnArgument) {
  std::vector<std::string> args = {"tool", "--a=1", "--b", "2"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_EQ(JoinArgs(4, argv.data(), 0), "tool --a=1 --b 2");
  EXPECT_EQ(JoinArgs(4, argv.data(), 1), "--a=1 --b 2");
  EXPECT_EQ(JoinArgs(1, argv.data(), 1), "");
}

}  // namespace
}  // namespace braid::tools

#include "tools/braid_perf/report.h"

#include "gtest/gtest.h"

namespace braid::perf {
namespace {

RunResult Clean() {
  RunResult r;
  r.test = perf::Test::kBw;
  r.size = 65536;
  r.iters = 100;
  r.have_server = true;
  r.server.received = 100;
  return r;
}

TEST(ReportTest, ACleanRunIsOk) { EXPECT_TRUE(Clean().ok()); }

TEST(ReportTest, AnyBadDuplicateMissingOrFailureMakesTheRunFail) {
  std::vector<RunResult> bad(7, Clean());
  bad[0].server.bad = 1;
  bad[1].server.duplicates = 1;
  bad[2].server.missing = 1;
  bad[3].client_bad = 1;
  bad[4].client_duplicates = 1;
  bad[5].send_failed = 1;
  bad[6].have_server = false;
  for (const RunResult& r : bad) EXPECT_FALSE(r.ok());
}

TEST(ReportTest, TableNamesFailures) {
  RunResult r = Clean();
  r.server.duplicates = 3;
  const std::string t = FormatTable({Clean(), r});
  EXPECT_NE(t.find("Gbit/s"), std::string::npos);
  EXPECT_NE(t.find("FAILED size 65536"), std::string::npos);
  EXPECT_NE(t.find("duplicates 0/3"), std::string::npos);
}

TEST(ReportTest, JsonCarriesOkAndEscapesTheCommandLine) {
  PerfFlags f;
  f.command_line = "braid-perf \"quoted\"";
  const std::string j = FormatJson(f, {Clean()}, "");
  EXPECT_NE(j.find("\"ok\":true"), std::string::npos);
  EXPECT_NE(j.find("braid-perf \\\"quoted\\\""), std::string::npos);
  EXPECT_EQ(j.back(), '\n');
  EXPECT_NE(FormatJson(f, {}, "").find("\"ok\":false"), std::string::npos);
}

}  // namespace
}  // namespace braid::perf

#include "cc/congestion_control.h"

#include "gtest/gtest.h"

namespace braid::cc {
namespace {

TEST(CongestionControlTest, ParseAlgorithmAcceptsKnownNames) {
  EXPECT_EQ(*ParseAlgorithm("swift"), CcOptions::Algorithm::kSwift);
  EXPECT_EQ(*ParseAlgorithm("Swift"), CcOptions::Algorithm::kSwift);
  EXPECT_EQ(*ParseAlgorithm("none"), CcOptions::Algorithm::kNone);
}

TEST(CongestionControlTest, ParseAlgorithmRejectsUnknownNames) {
  EXPECT_FALSE(ParseAlgorithm("cubic").ok());
  EXPECT_FALSE(ParseAlgorithm("").ok());
}

TEST(CongestionControlTest, AlgorithmNameRoundTrips) {
  for (auto a : {CcOptions::Algorithm::kSwift, CcOptions::Algorithm::kNone}) {
    EXPECT_EQ(*ParseAlgorithm(AlgorithmName(a)), a);
  }
}

TEST(CongestionControlTest, FactoryBuildsSelectedAlgorithm) {
  CcOptions o;
  auto swift = MakeCongestionControl(o);
  ASSERT_NE(swift, nullptr);
  EXPECT_EQ(swift->name(), "swift");
  EXPECT_EQ(swift->cwnd_bytes(), o.initial_cwnd_bytes);
  o.algorithm = CcOptions::Algorithm::kNone;
  auto none = MakeCongestionControl(o);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->name(), "none");
  EXPECT_EQ(none->cwnd_bytes(), o.max_cwnd_bytes);
}

TEST(CongestionControlTest, SanitizeFixesInconsistentBounds) {
  CcOptions o;
  o.mss = 0;
  o.min_cwnd_bytes = 0;
  o.initial_cwnd_bytes = 1;
  o.max_cwnd_bytes = 0;
  o.max_mdf = 3.0;
  o.dctcp_g = -1;
  const CcOptions s = SanitizeCcOptions(o);
  EXPECT_EQ(s.mss, 64u);
  EXPECT_EQ(s.min_cwnd_bytes, 64u);
  EXPECT_GE(s.max_cwnd_bytes, s.min_cwnd_bytes);
  EXPECT_GE(s.initial_cwnd_bytes, s.min_cwnd_bytes);
  EXPECT_LE(s.initial_cwnd_bytes, s.max_cwnd_bytes);
  EXPECT_GT(s.max_mdf, 0.0);
  EXPECT_LT(s.max_mdf, 1.0);
  EXPECT_GT(s.dctcp_g, 0.0);
}

TEST(CongestionControlTest, DefaultMinWindowIsOneMss) {
  CcOptions o;
  o.mss = 1500;
  EXPECT_EQ(SanitizeCcOptions(o).min_cwnd_bytes, 1500u);
}

}  // namespace
}  // namespace braid::cc

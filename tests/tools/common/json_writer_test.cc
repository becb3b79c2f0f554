#include "tools/common/json_writer.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"

namespace braid::tools {
namespace {

TEST(JsonWriterTest, FixedRoundsAsPrintfDoes) {
  EXPECT_EQ(Fixed(1.23456, 3), 1.235);
  EXPECT_EQ(Fixed(8.19, 3), 8.19);
  EXPECT_EQ(Fixed(2.5, 0), 2.0);  // printf rounds half to even
  EXPECT_EQ(Fixed(-0.00004, 4), -0.0);
  EXPECT_TRUE(std::isnan(Fixed(NAN, 3)));
}

TEST(JsonWriterTest, SignificantKeepsSixDigits) {
  EXPECT_EQ(Significant(0.0123456789), 0.0123457);
  EXPECT_EQ(Significant(0.01), 0.01);
}

TEST(JsonWriterTest, LinesKeepKeyOrderAndPrintShortestNumbers) {
  Json j;
  j["zeta"] = 1;
  j["alpha"] = Fixed(8.190, 3);
  j["mid"] = Json::array({1, 2});
  j["ok"] = true;
  EXPECT_EQ(JsonLine(j),
            "{\"zeta\":1,\"alpha\":8.19,\"mid\":[1,2],\"ok\":true}\n");
}

TEST(JsonWriterTest, StringsAreEscapedAndBadUtf8DoesNotThrow) {
  Json j;
  j["s"] = std::string("a\"b\\c\n\x01");
  EXPECT_EQ(JsonLine(j), "{\"s\":\"a\\\"b\\\\c\\n\\u0001\"}\n");
  j["s"] = std::string("\xff");
  EXPECT_EQ(JsonLine(j), "{\"s\":\"\xef\xbf\xbd\"}\n");
}

TEST(JsonWriterTest, ParseJsonReturnsDiscardedForBadText) {
  EXPECT_EQ(ParseJson("{\"a\":[1]}")["a"][0], 1);
  EXPECT_TRUE(ParseJson("{oops").is_discarded());
}

}  // namespace
}  // namespace braid::tools

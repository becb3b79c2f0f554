// FormatStats* / FormatPeerStats*: every counter a user reads is printed,
// strings are quoted, and the JSON nests as it should.
#include <string>

#include "braid/stats.h"
#include "gtest/gtest.h"

namespace braid {
namespace {

// Brackets and braces balance outside strings, and no value is empty
// (`"key":,` or `"key":}`): enough to catch a printer that drops a quote
// or a field's value; python3 -m json.tool checks braid-perf's output.
void ExpectWellFormed(const std::string& json) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') in_string = !in_string;
    if (in_string) continue;
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ASSERT_GE(depth, 0) << json;
    if (c == ':') {
      ASSERT_LT(i + 1, json.size());
      EXPECT_NE(json[i + 1], ',') << json;
      EXPECT_NE(json[i + 1], '}') << json;
    }
  }
  EXPECT_FALSE(in_string) << json;
  EXPECT_EQ(depth, 0) << json;
}

TEST(StatsFormatTest, PeerJsonHasTheIncarnationAndEveryPathField) {
  PeerStats s;
  s.addr = NetAddr::Parse("10.0.0.2:7000").value();
  s.peer_incarnation = 0x1234abcd;
  PathStats p;
  p.entropy = 7;
  p.packets_sent = 10;
  p.bytes_sent = 14720;
  p.srtt = DurationNs::Micros(12);
  p.min_rtt = DurationNs::Micros(9);
  s.paths.push_back(p);
  const std::string json = FormatPeerStatsJson(s);
  ExpectWellFormed(json);
  EXPECT_NE(json.find("\"peer_incarnation\":\"000000001234abcd\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"bytes_sent\":14720"), std::string::npos) << json;
  EXPECT_NE(json.find("\"min_rtt_us\":9.00"), std::string::npos) << json;
  EXPECT_NE(json.find("\"srtt_us\":12.00"), std::string::npos) << json;
  const std::string table = FormatPeerStatsTable(s);
  EXPECT_NE(table.find("peer_incarnation"), std::string::npos) << table;
}

TEST(StatsFormatTest, EndpointJsonIsWellFormed) {
  EndpointStats s;
  s.incarnation = 42;
  s.rx_timestamp_switches = 3;
  const std::string json = FormatStatsJson(s);
  ExpectWellFormed(json);
  EXPECT_NE(json.find("\"rx_timestamp_switches\":3"), std::string::npos)
      << json;
}

}  // namespace
}  // namespace braid

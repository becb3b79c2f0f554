// CheckProtocolOptions / CheckEndpointOptions: every bad setting is refused
// with InvalidArgument naming its field; the defaults pass.
#include "endpoint/options_check.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace braid::endpoint {
namespace {

TEST(OptionsCheckTest, DefaultsPass) {
  EXPECT_TRUE(CheckProtocolOptions(ProtocolOptions{}).ok());
  EXPECT_TRUE(CheckEndpointOptions(EndpointOptions{}).ok());
}

TEST(OptionsCheckTest, EachBadProtocolSettingNamesItsField) {
  struct Case {
    std::string field;
    std::function<void(ProtocolOptions&)> spoil;
  };
  const std::vector<Case> cases = {
      {"paths", [](ProtocolOptions& p) { p.paths = 0; }},
      {"paths", [](ProtocolOptions& p) { p.paths = 257; }},
      {"spray_run", [](ProtocolOptions& p) { p.spray_run = 1025; }},
      {"spray_choices", [](ProtocolOptions& p) { p.spray_choices = 0; }},
      {"spray_choices", [](ProtocolOptions& p) { p.spray_choices = 9; }},
      {"max_message_bytes",
       [](ProtocolOptions& p) { p.max_message_bytes = (1u << 30) + 1; }},
      {"max_peers", [](ProtocolOptions& p) { p.max_peers = 0; }},
      {"max_peers", [](ProtocolOptions& p) { p.max_peers = (1u << 24) + 1; }},
      {"max_reassembly_bytes",
       [](ProtocolOptions& p) { p.max_reassembly_bytes = 1000; }},
      {"max_reassembly_bytes",
       [](ProtocolOptions& p) { p.max_message_bytes = 512u << 20; }},
      {"max_pending_sends",
       [](ProtocolOptions& p) { p.max_pending_sends = 0; }},
      {"receive_budget_bytes",
       [](ProtocolOptions& p) { p.receive_budget_bytes = 1000; }},
      {"receive_queue_bytes",
       [](ProtocolOptions& p) { p.receive_queue_bytes = 0; }},
      {"peer_timeout",
       [](ProtocolOptions& p) { p.peer_timeout = DurationNs::Zero(); }},
      {"min_rto", [](ProtocolOptions& p) { p.min_rto = DurationNs::Zero(); }},
      {"max_rto",
       [](ProtocolOptions& p) { p.max_rto = DurationNs::Infinite(); }},
      {"min_rto",
       [](ProtocolOptions& p) {
         p.peer_timeout = DurationNs::Millis(5);
         p.min_rto = p.max_rto = DurationNs::Millis(10);
       }},
      {"initial_rtt",
       [](ProtocolOptions& p) { p.initial_rtt = DurationNs::Zero(); }},
      {"ack_delay",
       [](ProtocolOptions& p) { p.ack_delay = DurationNs::Micros(-1); }},
      {"cc_target_delay",
       [](ProtocolOptions& p) { p.cc_target_delay = DurationNs::Micros(-5); }},
      {"ack_every_packets",
       [](ProtocolOptions& p) { p.ack_every_packets = 0; }},
      {"initial_cwnd_bytes",
       [](ProtocolOptions& p) { p.initial_cwnd_bytes = 0; }},
      {"start_cwnd_bytes",
       [](ProtocolOptions& p) {
         p.start_cwnd_bytes = p.initial_cwnd_bytes + 1;
       }},
  };
  for (const Case& c : cases) {
    ProtocolOptions p;
    c.spoil(p);
    const absl::Status s = CheckProtocolOptions(p);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.field << ": " << s;
    EXPECT_NE(s.message().find(c.field), std::string::npos)
        << c.field << ": " << s;
  }
}

TEST(OptionsCheckTest, EndpointSettingsAreCheckedToo) {
  EndpointOptions o;
  o.mtu = 500;
  EXPECT_TRUE(absl::IsInvalidArgument(CheckEndpointOptions(o)));
  // Test impairments (no longer part of EndpointOptions) likewise.
  EXPECT_TRUE(absl::IsInvalidArgument(CheckImpairments({.drop = 1.5})));
  o = {};
  o.protocol.ack_delay = DurationNs::Micros(-1);  // the protocol part too
  EXPECT_TRUE(absl::IsInvalidArgument(CheckEndpointOptions(o)));
  o = {};
  o.udp.rx_timestamps_linger = DurationNs::Micros(-1);
  const absl::Status s = CheckEndpointOptions(o);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("rx_timestamps_linger"), std::string::npos) << s;
  // UDP settings are refused under their public names (not the backend's).
  const std::vector<
      std::pair<std::string, std::function<void(UdpBackendOptions&)>>>
      udp_cases = {
          {"udp.entropy_sockets",
           [](UdpBackendOptions& u) { u.entropy_sockets = 300; }},
          {"udp.sndbuf_bytes",
           [](UdpBackendOptions& u) { u.sndbuf_bytes = 0; }},
          {"udp.rcvbuf_bytes",
           [](UdpBackendOptions& u) { u.rcvbuf_bytes = -1; }},
      };
  for (const auto& [field, spoil] : udp_cases) {
    o = {};
    spoil(o.udp);
    const absl::Status u = CheckEndpointOptions(o);
    EXPECT_TRUE(absl::IsInvalidArgument(u)) << field << ": " << u;
    EXPECT_NE(u.message().find(field), std::string::npos) << field << ": " << u;
  }
}

}  // namespace
}  // namespace braid::endpoint

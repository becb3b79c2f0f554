// A sender whose every route is dead moves its timed-out paths to fresh
// entropies (EndpointCore, simulated time), however little it has in
// flight: after two RTOs in a row with nothing acknowledged, the paths of
// the packets that timed out are recycled (ReliabilityStats::rto_reroutes),
// so later re-sends try new routes instead of the same dead ones until the
// peer timeout fails the send.
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;
using testing::Pattern;
using testing::Wire;

// The entropies A's paths to B have now.
absl::flat_hash_set<wire::Entropy> EntropiesAtA(const CorePair& p) {
  absl::flat_hash_set<wire::Entropy> out;
  for (const PeerStats& s : p.a->peer_stats(/*with_paths=*/true)) {
    for (const PathStats& path : s.paths) out.insert(path.entropy);
  }
  return out;
}

TEST(EndpointCoreDeadRoutesTest, OnePacketInFlightFindsALiveRoute) {
  CorePair p;
  // A one-datagram message: one packet in flight, so each RTO hits one
  // path, which nothing sent later ever overtook (no path is blamed).
  const std::vector<uint8_t> msg = Pattern(600, 7);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, testing::Msg(msg, 1)).ok());
  // Every route A starts with is dead (as when all its entropies hash onto
  // failed links); fresh entropies hash elsewhere and get through.
  const absl::flat_hash_set<wire::Entropy> dead = EntropiesAtA(p);
  ASSERT_EQ(dead.size(), p.a->peer_stats(true)[0].paths.size());
  uint64_t dropped = 0;
  p.filter = [&](const Wire& w) {
    if (w.from != p.a_addr || !dead.contains(w.entropy)) return true;
    ++dropped;
    return false;
  };
  std::vector<Completion> done;
  for (int i = 0; i < 400 && done.empty(); ++i) {
    p.Run(100, DurationNs::Micros(100));
    done = p.Drain(*p.a);
  }
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].type, CompletionType::kSendDone);
  std::vector<Completion> got = p.Drain(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, msg);
  const PeerStats s = p.a->peer_stats(false)[0];
  EXPECT_GE(s.reliability.rtos, 2u);
  EXPECT_GE(s.reliability.rto_reroutes, 1u);
  EXPECT_GE(dropped, 2u);
  // Well inside the peer timeout (2 s): the send did not merely outlive it.
  EXPECT_LT(p.now - TimeNs(1000000), DurationNs::Seconds(1));
}

}  // namespace
}  // namespace braid::endpoint

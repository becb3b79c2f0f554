// UdpOptions::connect: entropy sockets connected to their first
// destination still reach every other destination, a wildcard bind never
// connects, and an ICMP error queued on a connected socket loses nothing.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "backend/udp/udp_datapath.h"
#include "gtest/gtest.h"
#include "tests/backend/udp/udp_test_util.h"

namespace braid::backend {
namespace {

using testing::Loopback4;
using testing::Loopback6;
using testing::LoopbackOptions;
using testing::OpenOrDie;
using testing::PlainSocket;
using testing::Received;
using testing::ReceiveN;

// Sends `n` 100-byte datagrams to `dst` on entropy `e`, byte 0 = `tag`,
// byte 1 = index. Returns how many TxBurst took.
size_t SendTagged(UdpBackend& tx, const NetAddr& dst, wire::Entropy e,
                  uint8_t tag, int n) {
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<TxPacket> pkts;
  bufs.reserve(n);
  for (int i = 0; i < n; ++i) {
    bufs.emplace_back(100, static_cast<uint8_t>(i * 3));
    bufs.back()[0] = tag;
    bufs.back()[1] = static_cast<uint8_t>(i);
    pkts.push_back(TxPacket{dst, e, false, bufs.back().data(), 100});
  }
  return tx.TxBurst(absl::MakeConstSpan(pkts));
}

void ExpectTagged(const std::vector<Received>& got, uint8_t tag, int n,
                  uint16_t src_port) {
  ASSERT_EQ(got.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(got[i].bytes.size(), 100u);
    EXPECT_EQ(got[i].bytes[0], tag);
    EXPECT_EQ(got[i].bytes[1], i);
    EXPECT_EQ(got[i].src.port, src_port);
  }
}

TEST(UdpConnectTest, ConnectedSocketStillReachesOtherPeersByAddress) {
  auto tx = OpenOrDie(LoopbackOptions());
  auto b = OpenOrDie(LoopbackOptions());
  auto c = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(tx && b && c);
  const uint16_t port = tx->SourcePort(3);
  // Entropy 3 connects to b (its first destination), then also sends to c,
  // then to b again.
  ASSERT_EQ(SendTagged(*tx, b->LocalAddress(), 3, 0xb1, 10), 10u);
  ExpectTagged(ReceiveN(*b, 10), 0xb1, 10, port);
  ASSERT_EQ(SendTagged(*tx, c->LocalAddress(), 3, 0xc1, 10), 10u);
  ExpectTagged(ReceiveN(*c, 10), 0xc1, 10, port);
  ASSERT_EQ(SendTagged(*tx, b->LocalAddress(), 3, 0xb2, 10), 10u);
  ExpectTagged(ReceiveN(*b, 10), 0xb2, 10, port);
  EXPECT_EQ(tx->counters().connected_sockets, 1u);
  EXPECT_EQ(tx->counters().tx_dropped, 0u);
  // Nothing meant for b reached c.
  std::vector<RxPacket> extra(8);
  EXPECT_EQ(c->RxBurst(absl::MakeSpan(extra)), 0u);
}

TEST(UdpConnectTest, OneBatchForTwoPeersOnOneEntropyArrivesAtBoth) {
  auto tx = OpenOrDie(LoopbackOptions());
  auto b = OpenOrDie(LoopbackOptions());
  auto c = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(tx && b && c);
  std::vector<uint8_t> buf(100, 7);
  std::vector<TxPacket> pkts;
  for (int i = 0; i < 12; ++i) {  // b, b, c, c, b, b, ...
    const NetAddr& dst =
        (i / 2) % 2 == 0 ? b->LocalAddress() : c->LocalAddress();
    pkts.push_back(TxPacket{dst, 0, false, buf.data(), 100});
  }
  ASSERT_EQ(tx->TxBurst(absl::MakeConstSpan(pkts)), pkts.size());
  EXPECT_EQ(ReceiveN(*b, 6).size(), 6u);
  EXPECT_EQ(ReceiveN(*c, 6).size(), 6u);
  EXPECT_EQ(tx->counters().connected_sockets, 1u);
}

// Sends from a backend opened with `o` and expects delivery through
// unconnected sockets.
void ExpectSendsWithoutConnecting(const UdpOptions& o) {
  auto tx = OpenOrDie(o);
  auto rx = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(tx && rx);
  ASSERT_EQ(SendTagged(*tx, rx->LocalAddress(), 2, 1, 5), 5u);
  ExpectTagged(ReceiveN(*rx, 5), 1, 5, tx->SourcePort(2));
  EXPECT_EQ(tx->counters().connected_sockets, 0u);
}

TEST(UdpConnectTest, WildcardBindNeverConnects) {
  UdpOptions o = LoopbackOptions();
  o.bind = NetAddr::Ipv4(0, 0);
  ExpectSendsWithoutConnecting(o);
}

TEST(UdpConnectTest, OffNeverConnects) {
  UdpOptions o = LoopbackOptions();
  o.connect = false;
  ExpectSendsWithoutConnecting(o);
}

TEST(UdpConnectTest, Ipv6SocketsConnectToo) {
  UdpOptions o = LoopbackOptions();
  o.bind = Loopback6();
  o.mtu_payload = 1452;
  auto tx = OpenOrDie(o);
  auto rx = OpenOrDie(o);
  ASSERT_TRUE(tx && rx);
  ASSERT_EQ(SendTagged(*tx, rx->LocalAddress(), 1, 6, 5), 5u);
  ExpectTagged(ReceiveN(*rx, 5), 6, 5, tx->SourcePort(1));
  EXPECT_EQ(tx->counters().connected_sockets, 1u);
}

// A peer that went away: its port answers with ICMP port unreachable, which
// the kernel queues on the connected socket and reports on the next send.
// That send (to a live peer) must still go out, and be counted.
TEST(UdpConnectTest, PortUnreachableFromAGonePeerLosesNothingForOthers) {
  auto tx = OpenOrDie(LoopbackOptions());
  auto live = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(tx && live);
  NetAddr gone;
  {
    PlainSocket s(AF_INET);
    gone = s.Bind(Loopback4());
    ASSERT_TRUE(gone.valid());
  }  // closed: nothing listens on gone.port any more
  ASSERT_EQ(SendTagged(*tx, gone, 5, 0xde, 1), 1u);
  // The ICMP error is generated synchronously on loopback; give a slow
  // machine a moment anyway (not a timing assertion).
  usleep(20000);
  ASSERT_EQ(SendTagged(*tx, live->LocalAddress(), 5, 0xa1, 8), 8u);
  ExpectTagged(ReceiveN(*live, 8), 0xa1, 8, tx->SourcePort(5));
  EXPECT_EQ(tx->udp_counters().tx_icmp_errors, 1u);
  EXPECT_EQ(tx->counters().tx_icmp_errors, 1u);
  EXPECT_EQ(tx->counters().tx_dropped, 0u);
}

}  // namespace
}  // namespace braid::backend

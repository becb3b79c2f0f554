#include "backend/udp/udp_datapath.h"

#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backend/udp/udp_setup.h"
#include "gmock/gmock.h"
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

// Payload i: a 4-byte index then a pattern derived from it, so any
// corruption, truncation or mix-up is caught.
std::vector<uint8_t> Payload(uint32_t i, uint32_t len) {
  std::vector<uint8_t> p(len);
  for (uint32_t k = 0; k < len; ++k) {
    p[k] = static_cast<uint8_t>((i * 131 + k * 7) ^ (k >> 8));
  }
  if (len >= 4) std::memcpy(p.data(), &i, 4);
  return p;
}

// Sends every packet, receiving in between whenever the socket buffer
// pushes back. Returns what arrived.
std::vector<Received> SendAll(UdpBackend& tx, UdpBackend& rx,
                              const std::vector<TxPacket>& pkts) {
  std::vector<Received> got;
  size_t sent = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (sent < pkts.size() && std::chrono::steady_clock::now() < deadline) {
    size_t n = tx.TxBurst(absl::MakeConstSpan(pkts).subspan(
        sent, std::min<size_t>(64, pkts.size() - sent)));
    sent += n;
    if (n == 0) {  // back-pressure: give the queue a moment
      pollfd p{rx.WaitFd(), POLLIN, 0};
      (void)poll(&p, 1, 1);
    }
    std::vector<RxPacket> r(64);
    size_t m;
    while ((m = rx.RxBurst(absl::MakeSpan(r))) > 0) {
      for (size_t i = 0; i < m; ++i) {
        got.push_back({r[i].src, r[i].ce,
                       std::vector<uint8_t>(r[i].data, r[i].data + r[i].len)});
      }
    }
  }
  EXPECT_EQ(sent, pkts.size());
  std::vector<Received> rest =
      ReceiveN(rx, got.size() < pkts.size() ? pkts.size() - got.size() : 0);
  got.insert(got.end(), rest.begin(), rest.end());
  return got;
}

class ThousandDatagramsTest
    : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(ThousandDatagramsTest, AllArriveByteExactExactlyOnce) {
  const auto [gso, gro] = GetParam();
  auto tx = OpenOrDie(LoopbackOptions(gso, gro));
  auto rx = OpenOrDie(LoopbackOptions(gso, gro));
  ASSERT_TRUE(tx && rx);
  // Runs of equal sizes (GSO material) with short tails and odd sizes, over
  // all entropies.
  constexpr uint32_t kCount = 1000;
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<TxPacket> pkts;
  for (uint32_t i = 0; i < kCount; ++i) {
    uint32_t len = (i % 50 == 49) ? 100 + i % 7 : 1200 + (i / 50) % 3 * 100;
    if (i % 97 == 0) len = 1472;
    payloads.push_back(Payload(i, len));
  }
  for (uint32_t i = 0; i < kCount; ++i) {
    TxPacket p;
    p.dst = rx->LocalAddress();
    p.entropy = static_cast<wire::Entropy>((i / 20) % tx->EntropyCount());
    p.ect = true;
    p.data = payloads[i].data();
    p.len = static_cast<uint32_t>(payloads[i].size());
    if (i % 3 == 0 && p.len > 60) {
      // Every third datagram in two pieces (header part + uncopied tail),
      // the way the endpoint sends a large last payload.
      p.len = 48 + i % 11;
      p.tail = payloads[i].data() + p.len;
      p.tail_len = static_cast<uint32_t>(payloads[i].size()) - p.len;
    }
    pkts.push_back(p);
  }
  std::vector<Received> got = SendAll(*tx, *rx, pkts);
  ASSERT_EQ(got.size(), kCount);
  std::set<uint32_t> seen;
  for (const Received& r : got) {
    ASSERT_GE(r.bytes.size(), 4u);
    uint32_t idx;
    std::memcpy(&idx, r.bytes.data(), 4);
    ASSERT_LT(idx, kCount);
    EXPECT_TRUE(seen.insert(idx).second) << "duplicate " << idx;
    EXPECT_EQ(r.bytes, payloads[idx]) << "datagram " << idx;
    EXPECT_EQ(r.src.port, tx->SourcePort(pkts[idx].entropy));
    EXPECT_FALSE(r.ce);
  }
  EXPECT_EQ(tx->counters().tx_packets, kCount);
  EXPECT_EQ(tx->counters().tx_dropped, 0u);
  EXPECT_EQ(rx->counters().rx_packets, kCount);
  EXPECT_EQ(rx->counters().rx_dropped, 0u);
  if (gso && tx->gso_active()) {
    EXPECT_GT(tx->udp_counters().gso_sends, 0u);
  } else {
    EXPECT_EQ(tx->udp_counters().gso_sends, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(GsoGro, ThousandDatagramsTest,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return absl::StrCat(
                               std::get<0>(info.param) ? "Gso" : "NoGso",
                               std::get<1>(info.param) ? "Gro" : "NoGro");
                         });

TEST(UdpDatapathTest, EachEntropySendsFromItsOwnSourcePort) {
  auto tx = OpenOrDie(LoopbackOptions());
  auto rx = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(tx && rx);
  // Byte 0 of each datagram names its entropy.
  std::map<uint32_t, uint16_t> port_of_entropy;
  for (uint32_t e = 0; e < tx->EntropyCount(); ++e) {
    std::vector<uint8_t> one(8, static_cast<uint8_t>(e));
    TxPacket p{rx->LocalAddress(), static_cast<wire::Entropy>(e), false,
               one.data(), 8};
    ASSERT_EQ(tx->TxBurst(absl::MakeConstSpan(&p, 1)), 1u);
    std::vector<Received> got = ReceiveN(*rx, 1);
    ASSERT_EQ(got.size(), 1u);
    port_of_entropy[got[0].bytes[0]] = got[0].src.port;
  }
  std::set<uint16_t> ports;
  for (const auto& [e, port] : port_of_entropy) {
    EXPECT_EQ(port, tx->SourcePort(static_cast<wire::Entropy>(e)));
    ports.insert(port);
  }
  EXPECT_EQ(ports.size(), tx->EntropyCount());
  EXPECT_EQ(ports.count(tx->LocalAddress().port), 0u);
}

TEST(UdpDatapathTest, WorksOverIpv6Loopback) {
  UdpOptions o = LoopbackOptions();
  o.bind = Loopback6();
  o.mtu_payload = 1452;
  absl::StatusOr<std::unique_ptr<UdpBackend>> tx = UdpBackend::Open(o);
  if (!tx.ok()) GTEST_SKIP() << "::1 unavailable: " << tx.status();
  auto rx = OpenOrDie(o);
  ASSERT_TRUE(rx);
  EXPECT_EQ(rx->LocalAddress().family, NetAddr::Family::kIpv6);
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<TxPacket> pkts;
  for (uint32_t i = 0; i < 200; ++i) payloads.push_back(Payload(i, 1452));
  for (uint32_t i = 0; i < 200; ++i) {
    pkts.push_back({rx->LocalAddress(),
                    static_cast<wire::Entropy>(i % (*tx)->EntropyCount()), true,
                    payloads[i].data(), 1452});
  }
  std::vector<Received> got = SendAll(**tx, *rx, pkts);
  ASSERT_EQ(got.size(), 200u);
  std::set<uint32_t> seen;
  for (const Received& r : got) {
    uint32_t idx;
    std::memcpy(&idx, r.bytes.data(), 4);
    ASSERT_LT(idx, 200u);
    seen.insert(idx);
    EXPECT_EQ(r.bytes, payloads[idx]);
    EXPECT_EQ(r.src, ([&] {
                NetAddr a = Loopback6((*tx)->SourcePort(pkts[idx].entropy));
                return a;
              })());
  }
  EXPECT_EQ(seen.size(), 200u);
}

// Sends one datagram from `b` and returns the TOS byte a plain socket saw.
int TosOfSent(UdpBackend& b, PlainSocket& sink, const NetAddr& sink_addr,
              bool ect) {
  uint8_t byte = 1;
  TxPacket p{sink_addr, 0, ect, &byte, 1};
  if (b.TxBurst(absl::MakeConstSpan(&p, 1)) != 1) return -2;
  int tos = -1;
  std::string payload;
  if (sink.RecvWithTos(&tos, &payload) != 1) return -3;
  return tos;
}

TEST(UdpEcnTest, EctPacketsCarryEct0AndOthersDoNot) {
  PlainSocket sink(AF_INET);
  const int on = 1;
  ASSERT_EQ(setsockopt(sink.fd(), IPPROTO_IP, IP_RECVTOS, &on, sizeof(on)), 0);
  NetAddr sink_addr = sink.Bind(Loopback4());
  ASSERT_TRUE(sink_addr.valid());
  auto b = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(b);
  EXPECT_EQ(TosOfSent(*b, sink, sink_addr, true) & 3, 2);   // ECT(0)
  EXPECT_EQ(TosOfSent(*b, sink, sink_addr, false) & 3, 0);  // Not-ECT
}

TEST(UdpEcnTest, EcnOffNeverMarks) {
  PlainSocket sink(AF_INET);
  const int on = 1;
  ASSERT_EQ(setsockopt(sink.fd(), IPPROTO_IP, IP_RECVTOS, &on, sizeof(on)), 0);
  NetAddr sink_addr = sink.Bind(Loopback4());
  UdpOptions o = LoopbackOptions();
  o.ecn = false;
  auto b = OpenOrDie(o);
  ASSERT_TRUE(b);
  EXPECT_EQ(TosOfSent(*b, sink, sink_addr, true) & 3, 0);
}

TEST(UdpEcnTest, Ipv6EctPacketsCarryEct0) {
  PlainSocket sink(AF_INET6);
  const int on = 1;
  ASSERT_EQ(
      setsockopt(sink.fd(), IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof(on)), 0);
  NetAddr sink_addr = sink.Bind(Loopback6());
  if (!sink_addr.valid()) GTEST_SKIP() << "::1 unavailable";
  UdpOptions o = LoopbackOptions();
  o.bind = Loopback6();
  auto b = OpenOrDie(o);
  ASSERT_TRUE(b);
  EXPECT_EQ(TosOfSent(*b, sink, sink_addr, true) & 3, 2);
  EXPECT_EQ(TosOfSent(*b, sink, sink_addr, false) & 3, 0);
}

TEST(UdpEcnTest, CeMarkedDatagramIsReportedAsCe) {
  auto b = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(b);
  PlainSocket marker(AF_INET);
  const int ce = 3;
  ASSERT_EQ(setsockopt(marker.fd(), IPPROTO_IP, IP_TOS, &ce, sizeof(ce)), 0);
  PlainSocket plain(AF_INET);
  ASSERT_TRUE(marker.SendTo(b->LocalAddress(), "ce"));
  ASSERT_TRUE(plain.SendTo(b->LocalAddress(), "no"));
  std::vector<Received> got = ReceiveN(*b, 2);
  ASSERT_EQ(got.size(), 2u);
  for (const Received& r : got) {
    std::string s(r.bytes.begin(), r.bytes.end());
    EXPECT_EQ(r.ce, s == "ce") << s;
  }
  EXPECT_EQ(b->udp_counters().rx_ce, 1u);
}

TEST(UdpEcnTest, Ipv6CeMarkedDatagramIsReportedAsCe) {
  UdpOptions o = LoopbackOptions();
  o.bind = Loopback6();
  absl::StatusOr<std::unique_ptr<UdpBackend>> b = UdpBackend::Open(o);
  if (!b.ok()) GTEST_SKIP() << "::1 unavailable: " << b.status();
  PlainSocket marker(AF_INET6);
  const int ce = 3;
  ASSERT_EQ(setsockopt(marker.fd(), IPPROTO_IPV6, IPV6_TCLASS, &ce, sizeof(ce)),
            0);
  ASSERT_TRUE(marker.SendTo((*b)->LocalAddress(), "ce"));
  std::vector<Received> got = ReceiveN(**b, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].ce);
}

TEST(UdpBatchingTest, OneBurstOnOneEntropyIsOneSendSyscall) {
  for (bool gso : {false, true}) {
    auto tx = OpenOrDie(LoopbackOptions(gso, true));
    auto rx = OpenOrDie(LoopbackOptions(gso, true));
    ASSERT_TRUE(tx && rx);
    std::vector<uint8_t> data(1000, 7);
    std::vector<TxPacket> pkts(
        64, TxPacket{rx->LocalAddress(), 3, true, data.data(), 1000});
    ASSERT_EQ(tx->TxBurst(pkts), 64u);
    EXPECT_EQ(tx->counters().tx_syscalls, 1u) << "gso=" << gso;
    if (gso && tx->gso_active()) {
      EXPECT_EQ(tx->udp_counters().gso_sends, 1u);
      EXPECT_EQ(tx->udp_counters().gso_segments, 64u);
    }
    EXPECT_EQ(ReceiveN(*rx, 64).size(), 64u);
  }
}

// GSO segments that lie back to back in memory go to the kernel as one
// iovec; scattered ones each need their own. Both arrive byte-exact.
TEST(UdpBatchingTest, AdjacentSegmentsShareOneIovec) {
  for (bool contiguous : {true, false}) {
    auto tx = OpenOrDie(LoopbackOptions(true, true));
    auto rx = OpenOrDie(LoopbackOptions(true, true));
    ASSERT_TRUE(tx && rx);
    if (!tx->gso_active()) GTEST_SKIP() << "no UDP GSO here";
    constexpr uint32_t kLen = 1000, kCount = 40;
    // Slot stride: kLen (back to back) or kLen + 24 (gaps between).
    const uint32_t stride = contiguous ? kLen : kLen + 24;
    std::vector<uint8_t> arena(stride * kCount);
    std::vector<TxPacket> pkts;
    for (uint32_t i = 0; i < kCount; ++i) {
      const auto p = Payload(i, kLen);
      std::copy(p.begin(), p.end(), arena.begin() + i * stride);
      pkts.push_back(
          {rx->LocalAddress(), 2, true, arena.data() + i * stride, kLen});
    }
    ASSERT_EQ(tx->TxBurst(pkts), kCount);
    EXPECT_EQ(tx->udp_counters().gso_sends, 1u);
    EXPECT_EQ(tx->udp_counters().tx_iovecs, contiguous ? 1u : kCount);
    const std::vector<Received> got = ReceiveN(*rx, kCount);
    ASSERT_EQ(got.size(), kCount);
    for (uint32_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(got[i].bytes, Payload(i, kLen)) << "datagram " << i;
    }
  }
}

// TxPacket::run_follow lets a run's siblings skip the per-packet checks;
// the messages built must be the same as without it. A burst of 200: runs
// of 120 datagrams of 500 B (past GSO's 64 segments), 70 of 1200 B (past
// its 65507 bytes) and 10 with a shorter last datagram, on two entropies;
// the last hint reaches past the end of the burst.
TEST(UdpBatchingTest, RunHintsBuildTheSameSendsAsNoHints) {
  struct Counts {
    uint64_t syscalls, gso_sends, gso_segments, iovecs, bytes;
  };
  Counts c[2];
  for (int hinted = 0; hinted < 2; ++hinted) {
    UdpOptions o = LoopbackOptions(true, true);
    o.burst = 200;
    auto tx = OpenOrDie(o);
    auto rx = OpenOrDie(LoopbackOptions(true, true));
    ASSERT_TRUE(tx && rx);
    if (!tx->gso_active()) GTEST_SKIP() << "no UDP GSO here";
    constexpr uint32_t kLen = 1200;
    const uint32_t runs[][3] = {{2, 120, 500}, {5, 70, kLen}, {2, 10, kLen}};
    uint32_t total = 0;
    for (const auto& r : runs) total += r[1];
    std::vector<uint8_t> arena(size_t{kLen} * total);
    std::vector<TxPacket> pkts;
    uint32_t k = 0;
    for (const auto& r : runs) {
      for (uint32_t j = 0; j < r[1]; ++j, ++k) {
        // The 10-run's last datagram is shorter: it closes the message.
        const uint32_t len = r[1] == 10 && j == 9 ? kLen / 2 : r[2];
        const auto p = Payload(k, len);
        std::copy(p.begin(), p.end(), arena.begin() + size_t{k} * kLen);
        TxPacket t{rx->LocalAddress(), static_cast<wire::Entropy>(r[0]), true,
                   arena.data() + size_t{k} * kLen, len};
        // In the 10-run the hints claim only the equal-sized datagrams,
        // and the burst's last packet claims 3 more than there are.
        if (hinted == 1) {
          const uint32_t left = r[1] == 10 ? (j < 9 ? 8 - j : 3) : r[1] - 1 - j;
          t.run_follow = static_cast<uint8_t>(left);
        }
        pkts.push_back(t);
      }
    }
    ASSERT_EQ(tx->TxBurst(pkts), total);
    c[hinted] = {tx->counters().tx_syscalls, tx->udp_counters().gso_sends,
                 tx->udp_counters().gso_segments, tx->udp_counters().tx_iovecs,
                 tx->counters().tx_bytes};
    const std::vector<Received> got = ReceiveN(*rx, total);
    ASSERT_EQ(got.size(), total);
    // Per entropy the order is kept; check every datagram arrived intact.
    std::vector<int> seen(total, 0);
    for (const Received& g : got) {
      for (uint32_t i = 0; i < total; ++i) {
        const uint32_t len = i < 120 ? 500 : i == total - 1 ? kLen / 2 : kLen;
        if (g.bytes == Payload(i, len)) ++seen[i];
      }
    }
    for (uint32_t i = 0; i < total; ++i) EXPECT_EQ(seen[i], 1) << i;
  }
  EXPECT_EQ(c[1].syscalls, c[0].syscalls);
  EXPECT_EQ(c[1].gso_sends, c[0].gso_sends);
  EXPECT_EQ(c[1].gso_segments, c[0].gso_segments);
  EXPECT_EQ(c[1].iovecs, c[0].iovecs);
  EXPECT_EQ(c[1].bytes, c[0].bytes);
  EXPECT_GE(c[0].gso_sends, 5u);  // 64 + 56, 54 + 16, 10 at least
}

// Datagrams of two pieces (head in a slot, payload elsewhere) join one GSO
// super-datagram like whole ones: two iovecs each, every segment intact.
TEST(UdpBatchingTest, TwoPieceDatagramsFormOneGsoSend) {
  auto tx = OpenOrDie(LoopbackOptions(true, true));
  auto rx = OpenOrDie(LoopbackOptions(true, true));
  ASSERT_TRUE(tx && rx);
  if (!tx->gso_active()) GTEST_SKIP() << "no UDP GSO here";
  constexpr uint32_t kLen = 1400, kHead = 52, kCount = 30;
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<TxPacket> pkts;
  for (uint32_t i = 0; i < kCount; ++i) payloads.push_back(Payload(i, kLen));
  // Heads live in their own slots (64 bytes apart), tails stay in place.
  std::vector<uint8_t> heads(64 * kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    std::copy(payloads[i].begin(), payloads[i].begin() + kHead,
              heads.begin() + 64 * i);
    TxPacket p{rx->LocalAddress(), 1, true, heads.data() + 64 * i, kHead};
    p.tail = payloads[i].data() + kHead;
    p.tail_len = kLen - kHead;
    pkts.push_back(p);
  }
  ASSERT_EQ(tx->TxBurst(pkts), kCount);
  EXPECT_EQ(tx->udp_counters().gso_sends, 1u);
  EXPECT_EQ(tx->udp_counters().gso_segments, kCount);
  EXPECT_EQ(tx->udp_counters().tx_iovecs, 2 * kCount);
  const std::vector<Received> got = ReceiveN(*rx, kCount);
  ASSERT_EQ(got.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(got[i].bytes, payloads[i]) << "datagram " << i;
  }
}

TEST(UdpBatchingTest, TooLongTwoPieceDatagramIsRefused) {
  auto tx = OpenOrDie(LoopbackOptions(false, false));
  auto rx = OpenOrDie(LoopbackOptions(false, false));
  ASSERT_TRUE(tx && rx);
  std::vector<uint8_t> buf(3000, 7);
  TxPacket p{rx->LocalAddress(), 0, false, buf.data(), 1000};
  p.tail = buf.data() + 1000;
  p.tail_len = 1000;  // 2000 bytes in all: over the 1472-byte limit
  EXPECT_EQ(tx->TxBurst({p}), 1u);  // taken, but dropped and counted
  EXPECT_EQ(tx->counters().tx_dropped, 1u);
  EXPECT_EQ(tx->counters().tx_packets, 0u);
}

// CLOCK_MONOTONIC now, the scale RxPacket::arrival uses.
TimeNs Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimeNs(int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec);
}

// Each datagram reports when the kernel received it, on CLOCK_MONOTONIC's
// scale: after it was sent, before it was read — also when it waited in the
// socket for a while, and for every datagram of a GRO buffer.
TEST(UdpRxTimestampTest, ArrivalIsTheKernelsReceiveTime) {
  for (bool gro : {false, true}) {
    auto tx = OpenOrDie(LoopbackOptions(true, gro));
    auto rx = OpenOrDie(LoopbackOptions(true, gro));
    ASSERT_TRUE(tx && rx);
    std::vector<uint8_t> buf(1000 * 8, 5);
    std::vector<TxPacket> pkts;
    for (int i = 0; i < 8; ++i) {
      pkts.push_back({rx->LocalAddress(), 0, false, &buf[1000 * i], 1000});
    }
    const TimeNs before = Now();
    ASSERT_EQ(tx->TxBurst(pkts), 8u);
    const TimeNs sent = Now();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::vector<Received> got = ReceiveN(*rx, 8);
    const TimeNs read = Now();
    ASSERT_EQ(got.size(), 8u);
    for (const Received& r : got) {
      ASSERT_FALSE(r.arrival.IsInfinite()) << "gro=" << gro;
      EXPECT_GE(r.arrival, before);
      // Not the read time: the datagrams sat in the socket for 20 ms.
      EXPECT_LE(r.arrival, sent + DurationNs::Millis(10)) << "gro=" << gro;
      EXPECT_LT(r.arrival, read);
    }
  }
}

// Off: arrival is unknown. The switch works on an open socket.
TEST(UdpRxTimestampTest, OffMeansArrivalUnknownAndSwitchesWhileOpen) {
  UdpOptions o = LoopbackOptions(false, false);
  o.rx_timestamps = false;
  auto tx = OpenOrDie(LoopbackOptions(false, false));
  auto rx = OpenOrDie(o);
  ASSERT_TRUE(tx && rx);
  std::vector<uint8_t> buf(100, 1);
  auto one = [&] {
    EXPECT_EQ(tx->TxBurst({{rx->LocalAddress(), 0, false, buf.data(), 100}}),
              1u);
    const std::vector<Received> got = ReceiveN(*rx, 1);
    EXPECT_EQ(got.size(), 1u);
    return got.empty() ? TimeNs::Infinite() : got[0].arrival;
  };
  EXPECT_TRUE(one().IsInfinite());
  EXPECT_EQ(rx->counters().rx_timestamps, 0u);
  rx->SetRxTimestamps(true);
  EXPECT_FALSE(one().IsInfinite());
  EXPECT_EQ(rx->counters().rx_timestamps, 1u);
  rx->SetRxTimestamps(false);
  EXPECT_TRUE(one().IsInfinite());
  EXPECT_EQ(rx->counters().rx_timestamps, 1u);
}

TEST(UdpBatchingTest, RunsOnFourEntropiesAreFourSendSyscalls) {
  auto tx = OpenOrDie(LoopbackOptions(false, false));
  auto rx = OpenOrDie(LoopbackOptions(false, false));
  ASSERT_TRUE(tx && rx);
  std::vector<uint8_t> data(500, 1);
  std::vector<TxPacket> pkts;
  for (int i = 0; i < 64; ++i) {
    pkts.push_back({rx->LocalAddress(), static_cast<wire::Entropy>(i / 16),
                    false, data.data(), 500});
  }
  ASSERT_EQ(tx->TxBurst(pkts), 64u);
  EXPECT_EQ(tx->counters().tx_syscalls, 4u);
  EXPECT_EQ(ReceiveN(*rx, 64).size(), 64u);
}

TEST(UdpBatchingTest, QueuedDatagramsAreReadWithOneReceiveSyscall) {
  auto tx = OpenOrDie(LoopbackOptions(false, false));
  auto rx = OpenOrDie(LoopbackOptions(false, false));
  ASSERT_TRUE(tx && rx);
  std::vector<uint8_t> data(500, 1);
  std::vector<TxPacket> pkts(
      64, TxPacket{rx->LocalAddress(), 0, false, data.data(), 500});
  ASSERT_EQ(tx->TxBurst(pkts), 64u);
  // Loopback delivers synchronously within sendmmsg, so all 64 are queued.
  std::vector<RxPacket> out(64);
  EXPECT_EQ(rx->RxBurst(absl::MakeSpan(out)), 64u);
  EXPECT_EQ(rx->counters().rx_syscalls, 1u);
}

TEST(UdpGroTest, CoalescedBufferIsSplitAcrossSmallBursts) {
  auto tx = OpenOrDie(LoopbackOptions(true, true));
  auto rx = OpenOrDie(LoopbackOptions(true, true));
  ASSERT_TRUE(tx && rx);
  if (!tx->gso_active() || !rx->gro_active()) GTEST_SKIP() << "no GSO/GRO";
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<TxPacket> pkts;
  for (uint32_t i = 0; i < 40; ++i) {
    payloads.push_back(Payload(i, i == 39 ? 333 : 1000));
  }
  for (uint32_t i = 0; i < 40; ++i) {
    pkts.push_back({rx->LocalAddress(), 0, true, payloads[i].data(),
                    static_cast<uint32_t>(payloads[i].size())});
  }
  ASSERT_EQ(tx->TxBurst(pkts), 40u);
  EXPECT_EQ(tx->udp_counters().gso_sends, 1u);
  // Receive with bursts of 7: one recvmmsg, the rest drained from memory.
  std::vector<Received> got = ReceiveN(*rx, 40, 7);
  ASSERT_EQ(got.size(), 40u);
  for (uint32_t i = 0; i < 40; ++i) {
    EXPECT_EQ(got[i].bytes, payloads[i]) << i;  // one buffer keeps order
  }
  EXPECT_EQ(rx->udp_counters().gro_buffers, 1u);
  EXPECT_EQ(rx->counters().rx_syscalls, 1u);
  EXPECT_FALSE(rx->RxPending());
}

// Runs `body` on a thread inside a fresh network namespace whose loopback
// has a slow tbf qdisc, so a tiny socket send buffer fills up (loopback
// without a qdisc frees send-buffer space at once and never says EAGAIN).
// Returns a skip reason, or "" after running body.
std::string InSlowLoopbackNamespace(const std::function<void()>& body) {
  if (geteuid() != 0) return "needs root (network namespace + tc)";
  std::string skip;
  std::thread t([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      skip = "unshare(CLONE_NEWNET) failed";
      return;
    }
    // Child processes inherit this thread's namespace.
    if (std::system("ip link set lo up && tc qdisc add dev lo root tbf "
                    "rate 20mbit burst 1600 limit 1000000 2>/dev/null") != 0) {
      skip = "ip/tc could not configure the namespace";
      return;
    }
    body();
  });  // the namespace disappears with its last socket
  t.join();
  return skip;
}

TEST(UdpBackpressureTest, FullSendBufferStopsTheBurstAndNothingIsLost) {
  for (bool gso : {false, true}) {
    std::string skip = InSlowLoopbackNamespace([&] {
      UdpOptions o = LoopbackOptions(gso, true);
      o.sndbuf = 1;  // the kernel's minimum
      auto tx = OpenOrDie(o);
      auto rx = OpenOrDie(LoopbackOptions(gso, true));
      ASSERT_TRUE(tx && rx);
      // Three bursts of 64 back to back: far more than the send buffer.
      constexpr uint32_t kCount = 192;
      std::vector<std::vector<uint8_t>> payloads;
      std::vector<TxPacket> pkts;
      for (uint32_t i = 0; i < kCount; ++i) {
        payloads.push_back(Payload(i, 1000));
      }
      for (uint32_t i = 0; i < kCount; ++i) {
        pkts.push_back({rx->LocalAddress(), 0, true, payloads[i].data(), 1000});
      }
      size_t first = 0;
      for (int b = 0; b < 3 && first == static_cast<size_t>(b) * 64; ++b) {
        first += tx->TxBurst(absl::MakeConstSpan(pkts).subspan(first, 64));
      }
      EXPECT_LT(first, kCount) << "gso=" << gso;
      EXPECT_GE(tx->udp_counters().tx_eagain, 1u);
      EXPECT_EQ(tx->counters().tx_packets, first);
      EXPECT_EQ(tx->counters().tx_dropped, 0u);
      // Offer the rest again until the qdisc drains (hang guard: 5 s).
      std::vector<Received> got = SendAll(
          *tx, *rx, std::vector<TxPacket>(pkts.begin() + first, pkts.end()));
      std::vector<Received> more =
          ReceiveN(*rx, got.size() < kCount ? kCount - got.size() : 0);
      got.insert(got.end(), more.begin(), more.end());
      ASSERT_EQ(got.size(), kCount) << "gso=" << gso;
      std::set<uint32_t> seen;
      for (const Received& r : got) {
        uint32_t idx;
        std::memcpy(&idx, r.bytes.data(), 4);
        ASSERT_LT(idx, kCount);
        EXPECT_TRUE(seen.insert(idx).second);
        EXPECT_EQ(r.bytes, payloads[idx]);
      }
      EXPECT_EQ(tx->counters().tx_packets, kCount);
    });
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
}

TEST(UdpGsoFallbackTest, RefusedGsoIsTurnedOffAndTheBurstStillGoesOut) {
  // SO_NO_CHECK makes the kernel refuse UDP_SEGMENT (EINVAL): the datapath
  // must switch GSO off and resend the same packets one datagram each.
  UdpOptions o = LoopbackOptions(true, false);
  o.num_entropies = 1;
  absl::StatusOr<UdpSockets> socks = OpenUdpSockets(o);
  ASSERT_TRUE(socks.ok()) << socks.status();
  const int on = 1;
  ASSERT_EQ(
      setsockopt(socks->tx_fds[0], SOL_SOCKET, SO_NO_CHECK, &on, sizeof(on)),
      0);
  UdpDatapath dp(socks->family, socks->rx_fd, socks->tx_fds, o, false);
  auto rx = OpenOrDie(LoopbackOptions(false, false));
  ASSERT_TRUE(rx);
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<TxPacket> pkts;
  for (uint32_t i = 0; i < 32; ++i) payloads.push_back(Payload(i, 800));
  for (uint32_t i = 0; i < 32; ++i) {
    pkts.push_back({rx->LocalAddress(), 0, true, payloads[i].data(), 800});
  }
  ASSERT_EQ(dp.TxBurst(pkts), 32u);
  EXPECT_FALSE(dp.gso_active());
  EXPECT_EQ(dp.udp_counters().gso_fallbacks, 1u);
  EXPECT_EQ(dp.counters().tx_packets, 32u);
  EXPECT_EQ(dp.counters().tx_dropped, 0u);
  std::vector<Received> got = ReceiveN(*rx, 32);
  ASSERT_EQ(got.size(), 32u);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(got[i].bytes, payloads[i]);
}

TEST(UdpTxValidationTest, InvalidPacketsAreTakenDroppedAndCounted) {
  auto tx = OpenOrDie(LoopbackOptions());
  auto rx = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(tx && rx);
  std::vector<uint8_t> big(2000, 1);
  std::vector<TxPacket> pkts = {
      {rx->LocalAddress(), 0, false, big.data(), 100},    // ok
      {rx->LocalAddress(), 999, false, big.data(), 100},  // bad entropy
      {rx->LocalAddress(), 0, false, big.data(), 2000},   // > mtu
      {Loopback6(rx->LocalAddress().port), 0, false, big.data(), 10},  // v6
      {NetAddr{}, 0, false, big.data(), 10},            // no address
      {rx->LocalAddress(), 0, false, nullptr, 10},      // no data
      {rx->LocalAddress(), 1, false, big.data(), 200},  // ok
  };
  EXPECT_EQ(tx->TxBurst(pkts), pkts.size());
  EXPECT_EQ(tx->counters().tx_packets, 2u);
  EXPECT_EQ(tx->counters().tx_dropped, 5u);
  EXPECT_EQ(tx->udp_counters().tx_invalid, 5u);
  EXPECT_EQ(ReceiveN(*rx, 2).size(), 2u);
}

// A peer with a larger MTU: its datagrams are taken whole and counted (a
// receiver that dropped them would leave the two unable to talk).
TEST(UdpRxValidationTest, DatagramLargerThanMtuIsAcceptedAndCounted) {
  for (bool gro : {false, true}) {
    auto rx = OpenOrDie(LoopbackOptions(true, gro));
    ASSERT_TRUE(rx);
    PlainSocket peer(AF_INET);
    const std::string big(65507, 'x');  // the largest IPv4 UDP payload
    ASSERT_TRUE(peer.SendTo(rx->LocalAddress(), std::string(3000, 'y')));
    ASSERT_TRUE(peer.SendTo(rx->LocalAddress(), big));
    ASSERT_TRUE(peer.SendTo(rx->LocalAddress(), "fine"));
    std::vector<Received> got = ReceiveN(*rx, 3);
    ASSERT_EQ(got.size(), 3u) << "gro=" << gro;
    EXPECT_EQ(std::string(got[0].bytes.begin(), got[0].bytes.end()),
              std::string(3000, 'y'));
    EXPECT_EQ(std::string(got[1].bytes.begin(), got[1].bytes.end()), big);
    EXPECT_EQ(std::string(got[2].bytes.begin(), got[2].bytes.end()), "fine");
    EXPECT_EQ(rx->counters().rx_over_mtu, 2u) << "gro=" << gro;
    EXPECT_EQ(rx->counters().rx_dropped, 0u) << "gro=" << gro;
  }
}

TEST(UdpRxValidationTest, EmptyDatagramIsDeliveredAsEmpty) {
  auto rx = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(rx);
  PlainSocket peer(AF_INET);
  ASSERT_TRUE(peer.SendTo(rx->LocalAddress(), ""));
  std::vector<Received> got = ReceiveN(*rx, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].bytes.empty());
}

TEST(UdpRxTest, KernelDropsOnAFullReceiveBufferAreCounted) {
  UdpOptions o = LoopbackOptions(false, false);
  o.rcvbuf = 1;  // the kernel's minimum: a few datagrams
  auto rx = OpenOrDie(o);
  auto tx = OpenOrDie(LoopbackOptions(false, false));
  ASSERT_TRUE(rx && tx);
  std::vector<uint8_t> data(1000, 4);
  std::vector<TxPacket> pkts(
      64, TxPacket{rx->LocalAddress(), 0, false, data.data(), 1000});
  ASSERT_EQ(tx->TxBurst(pkts), 64u);
  std::vector<RxPacket> out(64);
  const size_t queued = rx->RxBurst(absl::MakeSpan(out));
  ASSERT_GT(queued, 0u);
  ASSERT_LT(queued, 64u);
  // The drop count rides on the next datagram that fits.
  ASSERT_EQ(tx->TxBurst(absl::MakeConstSpan(pkts).subspan(0, 1)), 1u);
  ASSERT_EQ(ReceiveN(*rx, 1).size(), 1u);
  EXPECT_EQ(rx->udp_counters().rx_kernel_drops, 64u - queued);
}

TEST(UdpDualStackTest, Ipv6WildcardBackendTalksToIpv4Peers) {
  UdpOptions o = LoopbackOptions();
  o.bind = NetAddr{};
  o.bind.family = NetAddr::Family::kIpv6;  // [::]:0, dual-stack
  absl::StatusOr<std::unique_ptr<UdpBackend>> b = UdpBackend::Open(o);
  if (!b.ok()) GTEST_SKIP() << "no IPv6: " << b.status();
  PlainSocket peer(AF_INET);
  const int on = 1;
  ASSERT_EQ(setsockopt(peer.fd(), IPPROTO_IP, IP_RECVTOS, &on, sizeof(on)), 0);
  NetAddr peer_addr = peer.Bind(Loopback4());
  ASSERT_TRUE(peer_addr.valid());
  ASSERT_TRUE(peer.SendTo(Loopback4((*b)->LocalAddress().port), "v4"));
  std::vector<Received> got = ReceiveN(**b, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].src, peer_addr);  // an IPv4 address, not ::ffff:...
  // Reply to the IPv4 address from the IPv6 sockets, marked ECT(0).
  uint8_t reply[2] = {'o', 'k'};
  TxPacket p{got[0].src, 5, true, reply, 2};
  ASSERT_EQ((*b)->TxBurst(absl::MakeConstSpan(&p, 1)), 1u);
  int tos = -1;
  std::string payload;
  ASSERT_EQ(peer.RecvWithTos(&tos, &payload), 2);
  EXPECT_EQ(payload, "ok");
  EXPECT_EQ(tos & 3, 2);
}

TEST(UdpRxTest, NothingQueuedReturnsZero) {
  auto rx = OpenOrDie(LoopbackOptions());
  ASSERT_TRUE(rx);
  std::vector<RxPacket> out(8);
  EXPECT_EQ(rx->RxBurst(absl::MakeSpan(out)), 0u);
  EXPECT_EQ(rx->udp_counters().rx_errors, 0u);
}

// recvmmsg shortens a filled slot's control length to what it wrote; the
// next receive into that slot needs the full room back (RxBurst restores
// only the slots the kernel filled). A plain datagram (a TOS cmsg) then a
// GRO-coalesced buffer (UDP_GRO + TOS cmsgs) through the same first slot,
// with empty polls in between: a short control room cuts the second one's
// control data (a CE mark or the segment size lost).
TEST(UdpRxTest, ReusedSlotGetsItsFullControlRoomBack) {
  auto tx = OpenOrDie(LoopbackOptions(true, true));
  auto rx = OpenOrDie(LoopbackOptions(true, true));
  ASSERT_TRUE(tx && rx);
  if (!tx->gso_active() || !rx->gro_active()) GTEST_SKIP() << "no GSO/GRO";
  std::vector<uint8_t> data(1000, 5);
  std::vector<RxPacket> out(8);
  for (int round = 0; round < 3; ++round) {
    TxPacket one{rx->LocalAddress(), 0, true, data.data(), 1000};
    ASSERT_EQ(tx->TxBurst(absl::MakeConstSpan(&one, 1)), 1u);
    ASSERT_EQ(ReceiveN(*rx, 1).size(), 1u);
    EXPECT_EQ(rx->RxBurst(absl::MakeSpan(out)), 0u);  // empty poll
    std::vector<TxPacket> run(
        8, TxPacket{rx->LocalAddress(), 0, true, data.data(), 1000});
    ASSERT_EQ(tx->TxBurst(run), 8u);
    EXPECT_EQ(ReceiveN(*rx, 8).size(), 8u) << "round " << round;
  }
  EXPECT_EQ(rx->counters().rx_dropped, 0u);
  EXPECT_EQ(rx->udp_counters().rx_ctrl_truncated, 0u);
  EXPECT_EQ(rx->udp_counters().gro_buffers, 3u);
}

// A busy poller that keeps finding nothing asks for one datagram at a time
// (the cheapest receive when a lone reply is what comes next); the first
// receive that finds data turns full bursts back on, so a flood is read in
// bursts again from the next call on.
TEST(UdpRxTest, AfterEmptyPollsOneDatagramThenFullBurstsAgain) {
  auto tx = OpenOrDie(LoopbackOptions(false, false));
  auto rx = OpenOrDie(LoopbackOptions(false, false));
  ASSERT_TRUE(tx && rx);
  std::vector<RxPacket> out(64);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rx->RxBurst(absl::MakeSpan(out)), 0u);
  std::vector<uint8_t> data(100, 2);
  std::vector<TxPacket> pkts(
      20, TxPacket{rx->LocalAddress(), 0, false, data.data(), 100});
  ASSERT_EQ(tx->TxBurst(pkts), 20u);
  const uint64_t s0 = rx->counters().rx_syscalls;
  EXPECT_EQ(rx->RxBurst(absl::MakeSpan(out)), 1u);
  EXPECT_EQ(rx->RxBurst(absl::MakeSpan(out)), 19u);
  EXPECT_EQ(rx->counters().rx_syscalls - s0, 2u);
  // One empty poll alone (a caller about to block on the fd) keeps bursts.
  EXPECT_EQ(rx->RxBurst(absl::MakeSpan(out)), 0u);
  ASSERT_EQ(tx->TxBurst(pkts), 20u);
  EXPECT_EQ(rx->RxBurst(absl::MakeSpan(out)), 20u);
}

}  // namespace
}  // namespace braid::backend

#include "backend/udp/udp_backend.h"

#include <fcntl.h>
#include <poll.h>
#include <time.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/backend/udp/udp_test_util.h"

namespace braid::backend {
namespace {

using ::testing::HasSubstr;
using testing::LoopbackOptions;
using testing::PlainSocket;

TEST(UdpBackendTest, OpenReportsTheResolvedAddressAndShape) {
  UdpOptions o = LoopbackOptions();
  o.num_entropies = 5;
  o.mtu_payload = 1400;
  absl::StatusOr<std::unique_ptr<UdpBackend>> b = UdpBackend::Open(o);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->EntropyCount(), 5u);
  EXPECT_EQ((*b)->MaxDatagram(), 1400u);
  EXPECT_EQ((*b)->LocalAddress().ipv4(), 0x7f000001u);
  EXPECT_NE((*b)->LocalAddress().port, 0);
  EXPECT_GE((*b)->WaitFd(), 0);
}

TEST(UdpBackendTest, CloseReleasesEverySocket) {
  int fd = -1;
  {
    absl::StatusOr<std::unique_ptr<UdpBackend>> b =
        UdpBackend::Open(LoopbackOptions());
    ASSERT_TRUE(b.ok()) << b.status();
    fd = (*b)->WaitFd();
    EXPECT_NE(fcntl(fd, F_GETFD), -1);
  }
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
}

TEST(UdpBackendTest, BadOptionsAreRejectedBeforeAnySocket) {
  UdpOptions o = LoopbackOptions();
  o.num_entropies = 0;
  absl::StatusOr<std::unique_ptr<UdpBackend>> b = UdpBackend::Open(o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(UdpBackendTest, SecondBackendOnSamePortNamesThePort) {
  absl::StatusOr<std::unique_ptr<UdpBackend>> a =
      UdpBackend::Open(LoopbackOptions());
  ASSERT_TRUE(a.ok()) << a.status();
  UdpOptions o = LoopbackOptions();
  o.bind.port = (*a)->LocalAddress().port;
  absl::StatusOr<std::unique_ptr<UdpBackend>> b = UdpBackend::Open(o);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(),
              HasSubstr(absl::StrCat("port ", o.bind.port, " in use")));
}

TEST(UdpBackendTest, WaitFdBecomesReadableWhenADatagramArrives) {
  absl::StatusOr<std::unique_ptr<UdpBackend>> b =
      UdpBackend::Open(LoopbackOptions());
  ASSERT_TRUE(b.ok()) << b.status();
  pollfd p{(*b)->WaitFd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
  PlainSocket peer(AF_INET);
  ASSERT_TRUE(peer.SendTo((*b)->LocalAddress(), "hi"));
  EXPECT_EQ(poll(&p, 1, 5000), 1);
}

TEST(UdpBackendTest, WorksThroughTheBackendInterface) {
  absl::StatusOr<std::unique_ptr<UdpBackend>> a =
      UdpBackend::Open(LoopbackOptions());
  absl::StatusOr<std::unique_ptr<UdpBackend>> b =
      UdpBackend::Open(LoopbackOptions());
  ASSERT_TRUE(a.ok() && b.ok());
  Backend& tx = **a;
  uint8_t bytes[3] = {1, 2, 3};
  TxPacket p{(*b)->LocalAddress(), 2, true, bytes, 3};
  EXPECT_EQ(tx.TxBurst(absl::MakeConstSpan(&p, 1)), 1u);
  std::vector<testing::Received> got = testing::ReceiveN(**b, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].bytes, std::vector<uint8_t>({1, 2, 3}));
  EXPECT_EQ(got[0].src.port, (*a)->SourcePort(2));
  EXPECT_EQ(tx.counters().tx_bytes, 3u);
}

TimeNs Monotonic() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimeNs(int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec);
}

TEST(UdpBackendTest, LastRxTimeIsTheMonotonicTimeOfTheLastReceive) {
  absl::StatusOr<std::unique_ptr<UdpBackend>> b =
      UdpBackend::Open(LoopbackOptions());
  ASSERT_TRUE(b.ok()) << b.status();
  Backend& rx = **b;
  EXPECT_TRUE(rx.LastRxTime().IsInfinite());  // nothing received yet
  PlainSocket peer(AF_INET);
  ASSERT_TRUE(peer.SendTo((*b)->LocalAddress(), "hi"));
  pollfd p{rx.WaitFd(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  RxPacket out[4];
  const TimeNs before = Monotonic();
  ASSERT_EQ(rx.RxBurst(absl::MakeSpan(out)), 1u);
  const TimeNs after = Monotonic();
  const TimeNs t = rx.LastRxTime();
  EXPECT_GE(t, before);
  EXPECT_LE(t, after);
  // An empty receive leaves it alone.
  EXPECT_EQ(rx.RxBurst(absl::MakeSpan(out)), 0u);
  EXPECT_EQ(rx.LastRxTime(), t);
}

}  // namespace
}  // namespace braid::backend

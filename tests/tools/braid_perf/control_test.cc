#include "tools/braid_perf/control.h"

#include "gtest/gtest.h"

namespace braid::perf {
namespace {

TEST(ControlTest, HelloRoundTrips) {
  const std::vector<uint8_t> m =
      EncodeHello(77, HelloMsg{perf::Test::kLat, 4096, false});
  Header h;
  ASSERT_TRUE(ReadHeader(m, &h));
  EXPECT_EQ(h.kind, Kind::kHello);
  EXPECT_EQ(h.run, 77u);
  std::optional<HelloMsg> d = DecodeHello(m);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->test, perf::Test::kLat);
  EXPECT_EQ(d->size, 4096u);
  EXPECT_FALSE(d->verify);
}

TEST(ControlTest, ResultRoundTripsEveryField) {
  ResultMsg r;
  uint64_t v = 1;
  for (uint64_t* f :
       {&r.received, &r.bytes, &r.duplicates, &r.bad, &r.missing, &r.foreign,
        &r.first_bad, &r.recv_ns, &r.datagrams_sent, &r.datagrams_received,
        &r.tx_syscalls, &r.rx_syscalls, &r.retransmits, &r.allocations}) {
    *f = v++ * 1000;
  }
  std::optional<ResultMsg> d = DecodeResult(EncodeResult(5, r));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->received, 1000u);
  EXPECT_EQ(d->missing, 5000u);
  EXPECT_EQ(d->allocations, 14000u);
}

TEST(ControlTest, DoneRoundTrips) {
  std::optional<DoneMsg> d = DecodeDone(EncodeDone(1, DoneMsg{10, 640}));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->sent, 10u);
  EXPECT_EQ(d->bytes, 640u);
}

TEST(ControlTest, MalformedOrMismatchedMessagesDoNotDecode) {
  std::vector<uint8_t> hello =
      EncodeHello(1, HelloMsg{perf::Test::kBw, 64, true});
  EXPECT_FALSE(DecodeDone(hello).has_value());  // wrong kind
  std::vector<uint8_t> cut(hello.begin(), hello.end() - 1);
  EXPECT_FALSE(DecodeHello(cut).has_value());  // wrong length
  std::vector<uint8_t> small =
      EncodeHello(1, HelloMsg{perf::Test::kBw, 8, true});
  EXPECT_FALSE(DecodeHello(small).has_value());  // size below the header
  hello[0] ^= 1;
  EXPECT_FALSE(DecodeHello(hello).has_value());  // bad magic
}

}  // namespace
}  // namespace braid::perf

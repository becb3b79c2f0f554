#include "reorder/ack_scheduler.h"

#include "gtest/gtest.h"

namespace braid::reorder {
namespace {

using wire::PathSeq;

TimeNs At(int64_t us) { return TimeNs(us * 1000); }

AckOptions Opts(uint32_t every, int64_t delay_us) {
  AckOptions o;
  o.ack_every_packets = every;
  o.ack_delay = DurationNs::Micros(delay_us);
  return o;
}

// A plain in-order, unmarked data packet.
void Data(AckScheduler& a, TimeNs now, uint8_t path = 0, uint32_t seq = 0) {
  a.OnData(now, path, PathSeq(seq), /*ce=*/false, /*ack_now=*/false,
           /*out_of_order=*/false, /*duplicate=*/false);
}

TEST(AckSchedulerTest, NothingPendingMeansNoAckAndInfiniteTime) {
  AckScheduler a(Opts(8, 10));
  EXPECT_FALSE(a.pending());
  EXPECT_FALSE(a.AckDue(At(1000)));
  EXPECT_TRUE(a.NextAckTime().IsInfinite());
}

TEST(AckSchedulerTest, AcksAfterCountPackets) {
  AckScheduler a(Opts(4, 1000));
  for (int i = 0; i < 3; ++i) {
    Data(a, At(i));
    EXPECT_FALSE(a.AckDue(At(i))) << i;
  }
  Data(a, At(3));
  EXPECT_TRUE(a.AckDue(At(3)));
  EXPECT_EQ(a.NextAckTime(), At(3));
  a.OnAckSent(At(3));
  EXPECT_FALSE(a.pending());
  EXPECT_EQ(a.stats().count_acks, 1u);
}

TEST(AckSchedulerTest, AcksAfterDelayMeasuredFromFirstUnackedPacket) {
  AckScheduler a(Opts(8, 10));
  Data(a, At(100));
  Data(a, At(105));
  EXPECT_EQ(a.NextAckTime(), At(110));
  EXPECT_FALSE(a.AckDue(At(109)));
  EXPECT_TRUE(a.AckDue(At(110)));
  a.OnAckSent(At(110));
  Data(a, At(200));
  EXPECT_EQ(a.NextAckTime(), At(210)) << "timer restarts after an ack";
}

TEST(AckSchedulerTest, AckNowFlagMakesAckDueAtOnce) {
  AckScheduler a(Opts(8, 10));
  a.OnData(At(50), 1, PathSeq(7), false, /*ack_now=*/true, false, false);
  EXPECT_TRUE(a.AckDue(At(50)));
  EXPECT_EQ(a.NextAckTime(), At(50));
}

TEST(AckSchedulerTest, OnlyARepairMakesAnAckUrgent) {
  AckScheduler a(Opts(8, 10));
  // Normal traffic: a burst tail (ack_now), a hole, a count ack: not urgent.
  a.OnData(At(1), 0, PathSeq(1), false, /*ack_now=*/true, false, false);
  EXPECT_FALSE(a.OnAckSent(At(1)).urgent);
  a.OnData(At(2), 0, PathSeq(2), false, false, /*out_of_order=*/true, false);
  EXPECT_FALSE(a.OnAckSent(At(2)).urgent);
  for (uint32_t i = 3; i < 11; ++i) Data(a, At(i), 0, i);
  EXPECT_FALSE(a.OnAckSent(At(11)).urgent);
  // A re-send asking for an ack, or a duplicate: urgent, for one ack.
  a.OnData(At(12), 1, PathSeq(1), false, /*ack_now=*/true, false, false,
           /*retransmit=*/true);
  EXPECT_TRUE(a.OnAckSent(At(12)).urgent);
  EXPECT_FALSE(a.OnAckSent(At(13)).urgent);
  a.OnData(At(14), 1, PathSeq(2), false, false, false, /*duplicate=*/true);
  EXPECT_TRUE(a.OnAckSent(At(14)).urgent);
}

TEST(AckSchedulerTest, OutOfOrderPacketMakesAckDueAtOnce) {
  AckScheduler a(Opts(8, 10));
  Data(a, At(1));
  EXPECT_FALSE(a.AckDue(At(1)));
  a.OnData(At(2), 0, PathSeq(1), false, false, /*out_of_order=*/true, false);
  EXPECT_TRUE(a.AckDue(At(2)));
  a.OnAckSent(At(2));
  EXPECT_EQ(a.stats().immediate_acks, 1u);
}

TEST(AckSchedulerTest, DuplicateMakesAckDueAtOnce) {
  AckScheduler a(Opts(8, 10));
  a.OnData(At(2), 0, PathSeq(1), false, false, false, /*duplicate=*/true);
  EXPECT_TRUE(a.AckDue(At(2)));
}

TEST(AckSchedulerTest, EchoCarriesLatestPacketAndItsDelay) {
  AckScheduler a(Opts(8, 10));
  Data(a, At(10), 2, 40);
  Data(a, At(12), 5, 77);
  const AckScheduler::Echo e = a.OnAckSent(At(15));
  EXPECT_TRUE(e.valid);
  EXPECT_EQ(e.path, 5);
  EXPECT_EQ(e.seq, PathSeq(77));
  EXPECT_EQ(e.ack_delay, DurationNs::Micros(3));
  EXPECT_FALSE(e.ce);
  EXPECT_EQ(e.ce_count, 0u);
}

TEST(AckSchedulerTest, DuplicateIsEchoedInPreferenceToLaterArrivals) {
  AckScheduler a(Opts(64, 1000));
  Data(a, At(0), 1, 5);
  a.OnData(At(1), 2, PathSeq(9), false, false, false, /*duplicate=*/true);
  Data(a, At(2), 3, 7);  // arrives before the ack goes out
  AckScheduler::Echo e = a.OnAckSent(At(4));
  EXPECT_EQ(e.path, 2);
  EXPECT_EQ(e.seq, PathSeq(9));
  EXPECT_EQ(e.ack_delay, DurationNs::Micros(3));
  EXPECT_EQ(a.stats().duplicate_echoes, 1u);
  // The preference ends with that ack.
  Data(a, At(5), 3, 8);
  e = a.OnAckSent(At(6));
  EXPECT_EQ(e.path, 3);
  EXPECT_EQ(e.seq, PathSeq(8));
}

TEST(AckSchedulerTest, CeCountIsCumulativeAcrossAcks) {
  AckOptions o = Opts(100, 10);
  o.ack_on_ce_change = false;
  AckScheduler a(o);
  a.OnData(At(1), 0, PathSeq(1), /*ce=*/true, false, false, false);
  a.OnData(At(2), 0, PathSeq(2), /*ce=*/true, false, false, false);
  EXPECT_FALSE(a.AckDue(At(2)));
  AckScheduler::Echo e = a.OnAckSent(At(3));
  EXPECT_TRUE(e.ce);
  EXPECT_EQ(e.ce_count, 2u);
  a.OnData(At(4), 0, PathSeq(3), /*ce=*/false, false, false, false);
  a.OnData(At(5), 0, PathSeq(4), /*ce=*/true, false, false, false);
  e = a.OnAckSent(At(6));
  EXPECT_TRUE(e.ce);
  EXPECT_EQ(e.ce_count, 3u);
}

TEST(AckSchedulerTest, CeChangeMakesAckDueAtOnceByDefault) {
  AckScheduler a(Opts(100, 1000));
  Data(a, At(1));
  EXPECT_FALSE(a.AckDue(At(1)));
  a.OnData(At(2), 0, PathSeq(2), /*ce=*/true, false, false, false);
  EXPECT_TRUE(a.AckDue(At(2)));
}

TEST(AckSchedulerTest, AckWithNothingPendingEchoesLatestAgain) {
  AckScheduler a(Opts(8, 10));
  EXPECT_FALSE(a.OnAckSent(At(1)).valid);
  Data(a, At(10), 3, 9);
  a.OnAckSent(At(11));
  const AckScheduler::Echo e = a.OnAckSent(At(20));
  EXPECT_TRUE(e.valid);
  EXPECT_EQ(e.path, 3);
  EXPECT_EQ(e.ack_delay, DurationNs::Micros(10));
}

TEST(AckSchedulerTest, AckEveryPacketWhenCountIsOne) {
  AckScheduler a(Opts(1, 1000));
  Data(a, At(1));
  EXPECT_TRUE(a.AckDue(At(1)));
}

}  // namespace
}  // namespace braid::reorder

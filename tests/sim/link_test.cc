#include "sim/link.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "sim/simulator.h"

namespace braid::sim {
namespace {

struct Arrival {
  int64_t at_ns;
  uint64_t id;
  bool ce;
  bool corrupted;
  bool checksum_ok;
};

// Records what comes out of a link and returns the packets to the pool.
class Recorder {
 public:
  explicit Recorder(Simulator* sim) : sim_(sim) {}
  PacketSink sink() { return PacketSink{&Recorder::Take, this}; }
  std::vector<Arrival> arrivals;

 private:
  static void Take(void* self_ptr, Packet* p) {
    auto* self = static_cast<Recorder*>(self_ptr);
    self->arrivals.push_back(Arrival{self->sim_->now().ns(), p->id, p->ce,
                                     p->corrupted, ChecksumOk(*p)});
    self->sim_->pool().Free(p);
  }
  Simulator* sim_;
};

class LinkTest : public ::testing::Test {
 protected:
  void MakeLink(const LinkOptions& o, uint64_t seed = 1) {
    link_ = std::make_unique<Link>(&sim_, o, "test", seed);
    link_->Connect(rec_.sink());
  }
  // Sends one packet of `len` payload bytes with id `id` at now().
  void SendOne(uint32_t len, uint64_t id, bool ect = false) {
    Packet* p = sim_.pool().Alloc();
    p->id = id;
    p->len = len;
    for (uint32_t i = 0; i < len; ++i) p->data[i] = static_cast<uint8_t>(i * 7);
    p->ect = ect;
    StampChecksum(*p);
    link_->Send(p);
  }

  // Sends n packets (ids 0..n-1) in batches, running the simulator between
  // batches so the packet pool stays small.
  void SendMany(int n, uint32_t len) {
    for (int i = 0; i < n; ++i) {
      SendOne(len, static_cast<uint64_t>(i));
      if (i % 1000 == 999) sim_.RunUntilIdle();
    }
    sim_.RunUntilIdle();
  }

  // Sends `n` frames at once into a 1 Gbit/s link with 2 us of delay and
  // expects them in order, back to back: 958 + 42 = 1000 bytes = 8000 bits
  // = 8 us each, exactly.
  void ExpectBackToBack(int n) {
    MakeLink(LinkOptions{.rate_bps = 1'000'000'000ULL,
                         .delay = DurationNs::Micros(2),
                         .queue_bytes = 1000000});
    for (int i = 0; i < n; ++i) SendOne(958, static_cast<uint64_t>(i));
    EXPECT_EQ(link_->QueueBytes(), 1000u * n);
    sim_.RunUntilIdle();
    ASSERT_EQ(rec_.arrivals.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(rec_.arrivals[i].at_ns, (i + 1) * 8000 + 2000) << i;
      EXPECT_EQ(rec_.arrivals[i].id, static_cast<uint64_t>(i));
    }
    EXPECT_EQ(link_->QueueBytes(), 0u);
  }

  Simulator sim_;
  Recorder rec_{&sim_};
  std::unique_ptr<Link> link_;
};

TEST_F(LinkTest, SinglePacketArrivesAfterSerialisationPlusPropagation) {
  // 1000 payload + 42 header = 1042 bytes = 8336 bits at 10 Gbit/s = 833.6 ns
  // -> rounded up to 834 ns, plus 5 us.
  MakeLink(LinkOptions{.rate_bps = 10'000'000'000ULL,
                       .delay = DurationNs::Micros(5),
                       .queue_bytes = 100000});
  SendOne(1000, 1);
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), 1u);
  EXPECT_EQ(rec_.arrivals[0].at_ns, 834 + 5000);
  EXPECT_EQ(link_->SerializationTime(1000).ns(), 834);
}

TEST_F(LinkTest, BackToBackPacketsAreSpacedBySerialisationTime) {
  ExpectBackToBack(5);
}

TEST_F(LinkTest, QueueDeeperThanTheInlineRingKeepsOrderAndSpacing) {
  // 100 frames queued at once: the link's rings outgrow the slots it holds
  // inline and move to the heap mid-burst.
  ExpectBackToBack(100);
}

TEST_F(LinkTest, IdleLinkStartsSerialisingAtSendTime) {
  MakeLink(LinkOptions{.rate_bps = 1'000'000'000ULL,
                       .delay = DurationNs::Micros(2),
                       .queue_bytes = 100000});
  SendOne(958, 0);
  sim_.RunUntil(TimeNs(50'000));
  SendOne(958, 1);
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), 2u);
  EXPECT_EQ(rec_.arrivals[1].at_ns, 50'000 + 8000 + 2000);
}

TEST_F(LinkTest, TailDropsWhenQueueLimitIsReached) {
  // Queue holds exactly 10 frames of 1000 wire bytes.
  MakeLink(LinkOptions{.rate_bps = 1'000'000'000ULL,
                       .delay = DurationNs::Micros(1),
                       .queue_bytes = 10000});
  for (uint64_t i = 0; i < 15; ++i) SendOne(958, i);
  EXPECT_EQ(link_->QueueBytes(), 10000u);
  EXPECT_EQ(link_->counters().drops_queue_full, 5u);
  EXPECT_EQ(link_->counters().max_queue_bytes, 10000u);
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), 10u);
  EXPECT_EQ(rec_.arrivals.back().id, 9u);  // the tail was dropped
  EXPECT_EQ(link_->QueueBytes(), 0u);
}

TEST_F(LinkTest, QueueDrainsAsPacketsFinishSerialising) {
  MakeLink(LinkOptions{.rate_bps = 1'000'000'000ULL,
                       .delay = DurationNs::Micros(1),
                       .queue_bytes = 10000});
  for (uint64_t i = 0; i < 10; ++i) SendOne(958, i);
  sim_.RunUntil(TimeNs(8000 * 3));  // three frames fully sent
  EXPECT_EQ(link_->QueueBytes(), 7000u);
  SendOne(958, 10);
  SendOne(958, 11);
  SendOne(958, 12);
  SendOne(958, 13);  // no room
  EXPECT_EQ(link_->counters().drops_queue_full, 1u);
}

TEST_F(LinkTest, RandomLossRateMatchesProbability) {
  MakeLink(LinkOptions{.rate_bps = 0 /* infinite */,
                       .delay = DurationNs::Nanos(10),
                       .queue_bytes = 1u << 30},
           12345);
  link_->SetImpairment(Impairment{.loss = 0.05});
  const int n = 100000;
  SendMany(n, 0);
  const double rate =
      static_cast<double>(link_->counters().drops_random_loss) / n;
  // sd = sqrt(p(1-p)/n) ~ 0.00069; allow ~6 sd.
  EXPECT_NEAR(rate, 0.05, 0.004) << "seed 12345";
  EXPECT_EQ(rec_.arrivals.size() + link_->counters().drops_random_loss,
            static_cast<size_t>(n));
}

TEST_F(LinkTest, GilbertElliottLossComesInBurstsOfExpectedMeanLength) {
  MakeLink(LinkOptions{.rate_bps = 0,
                       .delay = DurationNs::Nanos(10),
                       .queue_bytes = 1u << 30},
           777);
  link_->SetImpairment(Impairment{.ge_p_good_to_bad = 0.01,
                                  .ge_p_bad_to_good = 0.25,
                                  .ge_loss_in_bad = 1.0});
  const int n = 200000;
  SendMany(n, 0);
  // Reconstruct loss runs from the ids that arrived.
  std::vector<bool> lost(n, true);
  for (const Arrival& a : rec_.arrivals) lost[a.id] = false;
  int bursts = 0, lost_total = 0;
  for (int i = 0; i < n; ++i) {
    if (lost[i]) {
      ++lost_total;
      if (i == 0 || !lost[i - 1]) ++bursts;
    }
  }
  ASSERT_GT(bursts, 100);
  const double mean_burst = static_cast<double>(lost_total) / bursts;
  EXPECT_NEAR(mean_burst, 1.0 / 0.25, 0.4) << "seed 777";
  // Stationary share of the bad state: 0.01 / (0.01 + 0.25) ~ 3.85 %.
  EXPECT_NEAR(static_cast<double>(lost_total) / n, 0.01 / 0.26, 0.006);
  EXPECT_EQ(link_->counters().drops_burst_loss,
            static_cast<uint64_t>(lost_total));
}

TEST_F(LinkTest, DuplicationDeliversACopyRightBehindTheOriginal) {
  MakeLink(LinkOptions{.rate_bps = 0,
                       .delay = DurationNs::Nanos(10),
                       .queue_bytes = 1u << 30},
           99);
  link_->SetImpairment(Impairment{.duplicate = 0.1});
  const int n = 20000;
  SendMany(n, 16);
  const uint64_t dups = link_->counters().duplicated;
  EXPECT_NEAR(static_cast<double>(dups) / n, 0.1, 0.01);
  EXPECT_EQ(rec_.arrivals.size(), n + dups);
  uint64_t adjacent_pairs = 0;
  for (size_t i = 1; i < rec_.arrivals.size(); ++i) {
    if (rec_.arrivals[i].id == rec_.arrivals[i - 1].id) {
      ++adjacent_pairs;
      EXPECT_TRUE(rec_.arrivals[i].checksum_ok);
    }
  }
  EXPECT_EQ(adjacent_pairs, dups);
  EXPECT_EQ(sim_.pool().in_use(), 0u);
}

TEST_F(LinkTest, CorruptionFlipsOneBitAndBreaksTheChecksum) {
  MakeLink(LinkOptions{
      .rate_bps = 0, .delay = DurationNs::Nanos(10), .queue_bytes = 1u << 30});
  link_->SetImpairment(Impairment{.corrupt = 1.0});
  for (int i = 0; i < 100; ++i) SendOne(64, i);
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), 100u);
  for (const Arrival& a : rec_.arrivals) {
    EXPECT_TRUE(a.corrupted);
    EXPECT_FALSE(a.checksum_ok);
  }
  EXPECT_EQ(link_->counters().corrupted, 100u);
}

TEST_F(LinkTest, DeliverCorruptedRestampsTheChecksum) {
  MakeLink(LinkOptions{
      .rate_bps = 0, .delay = DurationNs::Nanos(10), .queue_bytes = 1u << 30});
  link_->SetImpairment(Impairment{.corrupt = 1.0, .deliver_corrupted = true});
  SendOne(64, 1);
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), 1u);
  EXPECT_TRUE(rec_.arrivals[0].corrupted);
  EXPECT_TRUE(rec_.arrivals[0].checksum_ok);
}

// A frame an earlier link corrupted is dropped by the next link (the switch
// between them checked its frame), so it cannot be corrupted a second time
// in a way that cancels in the 16-bit checksum. One whose checksum was
// re-stamped (corruption no frame check sees) is forwarded.
TEST_F(LinkTest, FrameCorruptedOnAnEarlierLinkIsDroppedAtTheNext) {
  MakeLink(LinkOptions{
      .rate_bps = 0, .delay = DurationNs::Nanos(10), .queue_bytes = 1u << 30});
  auto corrupted_upstream = [&](uint64_t id, bool restamped) {
    Packet* p = sim_.pool().Alloc();
    p->id = id;
    p->len = 64;
    for (uint32_t i = 0; i < p->len; ++i) p->data[i] = 0x5a;
    StampChecksum(*p);
    p->data[3] ^= 0x10;
    p->corrupted = true;
    if (restamped) StampChecksum(*p);
    link_->Send(p);
  };
  corrupted_upstream(1, /*restamped=*/false);
  corrupted_upstream(2, /*restamped=*/true);
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), 1u);
  EXPECT_EQ(rec_.arrivals[0].id, 2u);
  EXPECT_EQ(link_->counters().drops_bad_frame, 1u);
  EXPECT_EQ(link_->counters().drops(), 1u);
  EXPECT_EQ(sim_.pool().in_use(), 0u);
}

TEST_F(LinkTest, EcnMarksEctPacketsOnlyWhenQueueReachesThreshold) {
  // 1000 wire bytes per frame; threshold 3000 bytes ahead of the packet.
  MakeLink(LinkOptions{.rate_bps = 1'000'000'000ULL,
                       .delay = DurationNs::Micros(1),
                       .queue_bytes = 100000});
  link_->SetImpairment(Impairment{.ecn_threshold_bytes = 3000});
  for (uint64_t i = 0; i < 6; ++i) SendOne(958, i, /*ect=*/true);
  SendOne(958, 6, /*ect=*/false);  // not ECN-capable: never marked
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), 7u);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(rec_.arrivals[i].ce) << i;
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(rec_.arrivals[i].ce) << i;
  EXPECT_FALSE(rec_.arrivals[6].ce);
  EXPECT_EQ(link_->counters().ecn_marked, 3u);
}

TEST_F(LinkTest, BlackholeDropsEverythingUntilRestored) {
  MakeLink(LinkOptions{
      .rate_bps = 0, .delay = DurationNs::Nanos(10), .queue_bytes = 1u << 30});
  link_->SetImpairment(Impairment{.blackhole = true});
  for (int i = 0; i < 10; ++i) SendOne(8, i);
  sim_.RunUntilIdle();
  EXPECT_TRUE(rec_.arrivals.empty());
  EXPECT_EQ(link_->counters().drops_blackhole, 10u);
  link_->SetImpairment(Impairment{});
  for (int i = 10; i < 20; ++i) SendOne(8, i);
  sim_.RunUntilIdle();
  EXPECT_EQ(rec_.arrivals.size(), 10u);
  EXPECT_EQ(sim_.pool().in_use(), 0u);
}

TEST_F(LinkTest, ReorderHoldsSomePacketsAndLetsLaterOnesOvertake) {
  MakeLink(LinkOptions{
      .rate_bps = 0, .delay = DurationNs::Micros(1), .queue_bytes = 1u << 30});
  link_->SetImpairment(
      Impairment{.reorder = 0.2, .reorder_delay = DurationNs::Micros(5)});
  constexpr int kPackets = 2000;
  for (int i = 0; i < kPackets; ++i) SendOne(8, static_cast<uint32_t>(i));
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), static_cast<size_t>(kPackets));
  // Each held packet arrives 5 us late; the others at 1 us, in order.
  int late = 0, on_time = 0, overtaken = 0;
  int64_t last_on_time = -1;
  for (const auto& a : rec_.arrivals) {
    if (a.at_ns == 6000) {
      ++late;
      continue;
    }
    EXPECT_EQ(a.at_ns, 1000);
    EXPECT_GT(static_cast<int64_t>(a.id), last_on_time);  // FIFO among them
    last_on_time = a.id;
    ++on_time;
  }
  EXPECT_EQ(late + on_time, kPackets);
  for (size_t i = 1; i < rec_.arrivals.size(); ++i) {
    overtaken += rec_.arrivals[i].id < rec_.arrivals[i - 1].id;
  }
  EXPECT_EQ(static_cast<uint64_t>(late), link_->counters().reordered);
  EXPECT_GT(late, kPackets / 10);
  EXPECT_LT(late, kPackets * 3 / 10);
  EXPECT_GT(overtaken, 0);
}

TEST_F(LinkTest, ExtraDelayAddsLatencyButNeverReordersTheLink) {
  MakeLink(LinkOptions{
      .rate_bps = 0, .delay = DurationNs::Micros(1), .queue_bytes = 1u << 30});
  link_->SetImpairment(Impairment{.extra_delay = DurationNs::Micros(10)});
  SendOne(8, 1);
  link_->SetImpairment(Impairment{});
  SendOne(8, 2);  // would arrive at 1 us, but must not pass packet 1
  sim_.RunUntilIdle();
  ASSERT_EQ(rec_.arrivals.size(), 2u);
  EXPECT_EQ(rec_.arrivals[0].id, 1u);
  EXPECT_EQ(rec_.arrivals[0].at_ns, 11000);
  EXPECT_EQ(rec_.arrivals[1].id, 2u);
  EXPECT_EQ(rec_.arrivals[1].at_ns, 11000);
}

TEST_F(LinkTest, TapSeesEveryDeliveredPacketAndCanBeRemoved) {
  MakeLink(LinkOptions{});
  struct Seen {
    std::vector<uint64_t> ids;
  } seen;
  link_->SetTap(
      [](void* ctx, const Link& link, const Packet& p) {
        EXPECT_EQ(link.name(), "test");
        static_cast<Seen*>(ctx)->ids.push_back(p.id);
      },
      &seen);
  SendOne(10, 1);
  SendOne(10, 2);
  sim_.RunUntilIdle();
  link_->SetTap(nullptr, nullptr);
  SendOne(10, 3);
  sim_.RunUntilIdle();
  EXPECT_EQ(seen.ids, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(rec_.arrivals.size(), 3u);
}

TEST_F(LinkTest, SameSeedGivesSameLossPattern) {
  auto run = [](uint64_t seed) {
    Simulator sim;
    Recorder rec(&sim);
    Link link(&sim, LinkOptions{.rate_bps = 0, .queue_bytes = 1u << 30}, "l",
              seed);
    link.Connect(rec.sink());
    link.SetImpairment(Impairment{.loss = 0.3});
    for (int i = 0; i < 1000; ++i) {
      Packet* p = sim.pool().Alloc();
      p->id = i;
      link.Send(p);
    }
    sim.RunUntilIdle();
    std::vector<uint64_t> ids;
    for (const Arrival& a : rec.arrivals) ids.push_back(a.id);
    return ids;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

}  // namespace
}  // namespace braid::sim

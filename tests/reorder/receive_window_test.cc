#include "reorder/receive_window.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"

namespace braid::reorder {
namespace {

using wire::Psn;
using Verdict = ReceiveWindow::Verdict;

TEST(ReceiveWindowTest, InOrderPacketsAdvanceCum) {
  ReceiveWindow w(1024);
  for (uint32_t i = 0; i < 100; ++i) {
    EXPECT_EQ(w.OnPacket(Psn(i)), Verdict::kNew);
    EXPECT_FALSE(w.last_out_of_order());
  }
  EXPECT_EQ(w.cum(), Psn(100));
  EXPECT_EQ(w.highest_received_plus_one(), Psn(100));
  EXPECT_EQ(w.stats().new_packets, 100u);
}

TEST(ReceiveWindowTest, DuplicateAfterDeliveryIsDropped) {
  ReceiveWindow w(1024);
  EXPECT_EQ(w.OnPacket(Psn(0)), Verdict::kNew);
  EXPECT_EQ(w.OnPacket(Psn(0)), Verdict::kDuplicate);
  EXPECT_EQ(w.OnPacket(Psn(5)), Verdict::kNew);
  EXPECT_EQ(w.OnPacket(Psn(5)), Verdict::kDuplicate);
  EXPECT_EQ(w.stats().duplicates, 2u);
  EXPECT_EQ(w.cum(), Psn(1));
}

TEST(ReceiveWindowTest, PacketAtOrBeyondCapacityIsRejected) {
  ReceiveWindow w(128);
  EXPECT_EQ(w.OnPacket(Psn(128)), Verdict::kBeyondWindow);
  EXPECT_EQ(w.OnPacket(Psn(127)), Verdict::kNew);
  EXPECT_FALSE(w.Contains(Psn(128)));
  EXPECT_EQ(w.stats().beyond_window, 1u);
  EXPECT_EQ(w.cum(), Psn(0));
}

TEST(ReceiveWindowTest, ClassifyDoesNotRecord) {
  ReceiveWindow w(128);
  EXPECT_EQ(w.Classify(Psn(3)), Verdict::kNew);
  EXPECT_FALSE(w.Contains(Psn(3)));
  EXPECT_EQ(w.OnPacket(Psn(3)), Verdict::kNew);
  EXPECT_EQ(w.Classify(Psn(3)), Verdict::kDuplicate);
}

TEST(ReceiveWindowTest, FillingTheHoleAdvancesCumAcrossTheRun) {
  ReceiveWindow w(1024);
  for (uint32_t i = 1; i < 500; ++i) {
    EXPECT_EQ(w.OnPacket(Psn(i)), Verdict::kNew);
    EXPECT_TRUE(w.last_out_of_order());
  }
  EXPECT_EQ(w.cum(), Psn(0));
  EXPECT_EQ(w.out_of_order_packets(), 499u);
  EXPECT_EQ(w.OnPacket(Psn(0)), Verdict::kNew);
  EXPECT_TRUE(w.last_out_of_order()) << "filling a hole is out of order";
  EXPECT_EQ(w.cum(), Psn(500));
  EXPECT_EQ(w.out_of_order_packets(), 0u);
  // The ring bits were cleared: the same ring slots are fresh again.
  for (uint32_t i = 500; i < 1524; ++i) EXPECT_FALSE(w.Contains(Psn(i)));
  EXPECT_EQ(w.OnPacket(Psn(1023 + 500)), Verdict::kNew);
}

TEST(ReceiveWindowTest, SackBitmapLayoutIsExact) {
  ReceiveWindow w(1024);
  // cum = 10 after 0..9; hole at 10; received 11, 12, 75, 139, 200.
  for (uint32_t i = 0; i < 10; ++i) w.OnPacket(Psn(i));
  for (uint32_t p : {11u, 12u, 75u, 139u, 200u}) w.OnPacket(Psn(p));
  ASSERT_EQ(w.cum(), Psn(10));
  std::array<uint64_t, 8> out{};
  out.fill(0xdeadbeef);
  const size_t n = w.FillSack(absl::MakeSpan(out));
  // PSN p -> bit (p - 11): 0, 1, 64, 128, 189 -> words 0..2.
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(out[0], 0b11u);
  EXPECT_EQ(out[1], uint64_t{1} << 0);
  EXPECT_EQ(out[2], (uint64_t{1} << 0) | (uint64_t{1} << (189 - 128)));
}

TEST(ReceiveWindowTest, SackIsEmptyWithoutHoles) {
  ReceiveWindow w(1024);
  std::array<uint64_t, 4> out{};
  EXPECT_EQ(w.FillSack(absl::MakeSpan(out)), 0u);
  w.OnPacket(Psn(0));
  EXPECT_EQ(w.FillSack(absl::MakeSpan(out)), 0u);
}

TEST(ReceiveWindowTest, SackIsTruncatedToOutputSizeAndTrimmed) {
  ReceiveWindow w(1024);
  w.OnPacket(Psn(1));    // bit 0 of word 0
  w.OnPacket(Psn(300));  // word 4
  std::array<uint64_t, 2> small{};
  EXPECT_EQ(w.FillSack(absl::MakeSpan(small)), 1u);
  EXPECT_EQ(small[0], 1u);
  // Word 1 is zero but word 0 is non-zero: trimmed to 1 word.
  ReceiveWindow w2(1024);
  w2.OnPacket(Psn(200));  // bit 199 -> word 3
  EXPECT_EQ(w2.FillSack(absl::MakeSpan(small)), 0u);
}

TEST(ReceiveWindowTest, SackAtTheFarEndOfTheWindowDoesNotAlias) {
  ReceiveWindow w(128);
  w.OnPacket(Psn(127));  // last slot of the window
  w.OnPacket(Psn(1));
  std::array<uint64_t, 4> out{};
  ASSERT_EQ(w.FillSack(absl::MakeSpan(out)), 2u);
  EXPECT_EQ(out[0], 1u);                         // PSN 1 -> bit 0
  EXPECT_EQ(out[1], uint64_t{1} << (126 - 64));  // PSN 127 -> bit 126
}

TEST(ReceiveWindowTest, WrapsAroundNearTwoToThe32) {
  ReceiveWindow w(256);
  const Psn base(0xFFFFFFF0u);
  w.Reset(base);
  EXPECT_EQ(w.OnPacket(base + 20), Verdict::kNew);  // PSN 4 after wrap
  EXPECT_EQ(w.OnPacket(base + 1), Verdict::kNew);
  std::array<uint64_t, 2> out{};
  ASSERT_EQ(w.FillSack(absl::MakeSpan(out)), 1u);
  EXPECT_EQ(out[0], (uint64_t{1} << 0) | (uint64_t{1} << 19));
  for (uint32_t i = 0; i < 40; ++i) {
    if (i == 1 || i == 20) continue;
    EXPECT_EQ(w.OnPacket(base + i), Verdict::kNew) << i;
  }
  EXPECT_EQ(w.cum(), Psn(0xFFFFFFF0u + 40u));
  EXPECT_EQ(w.cum().value(), 24u);
  EXPECT_EQ(w.OnPacket(base + 5), Verdict::kDuplicate);
  EXPECT_TRUE(w.Contains(Psn(0xFFFFFFFFu)));
  EXPECT_EQ(w.OnPacket(Psn(24 + 256)), Verdict::kBeyondWindow);
}

TEST(ReceiveWindowTest, ResetStartsANewSession) {
  ReceiveWindow w(256);
  for (uint32_t i = 0; i < 50; ++i) w.OnPacket(Psn(i * 2));
  w.Reset(Psn(1000));
  EXPECT_EQ(w.cum(), Psn(1000));
  EXPECT_EQ(w.highest_received_plus_one(), Psn(1000));
  EXPECT_EQ(w.out_of_order_packets(), 0u);
  std::array<uint64_t, 4> out{};
  EXPECT_EQ(w.FillSack(absl::MakeSpan(out)), 0u);
  // Old bits are gone: a PSN sharing a ring slot with an old one is new.
  EXPECT_EQ(w.OnPacket(Psn(1000 + 2)), Verdict::kNew);
  EXPECT_EQ(w.OnPacket(Psn(999)), Verdict::kDuplicate);
  EXPECT_EQ(w.stats().resets, 1u);
}

TEST(ReceiveWindowTest, InOrderOnlyModeAcceptsOnlyCum) {
  ReceiveWindow w(256);
  EXPECT_EQ(w.OnPacketInOrderOnly(Psn(1)), Verdict::kBeyondWindow);
  EXPECT_EQ(w.OnPacketInOrderOnly(Psn(0)), Verdict::kNew);
  EXPECT_EQ(w.OnPacketInOrderOnly(Psn(1)), Verdict::kNew);
  EXPECT_EQ(w.OnPacketInOrderOnly(Psn(0)), Verdict::kDuplicate);
  EXPECT_EQ(w.cum(), Psn(2));
  EXPECT_FALSE(w.Contains(Psn(2)));
  EXPECT_EQ(w.stats().in_order_only_dropped, 1u);
  std::array<uint64_t, 2> out{};
  EXPECT_EQ(w.FillSack(absl::MakeSpan(out)), 0u);
}

void CheckAgainstReference(uint32_t kCap, uint64_t seed) {
  SCOPED_TRACE(testing::Message() << "seed=" << seed << " capacity=" << kCap);
  Rng rng(seed);
  ReceiveWindow w(kCap);
  const uint32_t start = 0xFFFFFF00u;  // crosses the wrap
  w.Reset(Psn(start));
  std::vector<bool> got(20000, false);
  uint32_t cum_ref = 0;
  for (int step = 0; step < 60000; ++step) {
    // Mostly near the cum, sometimes duplicates, sometimes beyond.
    const uint32_t off =
        static_cast<uint32_t>(cum_ref + rng.Uniform(kCap + 32)) -
        static_cast<uint32_t>(rng.Uniform(8));
    if (off >= got.size()) continue;
    const Verdict v = w.OnPacket(Psn(start + off));
    Verdict expect;
    if (off < cum_ref || got[off]) {
      expect = Verdict::kDuplicate;
    } else if (off >= cum_ref + kCap) {
      expect = Verdict::kBeyondWindow;
    } else {
      expect = Verdict::kNew;
      got[off] = true;
      while (cum_ref < got.size() && got[cum_ref]) ++cum_ref;
    }
    ASSERT_EQ(v, expect) << "step " << step << " off " << off;
    ASSERT_EQ(w.cum(), Psn(start + cum_ref));
    if (step % 97 == 0) {
      std::vector<uint64_t> out(kCap / 64);
      const size_t n = w.FillSack(absl::MakeSpan(out));
      for (uint32_t b = 0; b < kCap; ++b) {
        const uint32_t o = cum_ref + 1 + b;
        const bool bit = b / 64 < n && ((out[b / 64] >> (b % 64)) & 1);
        ASSERT_EQ(bit, o < got.size() && got[o]) << "bit " << b;
      }
    }
  }
}

TEST(ReceiveWindowTest, RandomArrivalMatchesAReferenceSet) {
  for (uint32_t cap : {64u, 128u, 512u}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) CheckAgainstReference(cap, seed);
  }
}

TEST(ReceiveWindowTest, CapacityIsRoundedUpToAPowerOfTwo) {
  EXPECT_EQ(ReceiveWindow(1).capacity(), 64u);
  EXPECT_EQ(ReceiveWindow(100).capacity(), 128u);
  EXPECT_EQ(ReceiveWindow(65536).capacity(), 65536u);
}

// A window that starts small and grows answers every packet, its cum and
// its SACK exactly as one that holds its whole capacity from the start.
TEST(ReceiveWindowTest, AGrowingWindowActsAsAFullSizeOne) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ReceiveWindow full(4096), grown(4096, 64);
    ASSERT_EQ(grown.allocated(), 64u);
    const Psn base(0xfffff000u + static_cast<uint32_t>(seed));  // wraps
    full.Reset(base);
    grown.Reset(base);
    Rng rng(seed);
    for (int i = 0; i < 20000; ++i) {
      // Mostly near cum, sometimes far out: the window grows in steps.
      const uint32_t reach = rng.Uniform(8) == 0 ? 5000 : 300;
      const Psn psn = grown.cum() + static_cast<uint32_t>(rng.Uniform(reach));
      ASSERT_EQ(grown.OnPacket(psn), full.OnPacket(psn)) << "packet " << i;
      ASSERT_EQ(grown.cum(), full.cum());
      ASSERT_EQ(grown.highest_received_plus_one(),
                full.highest_received_plus_one());
      std::array<uint64_t, 8> a{}, b{};
      ASSERT_EQ(grown.FillSack(absl::MakeSpan(a)),
                full.FillSack(absl::MakeSpan(b)));
      ASSERT_EQ(a, b);
    }
    EXPECT_EQ(grown.allocated(), 4096u);
    EXPECT_EQ(grown.capacity(), 4096u);
  }
}

TEST(ReceiveWindowTest, AWindowGrowsOnlyAsFarAsItsPacketsReach) {
  ReceiveWindow w(65536, 64);
  w.Reset(Psn(1000));
  EXPECT_EQ(w.OnPacket(Psn(1000 + 10)), Verdict::kNew);
  EXPECT_EQ(w.allocated(), 64u);
  EXPECT_EQ(w.OnPacket(Psn(1000 + 100)), Verdict::kNew);
  EXPECT_EQ(w.allocated(), 128u);
  EXPECT_TRUE(w.Contains(Psn(1000 + 10)));
  EXPECT_TRUE(w.Contains(Psn(1000 + 100)));
  EXPECT_FALSE(w.Contains(Psn(1000 + 5000)));
  EXPECT_EQ(w.OnPacket(Psn(1000 + 100)), Verdict::kDuplicate);
  EXPECT_EQ(w.OnPacket(Psn(1000 + 65536)), Verdict::kBeyondWindow);
  EXPECT_EQ(w.allocated(), 128u);
}

}  // namespace
}  // namespace braid::reorder

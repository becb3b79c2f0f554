#include "backend/entropy_grouper.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "tests/backend/udp/udp_test_util.h"

namespace braid::backend {
namespace {

// Packets whose `len` is their original position, so order is checkable.
std::vector<TxPacket> Burst(const std::vector<wire::Entropy>& entropies) {
  std::vector<TxPacket> v;
  for (size_t i = 0; i < entropies.size(); ++i) {
    TxPacket p;
    p.entropy = entropies[i];
    p.len = static_cast<uint32_t>(i);
    v.push_back(p);
  }
  return v;
}

std::vector<wire::Entropy> Entropies(const std::vector<TxPacket>& v) {
  std::vector<wire::Entropy> e;
  for (const TxPacket& p : v) e.push_back(p.entropy);
  return e;
}

std::vector<uint32_t> Positions(const std::vector<TxPacket>& v) {
  std::vector<uint32_t> e;
  for (const TxPacket& p : v) e.push_back(p.len);
  return e;
}

TEST(EntropyGrouperTest, GroupsAppearInOrderOfTheirFirstPacket) {
  EntropyGrouper g(64, 16);
  std::vector<TxPacket> v = Burst({3, 1, 3, 0, 1});
  g.Group(absl::MakeSpan(v));
  EXPECT_EQ(Entropies(v), (std::vector<wire::Entropy>{3, 3, 1, 1, 0}));
  EXPECT_EQ(Positions(v), (std::vector<uint32_t>{0, 2, 1, 4, 3}));
}

TEST(EntropyGrouperTest, RoundRobinSprayBecomesOneRunPerEntropyInOrder) {
  EntropyGrouper g(64, 16);
  std::vector<wire::Entropy> e;
  for (int i = 0; i < 64; ++i) e.push_back(static_cast<wire::Entropy>(i % 4));
  std::vector<TxPacket> v = Burst(e);
  g.Group(absl::MakeSpan(v));
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(v[i].entropy, i / 16);
    EXPECT_EQ(v[i].len, (i % 16) * 4 + i / 16);  // stable within the path
  }
}

TEST(EntropyGrouperTest, RunsAlreadyContiguousStayAsTheyAre) {
  // A bulk sender's spray runs: each entropy in one run already.
  EntropyGrouper g(64, 16);
  std::vector<TxPacket> v = Burst({5, 5, 5, 2, 2, 9, 0, 0, 0});
  g.Group(absl::MakeSpan(v));
  EXPECT_EQ(Entropies(v),
            (std::vector<wire::Entropy>{5, 5, 5, 2, 2, 9, 0, 0, 0}));
  EXPECT_EQ(Positions(v), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // One packet coming back to an earlier entropy makes it regroup (and the
  // grouper's per-chunk state was left clean by the shortcut above).
  v = Burst({5, 5, 2, 5, 9});
  g.Group(absl::MakeSpan(v));
  EXPECT_EQ(Entropies(v), (std::vector<wire::Entropy>{5, 5, 5, 2, 9}));
  EXPECT_EQ(Positions(v), (std::vector<uint32_t>{0, 1, 3, 2, 4}));
}

TEST(EntropyGrouperTest, OutOfRangeEntropiesKeepTheirOrderAtTheEnd) {
  EntropyGrouper g(64, 4);
  std::vector<TxPacket> v = Burst({9, 1, 7, 1, 0});
  g.Group(absl::MakeSpan(v));
  EXPECT_EQ(Entropies(v), (std::vector<wire::Entropy>{1, 1, 0, 9, 7}));
}

TEST(EntropyGrouperTest, SpansLongerThanMaxBurstAreGroupedPerChunk) {
  EntropyGrouper g(4, 4);
  std::vector<TxPacket> v = Burst({0, 1, 0, 1, 2, 3, 2, 3});
  g.Group(absl::MakeSpan(v));
  EXPECT_EQ(Entropies(v), (std::vector<wire::Entropy>{0, 0, 1, 1, 2, 2, 3, 3}));
}

// Runs marked with TxPacket::run_follow (counted at their first packet)
// are grouped exactly as the same packets unmarked: interleaved runs,
// an out-of-range run, runs cut by the chunk edge, a hint past the end.
// And the hints still hold afterwards (none reaches into another run).
TEST(EntropyGrouperTest, RunHintsGroupLikeUnmarkedPackets) {
  // Runs: (entropy, length); their packets carry run_follow = how many
  // of the run follow them.
  const std::vector<std::pair<wire::Entropy, int>> runs = {
      {3, 5}, {1, 4}, {3, 2}, {99, 3}, {0, 6}, {1, 7}, {3, 5}};
  std::vector<wire::Entropy> flat;
  std::vector<uint8_t> follow;
  for (const auto& [e, n] : runs) {
    for (int k = 0; k < n; ++k) {
      flat.push_back(e);
      follow.push_back(static_cast<uint8_t>(n - 1 - k));
    }
  }
  follow.back() = 9;  // claims more than the burst holds
  for (const size_t chunk : {size_t{64}, size_t{10}}) {
    EntropyGrouper plain(chunk, 16), hinted(chunk, 16);
    std::vector<TxPacket> a = Burst(flat), b = Burst(flat);
    for (size_t i = 0; i < b.size(); ++i) b[i].run_follow = follow[i];
    plain.Group(absl::MakeSpan(a));
    hinted.Group(absl::MakeSpan(b));
    EXPECT_EQ(Entropies(b), Entropies(a)) << "chunk " << chunk;
    EXPECT_EQ(Positions(b), Positions(a)) << "chunk " << chunk;
    // Every hint still holds: the packets it claims (up to the burst's end,
    // where a backend stops anyway) follow it, and they are the ones that
    // followed it in its run (consecutive positions).
    for (size_t k = 0; k < b.size(); ++k) {
      const size_t claims = std::min<size_t>(b[k].run_follow, b.size() - k - 1);
      for (size_t j = 1; j <= claims; ++j) {
        EXPECT_EQ(b[k + j].len, b[k].len + j)
            << "chunk " << chunk << ", packet " << k << " claims " << j;
      }
    }
  }
}

TEST(EntropyGrouperTest, RepeatedUseStartsFresh) {
  EntropyGrouper g(8, 8);
  std::vector<TxPacket> a = Burst({5, 2, 5});
  g.Group(absl::MakeSpan(a));
  std::vector<TxPacket> b = Burst({2, 5, 2});
  g.Group(absl::MakeSpan(b));
  EXPECT_EQ(Entropies(b), (std::vector<wire::Entropy>{2, 2, 5}));
}

TEST(EntropyGrouperTest, GroupedSprayCostsOneSendSyscallPerEntropy) {
  auto tx = UdpBackend::Open(testing::LoopbackOptions(false, false));
  auto rx = UdpBackend::Open(testing::LoopbackOptions(false, false));
  ASSERT_TRUE(tx.ok() && rx.ok());
  std::vector<uint8_t> data(200, 9);
  std::vector<TxPacket> v;
  for (int i = 0; i < 64; ++i) {
    v.push_back({(*rx)->LocalAddress(), static_cast<wire::Entropy>(i % 16),
                 false, data.data(), 200});
  }
  EntropyGrouper g(64, (*tx)->EntropyCount());
  g.Group(absl::MakeSpan(v));
  ASSERT_EQ((*tx)->TxBurst(v), 64u);
  EXPECT_EQ((*tx)->counters().tx_syscalls, 16u);
  EXPECT_EQ(testing::ReceiveN(**rx, 64).size(), 64u);
}

}  // namespace
}  // namespace braid::backend

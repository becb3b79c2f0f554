#include "libfabric/mr_table.h"

#include <rdma/fabric.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "gtest/gtest.h"

namespace braid::libfabric {
namespace {

// A key source that hands out the given values in turn.
MrKeyRandom Scripted(std::deque<uint64_t> values) {
  auto q = std::make_shared<std::deque<uint64_t>>(std::move(values));
  return [q](uint64_t* k) {
    if (q->empty()) return false;
    *k = q->front();
    q->pop_front();
    return true;
  };
}

uint64_t Addr(const uint8_t* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(MrTableTest, KeysAreNeverZeroNorAKeyInUse) {
  MrTable t(Scripted({0, 5, 5, 0, 6}));
  uint8_t buf[8];
  EXPECT_EQ(t.Add(buf, 8, FI_REMOTE_WRITE).value(), 5u);
  EXPECT_EQ(t.Add(buf, 8, FI_REMOTE_WRITE).value(), 6u);
}

TEST(MrTableTest, FailingRandomSourceFailsTheRegistration) {
  MrTable t(Scripted({}));
  uint8_t buf[8];
  EXPECT_FALSE(t.Add(buf, 8, FI_REMOTE_WRITE).ok());
}

TEST(MrTableTest, KernelKeysDiffer) {
  MrTable t;
  uint8_t buf[8];
  uint64_t a = t.Add(buf, 8, FI_REMOTE_READ).value();
  uint64_t b = t.Add(buf, 8, FI_REMOTE_READ).value();
  EXPECT_NE(a, b);
  EXPECT_NE(a, 0u);
}

TEST(MrTableTest, AccessInsideTheRegionIsAllowedAndPointsAtTheByte) {
  MrTable t(Scripted({7}));
  std::vector<uint8_t> buf(100);
  ASSERT_TRUE(t.Add(buf.data(), buf.size(), FI_REMOTE_WRITE).ok());
  uint8_t* p = nullptr;
  EXPECT_EQ(t.Check(7, Addr(buf.data()) + 10, 90, FI_REMOTE_WRITE, &p),
            RmaStatus::kOk);
  EXPECT_EQ(p, buf.data() + 10);
  EXPECT_EQ(t.Check(7, Addr(buf.data()) + 100, 0, FI_REMOTE_WRITE, &p),
            RmaStatus::kOk);
}

TEST(MrTableTest, AccessPastEitherEndIsOutOfBoundsWithoutOverflow) {
  MrTable t(Scripted({7}));
  std::vector<uint8_t> buf(100);
  ASSERT_TRUE(t.Add(buf.data(), buf.size(), FI_REMOTE_READ).ok());
  uint8_t* p = nullptr;
  const uint64_t a = Addr(buf.data());
  EXPECT_EQ(t.Check(7, a + 10, 91, FI_REMOTE_READ, &p),
            RmaStatus::kOutOfBounds);
  EXPECT_EQ(t.Check(7, a - 1, 1, FI_REMOTE_READ, &p), RmaStatus::kOutOfBounds);
  EXPECT_EQ(t.Check(7, a + 101, 0, FI_REMOTE_READ, &p),
            RmaStatus::kOutOfBounds);
  EXPECT_EQ(t.Check(7, a + 50, UINT64_MAX, FI_REMOTE_READ, &p),
            RmaStatus::kOutOfBounds);
  EXPECT_EQ(t.Check(7, UINT64_MAX, 2, FI_REMOTE_READ, &p),
            RmaStatus::kOutOfBounds);
}

TEST(MrTableTest, AccessTheRegionDoesNotGrantIsRefused) {
  MrTable t(Scripted({7}));
  std::vector<uint8_t> buf(16);
  ASSERT_TRUE(t.Add(buf.data(), buf.size(), FI_REMOTE_READ).ok());
  uint8_t* p = nullptr;
  EXPECT_EQ(t.Check(7, Addr(buf.data()), 4, FI_REMOTE_WRITE, &p),
            RmaStatus::kNoPermission);
}

TEST(MrTableTest, RemovedRegionAndUnknownKeysAreBadKeys) {
  MrTable t(Scripted({7}));
  std::vector<uint8_t> buf(16);
  ASSERT_TRUE(t.Add(buf.data(), buf.size(), FI_REMOTE_READ).ok());
  uint8_t* p = nullptr;
  EXPECT_EQ(t.Check(8, Addr(buf.data()), 4, FI_REMOTE_READ, &p),
            RmaStatus::kBadKey);
  EXPECT_EQ(t.Check(0, Addr(buf.data()), 4, FI_REMOTE_READ, &p),
            RmaStatus::kBadKey);
  t.Remove(7);
  EXPECT_EQ(t.Check(7, Addr(buf.data()), 4, FI_REMOTE_READ, &p),
            RmaStatus::kBadKey);
  EXPECT_EQ(t.size(), 0u);
}

}  // namespace
}  // namespace braid::libfabric

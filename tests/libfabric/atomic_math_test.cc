#include "libfabric/atomic_math.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace braid::libfabric {
namespace {

template <typename T>
const uint8_t* B(const T* p) {
  return reinterpret_cast<const uint8_t*>(p);
}
template <typename T>
uint8_t* B(T* p) {
  return reinterpret_cast<uint8_t*>(p);
}

TEST(AtomicMathTest, OffersIntegersAndFloatsButNotComplexOrLongDouble) {
  EXPECT_EQ(AtomicTypeSize(FI_INT8), 1u);
  EXPECT_EQ(AtomicTypeSize(FI_UINT64), 8u);
  EXPECT_EQ(AtomicTypeSize(FI_FLOAT), 4u);
  EXPECT_EQ(AtomicTypeSize(FI_DOUBLE), 8u);
  EXPECT_EQ(AtomicTypeSize(FI_FLOAT_COMPLEX), 0u);
  EXPECT_EQ(AtomicTypeSize(FI_LONG_DOUBLE), 0u);
  EXPECT_EQ(AtomicTypeSize(FI_INT128), 0u);
  EXPECT_FALSE(AtomicOffered(AtomicKind::kWrite, FI_DOUBLE_COMPLEX, FI_SUM));
}

TEST(AtomicMathTest, EachCallFamilyOffersItsOwnOps) {
  EXPECT_TRUE(AtomicOffered(AtomicKind::kWrite, FI_INT64, FI_SUM));
  EXPECT_TRUE(AtomicOffered(AtomicKind::kWrite, FI_UINT32, FI_BXOR));
  EXPECT_TRUE(AtomicOffered(AtomicKind::kWrite, FI_DOUBLE, FI_ATOMIC_WRITE));
  EXPECT_FALSE(AtomicOffered(AtomicKind::kWrite, FI_INT64, FI_ATOMIC_READ));
  EXPECT_FALSE(AtomicOffered(AtomicKind::kWrite, FI_INT64, FI_CSWAP));
  EXPECT_TRUE(AtomicOffered(AtomicKind::kFetch, FI_INT64, FI_ATOMIC_READ));
  EXPECT_FALSE(AtomicOffered(AtomicKind::kFetch, FI_INT64, FI_MSWAP));
  EXPECT_TRUE(AtomicOffered(AtomicKind::kCompare, FI_FLOAT, FI_CSWAP_GE));
  EXPECT_TRUE(AtomicOffered(AtomicKind::kCompare, FI_UINT8, FI_MSWAP));
  EXPECT_FALSE(AtomicOffered(AtomicKind::kCompare, FI_INT64, FI_SUM));
  // Bitwise and logical ops and the masked swap take integers only.
  EXPECT_FALSE(AtomicOffered(AtomicKind::kWrite, FI_FLOAT, FI_BOR));
  EXPECT_FALSE(AtomicOffered(AtomicKind::kWrite, FI_DOUBLE, FI_LXOR));
  EXPECT_FALSE(AtomicOffered(AtomicKind::kCompare, FI_DOUBLE, FI_MSWAP));
  EXPECT_FALSE(AtomicOffered(AtomicKind::kWrite, FI_INT64, FI_ATOMIC_OP_LAST));
}

TEST(AtomicMathTest, SignedSumAndProductWrapInsteadOfOverflowing) {
  int8_t t[2] = {127, -128};
  const int8_t v[2] = {1, -1};
  int8_t old[2];
  ApplyAtomic(FI_INT8, FI_SUM, B(t), B(v), nullptr, 2, B(old));
  EXPECT_EQ(t[0], -128);
  EXPECT_EQ(t[1], 127);
  EXPECT_EQ(old[0], 127);
  EXPECT_EQ(old[1], -128);
  int64_t big = INT64_MAX;
  const int64_t two = 2;
  ApplyAtomic(FI_INT64, FI_PROD, B(&big), B(&two), nullptr, 1, nullptr);
  EXPECT_EQ(big, -2);
}

TEST(AtomicMathTest, MinMaxOnFloatsAndBitwiseOnIntegers) {
  float f[2] = {1.5f, 1.5f};
  const float v[2] = {0.5f, 2.5f};
  ApplyAtomic(FI_FLOAT, FI_MIN, B(&f[0]), B(&v[0]), nullptr, 1, nullptr);
  ApplyAtomic(FI_FLOAT, FI_MAX, B(&f[1]), B(&v[1]), nullptr, 1, nullptr);
  EXPECT_EQ(f[0], 0.5f);
  EXPECT_EQ(f[1], 2.5f);
  uint64_t u = 0xf0f0;
  const uint64_t m = 0xff00;
  ApplyAtomic(FI_UINT64, FI_BXOR, B(&u), B(&m), nullptr, 1, nullptr);
  EXPECT_EQ(u, 0x0ff0u);
  int32_t l[2] = {0, 5};
  const int32_t w[2] = {7, 7};
  ApplyAtomic(FI_INT32, FI_LXOR, B(l), B(w), nullptr, 2, nullptr);
  EXPECT_EQ(l[0], 1);
  EXPECT_EQ(l[1], 0);
}

TEST(AtomicMathTest, CompareAndSwapStoresOnlyWhenTheComparisonHolds) {
  int64_t t[3] = {5, 5, 5};
  const int64_t v[3] = {9, 9, 9};
  const int64_t c[3] = {5, 4, 6};
  int64_t old[3];
  ApplyAtomic(FI_INT64, FI_CSWAP, B(t), B(v), B(c), 3, B(old));
  EXPECT_EQ(t[0], 9);
  EXPECT_EQ(t[1], 5);
  EXPECT_EQ(t[2], 5);
  EXPECT_EQ(old[0], 5);
  int64_t g[3] = {5, 5, 5};
  ApplyAtomic(FI_INT64, FI_CSWAP_GT, B(g), B(v), B(c), 3, nullptr);
  EXPECT_EQ(g[0], 5);  // 5 > 5 is false
  EXPECT_EQ(g[1], 5);  // 4 > 5 is false
  EXPECT_EQ(g[2], 9);  // 6 > 5
}

TEST(AtomicMathTest, MaskedSwapTakesTheMaskedBitsFromTheOperand) {
  uint16_t t = 0x1234;
  const uint16_t v = 0xabcd, mask = 0x0ff0;
  ApplyAtomic(FI_UINT16, FI_MSWAP, B(&t), B(&v), B(&mask), 1, nullptr);
  EXPECT_EQ(t, 0x1bc4);
}

TEST(AtomicMathTest, ReadReturnsTheValueAndLeavesIt) {
  double d[2] = {1.25, -3.5};
  double got[2] = {0, 0};
  ApplyAtomic(FI_DOUBLE, FI_ATOMIC_READ, B(d), nullptr, nullptr, 2, B(got));
  EXPECT_EQ(got[0], 1.25);
  EXPECT_EQ(got[1], -3.5);
  EXPECT_EQ(d[0], 1.25);
  EXPECT_EQ(d[1], -3.5);
}

TEST(AtomicMathTest, UnalignedElementsAreFine) {
  std::vector<uint8_t> buf(17, 0);
  const uint64_t one = 1;
  ApplyAtomic(FI_UINT64, FI_SUM, buf.data() + 1, B(&one), nullptr, 1, nullptr);
  uint64_t v;
  std::memcpy(&v, buf.data() + 1, 8);
  EXPECT_EQ(v, 1u);
}

}  // namespace
}  // namespace braid::libfabric

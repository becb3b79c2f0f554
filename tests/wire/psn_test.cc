// Tests for the wrap-aware 32-bit sequence numbers (Psn, PathSeq, MsgSeq).
#include "wire/psn.h"

#include <cstdint>
#include <type_traits>

#include "base/rng.h"
#include "gtest/gtest.h"

namespace braid::wire {
namespace {

// The three sequence spaces are distinct types: no accidental mixing.
static_assert(!std::is_convertible_v<Psn, PathSeq>);
static_assert(!std::is_convertible_v<PathSeq, MsgSeq>);
static_assert(!std::is_convertible_v<uint32_t, Psn>);  // explicit only
static_assert(sizeof(Psn) == 4);
static_assert(std::is_trivially_copyable_v<Psn>);
// Usable in constant expressions.
static_assert(Psn(1) > Psn(0));
static_assert(Psn(0) > Psn(0xffffffff));
static_assert(Max(Psn(0xfffffffe), Psn(1)) == Psn(1));

TEST(PsnTest, DefaultIsZero) { EXPECT_EQ(Psn().value(), 0u); }

TEST(PsnTest, ZeroComesAfterTheLargestValue) {
  const Psn last(0xffffffff);
  const Psn zero(0);
  EXPECT_TRUE(last < zero);
  EXPECT_TRUE(last <= zero);
  EXPECT_TRUE(zero > last);
  EXPECT_TRUE(zero >= last);
  EXPECT_FALSE(zero < last);
  EXPECT_FALSE(last > zero);
  EXPECT_TRUE(last != zero);
}

TEST(PsnTest, DistanceIsSignedAndWrapsAcrossTwoToThe32) {
  EXPECT_EQ(Psn(0) - Psn(0xffffffff), 1);
  EXPECT_EQ(Psn(0xffffffff) - Psn(0), -1);
  EXPECT_EQ(Psn(5) - Psn(0xfffffffb), 10);
  EXPECT_EQ(Psn(0xfffffffb) - Psn(5), -10);
  EXPECT_EQ(Psn(123) - Psn(123), 0);
}

TEST(PsnTest, LargestRepresentableDistanceIsTwoToThe31MinusOne) {
  const Psn base(0xfffffff0);
  const Psn far = base + 0x7fffffff;
  EXPECT_EQ(far - base, 0x7fffffff);
  EXPECT_EQ(base - far, -0x7fffffff);
  EXPECT_TRUE(far > base);
  EXPECT_TRUE(base < far);
  // One more step and `far` appears to be before `base`.
  const Psn beyond = base + 0x80000001LL;
  EXPECT_TRUE(beyond < base);
  EXPECT_EQ(beyond - base, -0x7fffffff);
}

TEST(PsnTest, AdditionAndSubtractionWrap) {
  EXPECT_EQ(Psn(0xffffffff) + 1, Psn(0));
  EXPECT_EQ(Psn(0) - 1, Psn(0xffffffff));
  EXPECT_EQ(Psn(5) + (-10), Psn(0xfffffffb));
  EXPECT_EQ(Psn(0xfffffffb) - (-10), Psn(5));
  EXPECT_EQ(Psn(7) + 0x100000000LL, Psn(7));  // only the low 32 bits count
}

TEST(PsnTest, PreIncrementWraps) {
  Psn p(0xffffffff);
  EXPECT_EQ((++p).value(), 0u);
  EXPECT_EQ(p, Psn(0));
}

TEST(PsnTest, MaxAndMinPickTheLaterAndEarlierAcrossTheWrap) {
  const Psn before(0xfffffff0);
  const Psn after(0x10);
  EXPECT_EQ(Max(before, after), after);
  EXPECT_EQ(Max(after, before), after);
  EXPECT_EQ(Min(before, after), before);
  EXPECT_EQ(Min(after, before), before);
  EXPECT_EQ(Max(after, after), after);
  EXPECT_EQ(Min(after, after), after);
}

TEST(PsnTest, ComparisonsAgreeWithDistanceForRandomPairsWithin2To31) {
  Rng rng(20240611);
  for (int i = 0; i < 100000; ++i) {
    const Psn a(static_cast<uint32_t>(rng.Next()));
    const int64_t d =
        static_cast<int64_t>(rng.Uniform(0xfffffffeULL)) - 0x7fffffff;
    const Psn b = a + d;  // |d| <= 2^31 - 1
    SCOPED_TRACE(testing::Message() << "a=" << a.value() << " d=" << d);
    ASSERT_EQ(b - a, d);
    ASSERT_EQ(a - b, -d);
    ASSERT_EQ(b > a, d > 0);
    ASSERT_EQ(b < a, d < 0);
    ASSERT_EQ(b >= a, d >= 0);
    ASSERT_EQ(b <= a, d <= 0);
    ASSERT_EQ(b == a, d == 0);
    ASSERT_EQ(Max(a, b), d > 0 ? b : a);
    ASSERT_EQ(Min(a, b), d > 0 ? a : b);
  }
}

TEST(PsnTest, OtherSequenceSpacesShareTheArithmetic) {
  EXPECT_TRUE(PathSeq(0xffffffff) < PathSeq(0));
  EXPECT_EQ(PathSeq(1) - PathSeq(0xffffffff), 2);
  EXPECT_TRUE(MsgSeq(0x7fffffff) > MsgSeq(0));
  EXPECT_EQ(MsgSeq(0) - 1, MsgSeq(0xffffffff));
}

}  // namespace
}  // namespace braid::wire

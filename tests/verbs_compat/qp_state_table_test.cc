#include "verbs_compat/qp_state_table.h"

#include "gtest/gtest.h"

namespace braid::verbs_compat {
namespace {

constexpr int kRcInit =
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
constexpr int kRcRtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kRcRts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                       IBV_QP_MAX_QP_RD_ATOMIC;

TEST(QpStateTableTest, TheRcConnectSequenceIsAllowed) {
  EXPECT_TRUE(
      ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT, kRcInit));
  EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, kRcRtr));
  EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS, kRcRts));
}

// UC: the RC sequence without the attributes of acknowledgement, retry and
// READ/atomics (what ibv_uc_pingpong and perftest -c UC pass); those are
// extra attributes for UC and rejected.
TEST(QpStateTableTest, TheUcConnectSequenceIsAllowedWithoutRcOnlyAttributes) {
  constexpr int kUcRtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                         IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  constexpr int kUcRts = IBV_QP_STATE | IBV_QP_SQ_PSN;
  EXPECT_TRUE(
      ModifyIsAllowed(IBV_QPT_UC, IBV_QPS_RESET, IBV_QPS_INIT, kRcInit));
  EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_UC, IBV_QPS_INIT, IBV_QPS_RTR, kUcRtr));
  EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_UC, IBV_QPS_RTR, IBV_QPS_RTS, kUcRts));
  EXPECT_FALSE(ModifyIsAllowed(IBV_QPT_UC, IBV_QPS_INIT, IBV_QPS_RTR, kRcRtr));
  EXPECT_FALSE(ModifyIsAllowed(IBV_QPT_UC, IBV_QPS_RTR, IBV_QPS_RTS, kRcRts));
  EXPECT_FALSE(ModifyIsAllowed(IBV_QPT_UC, IBV_QPS_INIT, IBV_QPS_RTR,
                               kUcRtr & ~IBV_QP_DEST_QPN));
  EXPECT_FALSE(ModifyIsAllowed(IBV_QPT_UC, IBV_QPS_RTS, IBV_QPS_RTS,
                               IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER));
  EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_UC, IBV_QPS_RTS, IBV_QPS_RTS,
                              IBV_QP_STATE | IBV_QP_ACCESS_FLAGS));
  EXPECT_FALSE(
      ModifyIsAllowed(IBV_QPT_XRC_SEND, IBV_QPS_RESET, IBV_QPS_INIT, kRcInit));
}

TEST(QpStateTableTest, EachMissingRequiredAttributeIsRejected) {
  for (int bit = 1; bit < (1 << 21); bit <<= 1) {
    if ((kRcRtr & bit) && bit != IBV_QP_STATE) {
      EXPECT_FALSE(
          ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, kRcRtr & ~bit))
          << bit;
    }
    if ((kRcRts & bit) && bit != IBV_QP_STATE) {
      EXPECT_FALSE(
          ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS, kRcRts & ~bit))
          << bit;
    }
  }
}

TEST(QpStateTableTest, ExtraAttributesAreRejectedOptionalOnesAllowed) {
  EXPECT_FALSE(ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT,
                               kRcInit | IBV_QP_QKEY));
  EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR,
                              kRcRtr | IBV_QP_ACCESS_FLAGS));
  EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS,
                              kRcRts | IBV_QP_MIN_RNR_TIMER));
  EXPECT_FALSE(ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS,
                               kRcRts | IBV_QP_DEST_QPN));
}

TEST(QpStateTableTest, UdNeedsQkeyNotAccessFlags) {
  const int ud_init =
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
  EXPECT_TRUE(
      ModifyIsAllowed(IBV_QPT_UD, IBV_QPS_RESET, IBV_QPS_INIT, ud_init));
  EXPECT_FALSE(
      ModifyIsAllowed(IBV_QPT_UD, IBV_QPS_RESET, IBV_QPS_INIT, kRcInit));
  EXPECT_TRUE(
      ModifyIsAllowed(IBV_QPT_UD, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_STATE));
  EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_UD, IBV_QPS_RTR, IBV_QPS_RTS,
                              IBV_QP_STATE | IBV_QP_SQ_PSN));
}

TEST(QpStateTableTest, AnyStateMayGoToResetOrErrorAndNowhereElseIsSkipped) {
  for (ibv_qp_state s : {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
                         IBV_QPS_SQD, IBV_QPS_ERR}) {
    EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_RC, s, IBV_QPS_ERR, IBV_QP_STATE));
    EXPECT_TRUE(ModifyIsAllowed(IBV_QPT_RC, s, IBV_QPS_RESET, IBV_QP_STATE));
  }
  EXPECT_FALSE(ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_RTS, kRcRts));
  EXPECT_FALSE(ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_ERR, IBV_QPS_RTS, kRcRts));
  EXPECT_FALSE(
      ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTR, IBV_QP_STATE));
  EXPECT_TRUE(
      ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_SQD, IBV_QP_STATE));
  EXPECT_TRUE(
      ModifyIsAllowed(IBV_QPT_RC, IBV_QPS_SQD, IBV_QPS_RTS, IBV_QP_STATE));
}

}  // namespace
}  // namespace braid::verbs_compat

// WcStatus: the one mapping from why a work request ended to the IBV_WC_*
// status its completion reports (IB spec 10.7.3 / 11.4.2 and what mlx5
// and rxe report).
#include "verbs_compat/wc_status.h"

#include "gtest/gtest.h"

namespace braid::verbs_compat {
namespace {

TEST(WcStatusTest, SuccessIsSuccess) {
  EXPECT_EQ(WcStatus(WcCause::kSuccess), IBV_WC_SUCCESS);
}

TEST(WcStatusTest, WorkRequestsOfAQpInErrorAreFlushed) {
  EXPECT_EQ(WcStatus(WcCause::kFlushed), IBV_WC_WR_FLUSH_ERR);
}

TEST(WcStatusTest, LocalErrorsAreLocalLengthAndProtection) {
  EXPECT_EQ(WcStatus(WcCause::kLocalLength), IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(WcStatus(WcCause::kLocalProtection), IBV_WC_LOC_PROT_ERR);
}

TEST(WcStatusTest, ResponderNaksMapToTheirRemoteErrors) {
  EXPECT_EQ(WcStatus(WcCause::kRemoteAccess), IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(WcStatus(WcCause::kRemoteInvalidRequest), IBV_WC_REM_INV_REQ_ERR);
  EXPECT_EQ(WcStatus(WcCause::kRemoteOperation), IBV_WC_REM_OP_ERR);
  EXPECT_EQ(WcStatus(WcCause::kRnrRetryExceeded), IBV_WC_RNR_RETRY_EXC_ERR);
}

TEST(WcStatusTest, AckTimeoutIsRetryExceeded) {
  EXPECT_EQ(WcStatus(WcCause::kAckTimeout), IBV_WC_RETRY_EXC_ERR);
}

TEST(WcStatusTest, EveryTransportFailureCauseIsRetryExceeded) {
  for (FailureCause cause :
       {FailureCause::kNone, FailureCause::kPeerUnreachable,
        FailureCause::kPeerRestarted, FailureCause::kClosed,
        FailureCause::kPeerEvicted}) {
    EXPECT_EQ(WcStatus(WcCause::kTransportFailure, cause), IBV_WC_RETRY_EXC_ERR)
        << FailureCauseName(cause);
  }
}

TEST(WcStatusTest, RefusedUdSendIsAGeneralError) {
  EXPECT_EQ(WcStatus(WcCause::kUdSendRefused), IBV_WC_GENERAL_ERR);
}

TEST(WcStatusTest, TransportCauseIsIgnoredForOtherCauses) {
  EXPECT_EQ(WcStatus(WcCause::kRemoteAccess, FailureCause::kClosed),
            IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(WcStatus(WcCause::kSuccess, FailureCause::kPeerUnreachable),
            IBV_WC_SUCCESS);
}

}  // namespace
}  // namespace braid::verbs_compat

// Zero-copy sends in braid0: a one-SGE WRITE/SEND payload of >= 8 KiB goes
// from the registered buffer itself; the RC buffer contract holds (the
// buffer is the application's again once the WR's completion is polled, and
// deregistering the MR waits until the endpoint no longer reads it).
#include <infiniband/verbs.h>

#include <cstring>
#include <memory>

#include "braid/verbs.h"
#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

TEST(ZeroCopyTest, LargeOneSgeWritesAndSendsGoUncopiedAndArriveByteExact) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 600000, 3);
  ASSERT_EQ(PostRecv(p.b, 1, 700000, 100000), 0);
  ASSERT_EQ(
      PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 500000, p.b.addr(0), p.b.mr->rkey),
      0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_SEND, 500000, 100000), 0);
  ASSERT_EQ(PostSend(p.a, 3, IBV_WR_RDMA_WRITE, 0, 4000, p.b.addr(600000),
                     p.b.mr->rkey),  // small: gathered
            0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 3);
  ASSERT_EQ(wcs.size(), 3u);
  for (const ibv_wc& wc : wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  std::vector<ibv_wc> rc = PollMany(p.b.rcq, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].byte_len, 100000u);
  EXPECT_EQ(std::memcmp(&p.b.buf[0], &p.a.buf[0], 500000), 0);
  EXPECT_EQ(std::memcmp(&p.b.buf[700000], &p.a.buf[500000], 100000), 0);
  EXPECT_EQ(std::memcmp(&p.b.buf[600000], &p.a.buf[0], 4000), 0);
  const braid_verbs_stats sa = Stats(p.a);
  EXPECT_EQ(sa.zero_copy_sends, 2u);
  EXPECT_EQ(sa.zero_copy_in_flight, 0u);
}

TEST(ZeroCopyTest, DeregisteringTheSourceWaitsUntilTheEndpointIsDoneWithIt) {
  Pair p;
  ASSERT_TRUE(p.ok());
  // A separately registered source buffer, freed right after dereg.
  auto src = std::make_unique<std::vector<uint8_t>>(800000);
  Fill(*src, 0, src->size(), 11);
  const std::vector<uint8_t> expect = *src;
  ibv_mr* mr =
      ibv_reg_mr(p.a.pd, src->data(), src->size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  ibv_sge sge{reinterpret_cast<uintptr_t>(src->data()),
              static_cast<uint32_t>(src->size()), mr->lkey};
  ASSERT_EQ(PostSendSgl(p.a, 9, IBV_WR_RDMA_WRITE, &sge, 1, p.b.addr(0),
                        p.b.mr->rkey),
            0);
  // No poll: deregister with the WRITE in flight, then free the memory.
  ASSERT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(Stats(p.a).zero_copy_in_flight, 0u);
  src.reset();
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 1);
  ASSERT_EQ(wcs.size(), 1u);
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(p.b.buf.data(), expect.data(), expect.size()), 0);
  EXPECT_EQ(Stats(p.a).zero_copy_sends, 1u);
}

}  // namespace
}  // namespace braid::verbs_compat::testing

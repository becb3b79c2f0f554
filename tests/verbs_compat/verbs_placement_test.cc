// Direct placement in braid0: WRITE / WRITE_WITH_IMM payloads and READ
// responses go from the datagram straight into the target memory (no
// reassembly buffer, no second copy; a large READ response also leaves the
// responder's MR uncopied), SEND still copies into the posted
// receive, and a WRITE the responder refuses touches no byte.
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "braid/verbs.h"
#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid::verbs_compat::testing {
namespace {

TEST(PlacementTest, WriteAndReadPayloadsArePlacedWithoutAReassemblyCopy) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 500000, 1);
  Fill(p.b.buf, 600000, 300000, 2);
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 500000, p.b.addr(50000),
                     p.b.mr->rkey),
            0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_RDMA_READ, 500000, 300000, p.b.addr(600000),
                     p.b.mr->rkey),
            0);
  std::vector<ibv_wc> wcs = PollMany(p.a.scq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wcs[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wcs[1].byte_len, 300000u);
  EXPECT_EQ(std::memcmp(&p.b.buf[50000], &p.a.buf[0], 500000), 0);
  EXPECT_EQ(std::memcmp(&p.a.buf[500000], &p.b.buf[600000], 300000), 0);
  const braid_verbs_stats sa = Stats(p.a), sb = Stats(p.b);
  // The responder placed the WRITE, the requester the READ response.
  EXPECT_EQ(sb.bytes_placed, 500000u);
  EXPECT_EQ(sb.endpoint_bytes_placed, 500000u);
  EXPECT_EQ(sa.bytes_placed, 300000u);
  EXPECT_EQ(sa.endpoint_bytes_placed, 300000u);
  EXPECT_EQ(sa.bytes_copied + sb.bytes_copied, 0u);
  // The READ response left from the responder's MR itself, uncopied; the
  // responder lets go of it once the requester's transport ack comes (its
  // progress thread takes that in).
  EXPECT_EQ(sb.zero_copy_sends, 1u);
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (Stats(p.b).zero_copy_in_flight != 0 &&
         std::chrono::steady_clock::now() < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(Stats(p.b).zero_copy_in_flight, 0u);
  // The endpoints reassembled verbs headers and ACKs only.
  EXPECT_LT(sb.endpoint_bytes_reassembled, 1000u);
  EXPECT_LT(sa.endpoint_bytes_reassembled, 1000u);
}

TEST(PlacementTest, SendStillCopiesIntoThePostedReceive) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 50000, 3);
  ASSERT_EQ(PostRecv(p.b, 1, 100000, 50000), 0);
  ASSERT_EQ(PostSend(p.a, 2, IBV_WR_SEND, 0, 50000), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(&p.b.buf[100000], &p.a.buf[0], 50000), 0);
  const braid_verbs_stats sb = Stats(p.b);
  EXPECT_EQ(sb.bytes_copied, 50000u);
  EXPECT_EQ(sb.bytes_placed, 0u);
  EXPECT_GE(sb.endpoint_bytes_reassembled, 50000u);
}

TEST(PlacementTest, ReadIntoSeveralSgesIsCopiedAndByteExact) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.b.buf, 0, 30000, 4);
  ibv_sge sge[2] = {p.a.Sge(100000, 10000), p.a.Sge(300000, 20000)};
  ASSERT_EQ(
      PostSendSgl(p.a, 7, IBV_WR_RDMA_READ, sge, 2, p.b.addr(0), p.b.mr->rkey),
      0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(&p.a.buf[100000], &p.b.buf[0], 10000), 0);
  EXPECT_EQ(std::memcmp(&p.a.buf[300000], &p.b.buf[10000], 20000), 0);
  const braid_verbs_stats sa = Stats(p.a);
  EXPECT_EQ(sa.bytes_copied, 30000u);
  EXPECT_EQ(sa.bytes_placed, 0u);
}

// Posts a 300 KB WRITE (about 220 fragments) that the responder must
// refuse and checks: REM_ACCESS_ERR, and not one byte of b changed.
void ExpectRefusedWriteTouchesNothing(Pair& p, uint64_t raddr, uint32_t rkey) {
  Fill(p.a.buf, 0, 300000, 5);
  ASSERT_TRUE(AllZero(p.b.buf));
  ASSERT_EQ(PostSend(p.a, 1, IBV_WR_RDMA_WRITE, 0, 300000, raddr, rkey), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.a.scq, &wc, 20000));
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_TRUE(AllZero(p.b.buf));
  const braid_verbs_stats sb = Stats(p.b);
  EXPECT_EQ(sb.endpoint_bytes_placed, 0u);
  EXPECT_EQ(sb.remote_access_errors, 1u);
}

TEST(PlacementTest, LargeWriteWithABadRkeyTouchesNoByte) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ExpectRefusedWriteTouchesNothing(p, p.b.addr(0), p.b.mr->rkey ^ 0x100);
}

TEST(PlacementTest, LargeWriteRunningPastTheRegionTouchesNoByte) {
  Pair p;
  ASSERT_TRUE(p.ok());
  ExpectRefusedWriteTouchesNothing(p, p.b.addr(p.b.buf.size() - 299999),
                                   p.b.mr->rkey);
}

TEST(PlacementTest, LargeWriteToARegionWithoutRemoteWriteTouchesNoByte) {
  PairOptions o;
  o.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  ExpectRefusedWriteTouchesNothing(p, p.b.addr(0), p.b.mr->rkey);
}

TEST(PlacementTest, PlacedWriteWithImmediateWaitsOutRnr) {
  Pair p;
  ASSERT_TRUE(p.ok());
  Fill(p.a.buf, 0, 100000, 6);
  ASSERT_EQ(
      PostSend(p.a, 1, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 100000, p.b.addr(8192),
               p.b.mr->rkey, IBV_SEND_SIGNALED, htonl(77)),
      0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(PostRecv(p.b, 9, 0, 0), 0);
  ibv_wc wc;
  ASSERT_TRUE(PollOne(p.b.rcq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(wc.byte_len, 100000u);
  EXPECT_EQ(ntohl(wc.imm_data), 77u);
  ASSERT_TRUE(PollOne(p.a.scq, &wc));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(&p.b.buf[8192], &p.a.buf[0], 100000), 0);
  EXPECT_GT(Stats(p.b).rnr_naks_sent, 0u);
  EXPECT_GE(Stats(p.b).bytes_placed, 100000u);
}

}  // namespace
}  // namespace braid::verbs_compat::testing

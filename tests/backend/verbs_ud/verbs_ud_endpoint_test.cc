// The endpoint over the verbs UD backend, carried by braid0's UD queue
// pairs (libbraid-verbs.so linked before libibverbs; braid0's own endpoints
// run over kernel UDP on loopback): exactly-once, byte-exact delivery in
// both directions, clean and under injected loss, duplication and
// reordering; zero-copy sends from registered memory; forged and malformed
// datagrams sent by a raw UD queue pair are dropped and counted.
#include <infiniband/verbs.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "braid/endpoint.h"
#include "braid/testing/impairment.h"
#include "gtest/gtest.h"
#include "tests/endpoint/pair_driver.h"
#include "tests/endpoint/traffic.h"
#include "tests/verbs_compat/verbs_test_util.h"

namespace braid {
namespace {

using testing::DrivePair;
using testing::FlowConfig;
using testing::FlowSender;
using testing::OpenOrDie;
using testing::ReceiveChecker;
using testing::Side;

EndpointOptions UdOptions() {
  EndpointOptions o;
  o.backend = BackendKind::kVerbsUd;
  o.ud.device = "braid0";
  return o;
}

void ExpectNoErrors(const std::vector<std::string>& errors, const char* who) {
  for (const std::string& e : errors) ADD_FAILURE() << who << ": " << e;
}

// Unordered and ordered flows both ways; every message arrives once,
// byte-exact (ReceiveChecker), and every send completes.
void RunFlows(Endpoint& a, Endpoint& b, uint32_t count) {
  constexpr uint64_t kSeed = 91;
  auto sized = [](Rng& r) {
    return static_cast<uint32_t>(testing::kHeaderBytes) +
           testing::SkewedSize(r);
  };
  FlowConfig un{
      .flow = 1, .stream = 0, .count = count, .seed = kSeed, .size = sized};
  FlowConfig ord{
      .flow = 2, .stream = 1, .count = count, .seed = kSeed, .size = sized};
  FlowConfig back{
      .flow = 3, .stream = 1, .count = count / 2, .seed = kSeed, .size = sized};
  FlowSender f1(un, &a, b.local_address());
  FlowSender f2(ord, &a, b.local_address());
  FlowSender f3(back, &b, a.local_address());
  ReceiveChecker at_a(kSeed), at_b(kSeed);
  at_b.ExpectFlow(1, 0, a.local_address());
  at_b.ExpectFlow(2, 1, a.local_address());
  at_a.ExpectFlow(3, 1, b.local_address());
  Side sa{&a, {&f1, &f2}, &at_a, back.count};
  Side sb{&b, {&f3}, &at_b, un.count + ord.count};
  std::vector<std::string> errors;
  EXPECT_TRUE(DrivePair(sa, sb, std::chrono::seconds(180), &errors));
  ExpectNoErrors(errors, "completions");
  for (FlowSender* f : {&f1, &f2, &f3}) ExpectNoErrors(f->errors(), "sender");
  ExpectNoErrors(at_a.errors(), "A receiver");
  ExpectNoErrors(at_b.errors(), "B receiver");
  EXPECT_EQ(at_b.received(), uint64_t{un.count + ord.count});
  EXPECT_EQ(at_a.received(), uint64_t{back.count});
}

TEST(VerbsUdEndpointTest, EndpointsNameEachOtherByGidAndQpn) {
  auto a = OpenOrDie(UdOptions());
  ASSERT_TRUE(a);
  const NetAddr l = a->local_address();
  EXPECT_EQ(l.family, NetAddr::Family::kIbUd);
  auto parsed = NetAddr::Parse(l.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, l);
  // An IP peer is not of this endpoint's kind.
  std::vector<uint8_t> m(10);
  EXPECT_TRUE(
      absl::IsInvalidArgument(a->Send(NetAddr::Ipv4(0x7f000001, 9000), m)));
}

TEST(VerbsUdEndpointTest, FlowsArriveExactlyOnceAndByteExact) {
  auto a = OpenOrDie(UdOptions());
  auto b = OpenOrDie(UdOptions());
  ASSERT_TRUE(a && b);
  RunFlows(*a, *b, 1500);
  EXPECT_EQ(a->stats().drops.malformed(), 0u);
  EXPECT_GT(a->stats().ud.ah_created, 1u);  // several paths to b
}

TEST(VerbsUdEndpointTest, FlowsSurviveLossDuplicationAndReordering) {
  TestImpairments imp{
      .drop = 0.05, .duplicate = 0.05, .reorder = 0.05, .seed = 11};
  auto a = OpenOrDie(UdOptions(), imp);
  imp.seed = 12;
  auto b = OpenOrDie(UdOptions(), imp);
  ASSERT_TRUE(a && b);
  RunFlows(*a, *b, 1500);
  const EndpointStats s = a->stats();
  EXPECT_GT(s.impair_dropped, 0u);
  EXPECT_GT(s.impair_duplicated, 0u);
  EXPECT_GT(s.reliability.retransmits, 0u);
}

TEST(VerbsUdEndpointTest, ZeroCopySendsFromRegisteredMemoryAreNotCopied) {
  auto a = OpenOrDie(UdOptions());
  auto b = OpenOrDie(UdOptions());
  ASSERT_TRUE(a && b);
  constexpr size_t kMsg = 64 * 1024, kCount = 16;
  std::vector<uint8_t> region(kMsg * kCount);
  for (size_t i = 0; i < region.size(); ++i) {
    region[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
  }
  ASSERT_TRUE(a->RegisterMemory(region).ok());
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_TRUE(
        a->SendZeroCopy(b->local_address(),
                        absl::MakeConstSpan(region).subspan(i * kMsg, kMsg))
            .ok());
  }
  std::vector<Completion> ca, cb;
  size_t done = 0, got = 0;
  testing::PollBothUntil(*a, *b, &ca, &cb, [&] {
    for (const Completion& c : ca) done += c.type == CompletionType::kSendDone;
    for (const Completion& c : cb) {
      if (c.type != CompletionType::kRecv) continue;
      ++got;
      EXPECT_EQ(c.data.size(), kMsg);
      // Whichever slice it is, it matches one of the region's.
      bool match = false;
      for (size_t i = 0; i < kCount && !match; ++i) {
        match = std::memcmp(c.data.data(), region.data() + i * kMsg, kMsg) == 0;
      }
      EXPECT_TRUE(match);
    }
    ca.clear();
    cb.clear();
    return done == kCount && got == kCount;
  });
  EXPECT_EQ(done, kCount);
  EXPECT_EQ(got, kCount);
  const UdStats u = a->stats().ud;
  EXPECT_GT(u.tx_zero_copy, 0u);
  EXPECT_EQ(u.tx_copied, 0u);
  EXPECT_EQ(u.tx_copied_bytes, 0u);
  EXPECT_TRUE(a->DeregisterMemory(region.data()).ok());
}

// A bare UD queue pair on braid0, to send whatever bytes a test wants.
struct RawUd {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(4096);

  bool Open() {
    ctx = verbs_compat::testing::OpenBraid0();
    if (ctx == nullptr) return false;
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = cq;
    ia.qp_type = IBV_QPT_UD;
    ia.sq_sig_all = 1;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    qp = ibv_create_qp(pd, &ia);
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
    if (pd == nullptr || cq == nullptr || qp == nullptr || mr == nullptr) {
      return false;
    }
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = VerbsUdBackendOptions().qkey;
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                          IBV_QP_QKEY) != 0) {
      return false;
    }
    a = {};
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0) return false;
    a.qp_state = IBV_QPS_RTS;
    return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0;
  }
  // Sends buf[0..len) to `dst` (a kIbUd address).
  bool Send(const NetAddr& dst, size_t len) {
    ibv_ah_attr aa{};
    aa.is_global = 1;
    std::memcpy(aa.grh.dgid.raw, dst.ip.data(), 16);
    aa.port_num = 1;
    ibv_ah* ah = ibv_create_ah(pd, &aa);
    if (ah == nullptr) return false;
    ibv_sge sge{reinterpret_cast<uintptr_t>(buf.data()),
                static_cast<uint32_t>(len), mr->lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = dst.qpn();
    wr.wr.ud.remote_qkey = VerbsUdBackendOptions().qkey;
    ibv_send_wr* bad = nullptr;
    const bool ok = ibv_post_send(qp, &wr, &bad) == 0;
    ibv_wc wc;
    for (int i = 0; i < 100000 && ibv_poll_cq(cq, 1, &wc) == 0; ++i) {
    }
    ibv_destroy_ah(ah);
    return ok;
  }
  ~RawUd() {
    if (qp) ibv_destroy_qp(qp);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
};

TEST(VerbsUdEndpointTest, MalformedDatagramsAreDroppedAndCounted) {
  auto a = OpenOrDie(UdOptions());
  auto b = OpenOrDie(UdOptions());
  ASSERT_TRUE(a && b);
  RawUd raw;
  ASSERT_TRUE(raw.Open());
  // Garbage of several lengths: none is a braid datagram.
  constexpr int kForged = 20;
  for (int i = 0; i < kForged; ++i) {
    for (size_t j = 0; j < raw.buf.size(); ++j) {
      raw.buf[j] = static_cast<uint8_t>(j * 31 + i);
    }
    ASSERT_TRUE(raw.Send(b->local_address(), 1 + i * 150));
  }
  std::vector<Completion> ca, cb;
  testing::PollBothUntil(
      *a, *b, &ca, &cb,
      [&] { return b->stats().drops.malformed() >= uint64_t{kForged}; },
      std::chrono::seconds(10));
  EXPECT_EQ(b->stats().drops.malformed(), uint64_t{kForged});
  EXPECT_TRUE(cb.empty());  // nothing delivered, nothing completed
  // And the endpoint still works.
  RunFlows(*a, *b, 200);
}

}  // namespace
}  // namespace braid

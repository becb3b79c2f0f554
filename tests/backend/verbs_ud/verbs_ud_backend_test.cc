// The verbs UD backend over braid0 (libbraid-verbs.so linked before
// libibverbs, so its UD queue pairs carry the datagrams over kernel UDP):
// datagrams both ways, addressing, zero-copy sends from registered memory,
// and every device error the backend maps, injected through its verbs table.
#include "backend/verbs_ud/verbs_ud_backend.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/monotonic_clock.h"
#include "gtest/gtest.h"

namespace braid::backend {
namespace {

using Clock = std::chrono::steady_clock;

// Injected faults (the verbs table holds plain function pointers).
struct Faults {
  bool ah = false;          // ibv_create_ah fails with ENOMEM
  int post_send_rc = 0;     // ibv_post_send returns this, failing the chain
  int post_send_after = 0;  // ... after this many requests are taken
  bool qp_fatal = false;    // an IBV_EVENT_QP_FATAL is pending
  bool device_fatal = false;
  int modify_fail_state = -1;  // ibv_modify_qp to this state fails
  int recoveries_seen = 0;
};
Faults g_faults;

// Address-handle bookkeeping the hooks keep: which handle each posted
// request names, which requests completed, which handles were destroyed.
// A handle destroyed while a request naming it is queued, or a request
// posted naming a destroyed handle, is a violation (a NIC would read freed
// memory; braid0 copies the address at post time, so only this shows it).
struct AhUse {
  std::map<uint64_t, ibv_ah*> posted;  // wr_id -> handle
  uint64_t completed = 0;              // every wr_id below it completed
  std::set<ibv_ah*> destroyed;
  int destroys = 0;
  int violations = 0;
};
AhUse g_ah;

ibv_ah* FaultyCreateAh(ibv_pd* pd, ibv_ah_attr* a) {
  if (g_faults.ah) {
    errno = ENOMEM;
    return nullptr;
  }
  ibv_ah* ah = DefaultUdVerbsOps().create_ah(pd, a);
  g_ah.destroyed.erase(ah);  // the allocator may hand the memory out again
  return ah;
}

int FaultyPostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  for (ibv_send_wr* w = wr; w != nullptr; w = w->next) {
    if (g_ah.destroyed.count(w->wr.ud.ah)) ++g_ah.violations;
    g_ah.posted[w->wr_id] = w->wr.ud.ah;
  }
  if (g_faults.post_send_rc == 0) {
    return DefaultUdVerbsOps().post_send(qp, wr, bad);
  }
  // Take the first post_send_after requests, refuse the rest.
  ibv_send_wr* w = wr;
  for (int i = 0; i < g_faults.post_send_after && w != nullptr; ++i) {
    ibv_send_wr* next = w->next;
    w->next = nullptr;
    ibv_send_wr* b = nullptr;
    DefaultUdVerbsOps().post_send(qp, w, &b);
    w->next = next;
    w = next;
  }
  if (w == nullptr) return 0;
  *bad = w;
  return g_faults.post_send_rc;
}

int FaultyGetAsync(ibv_context* ctx, ibv_async_event* ev) {
  if (g_faults.qp_fatal || g_faults.device_fatal) {
    ev->event_type =
        g_faults.device_fatal ? IBV_EVENT_DEVICE_FATAL : IBV_EVENT_QP_FATAL;
    g_faults.qp_fatal = g_faults.device_fatal = false;
    return 0;
  }
  return DefaultUdVerbsOps().get_async_event(ctx, ev);
}

void FaultyAckAsync(ibv_async_event* ev) {
  if (ev->event_type == IBV_EVENT_DEVICE_FATAL ||
      ev->event_type == IBV_EVENT_QP_FATAL) {
    return;  // injected: nothing to acknowledge
  }
  DefaultUdVerbsOps().ack_async_event(ev);
}

int FaultyModifyQp(ibv_qp* qp, ibv_qp_attr* a, int mask) {
  if (a->qp_state == IBV_QPS_RESET) ++g_faults.recoveries_seen;
  if (static_cast<int>(a->qp_state) == g_faults.modify_fail_state) {
    return EIO;
  }
  return DefaultUdVerbsOps().modify_qp(qp, a, mask);
}

int TrackedPollCq(ibv_cq* cq, int n, ibv_wc* wc) {
  const int got = DefaultUdVerbsOps().poll_cq(cq, n, wc);
  for (int i = 0; i < got; ++i) {
    // Send completions come in order: a signalled one covers the earlier.
    if (wc[i].opcode == IBV_WC_SEND) {
      g_ah.completed = std::max(g_ah.completed, wc[i].wr_id + 1);
    }
  }
  return got;
}

int TrackedDestroyAh(ibv_ah* ah) {
  for (auto it = g_ah.posted.lower_bound(g_ah.completed);
       it != g_ah.posted.end(); ++it) {
    if (it->second == ah) ++g_ah.violations;
  }
  g_ah.destroyed.insert(ah);
  ++g_ah.destroys;
  return DefaultUdVerbsOps().destroy_ah(ah);
}

const UdVerbsOps& FaultyOps() {
  static const UdVerbsOps ops = [] {
    UdVerbsOps o = DefaultUdVerbsOps();
    o.create_ah = FaultyCreateAh;
    o.post_send = FaultyPostSend;
    o.get_async_event = FaultyGetAsync;
    o.ack_async_event = FaultyAckAsync;
    o.modify_qp = FaultyModifyQp;
    o.poll_cq = TrackedPollCq;
    o.destroy_ah = TrackedDestroyAh;
    return o;
  }();
  return ops;
}

std::unique_ptr<VerbsUdBackend> OpenOrDie(const VerbsUdBackendOptions& o,
                                          const UdVerbsOps& ops = FaultyOps()) {
  auto b = VerbsUdBackend::Open(o, /*entropies=*/8, /*ecn=*/true, ops);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? std::move(*b) : nullptr;
}

VerbsUdBackendOptions Braid0() {
  VerbsUdBackendOptions o;
  o.device = "braid0";
  return o;
}

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13);
  return v;
}

// Receives on `b` until `want` datagrams came or 5 s passed; copies them.
std::vector<std::pair<NetAddr, std::vector<uint8_t>>> Receive(VerbsUdBackend& b,
                                                              size_t want) {
  std::vector<std::pair<NetAddr, std::vector<uint8_t>>> got;
  RxPacket rx[32];
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (got.size() < want && Clock::now() < deadline) {
    const size_t n = b.RxBurst(absl::MakeSpan(rx));
    for (size_t i = 0; i < n; ++i) {
      got.emplace_back(
          rx[i].src, std::vector<uint8_t>(rx[i].data, rx[i].data + rx[i].len));
    }
  }
  return got;
}

TxPacket To(const VerbsUdBackend& dst, const std::vector<uint8_t>& bytes,
            uint32_t entropy = 0) {
  TxPacket p;
  p.dst = dst.LocalAddress();
  p.entropy = entropy;
  p.data = bytes.data();
  p.len = static_cast<uint32_t>(bytes.size());
  return p;
}

class VerbsUdBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_faults = Faults();
    g_ah = AhUse();
  }
  void TearDown() override { g_faults = Faults(); }
};

TEST_F(VerbsUdBackendTest, UnknownDeviceIsNotFoundAndNamesTheDevicesThere) {
  VerbsUdBackendOptions o;
  o.device = "mlx5_9";
  auto b = VerbsUdBackend::Open(o, 8, true);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(absl::IsNotFound(b.status())) << b.status();
  EXPECT_TRUE(absl::StrContains(b.status().message(), "mlx5_9"));
  EXPECT_TRUE(absl::StrContains(b.status().message(), "braid0"));
}

TEST_F(VerbsUdBackendTest, BadOptionsAreInvalidArgumentNamingTheField) {
  VerbsUdBackendOptions o = Braid0();
  o.qkey = 0x80000001;
  auto b = VerbsUdBackend::Open(o, 8, true);
  EXPECT_TRUE(absl::IsInvalidArgument(b.status())) << b.status();
  EXPECT_TRUE(absl::StrContains(b.status().message(), "ud.qkey"));
  o = Braid0();
  o.port = 2;
  b = VerbsUdBackend::Open(o, 8, true);
  EXPECT_TRUE(absl::IsInvalidArgument(b.status())) << b.status();
  EXPECT_TRUE(absl::StrContains(b.status().message(), "ud.port"));
  o = Braid0();
  o.gid_index = 200;
  b = VerbsUdBackend::Open(o, 8, true);
  EXPECT_TRUE(absl::IsInvalidArgument(b.status())) << b.status();
  EXPECT_TRUE(absl::StrContains(b.status().message(), "ud.gid_index"));
  o = Braid0();
  o.max_datagram = 9000;
  b = VerbsUdBackend::Open(o, 8, true);
  EXPECT_TRUE(absl::IsInvalidArgument(b.status())) << b.status();
  EXPECT_TRUE(absl::StrContains(b.status().message(), "ud.max_datagram"));
}

TEST_F(VerbsUdBackendTest, DatagramsArriveByteExactFromTheSendersQueuePair) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->LocalAddress().family, NetAddr::Family::kIbUd);
  EXPECT_NE(a->LocalAddress(), b->LocalAddress());
  EXPECT_EQ(a->MaxDatagram(), 4096u);  // braid0's active MTU
  std::vector<std::vector<uint8_t>> msgs;
  std::vector<TxPacket> pkts;
  for (int i = 0; i < 20; ++i) {
    msgs.push_back(Pattern(1 + i * 200, static_cast<uint8_t>(i)));
  }
  for (int i = 0; i < 20; ++i) pkts.push_back(To(*b, msgs[i], i % 8));
  size_t sent = 0;
  while (sent < pkts.size()) {
    sent += a->TxBurst(absl::MakeConstSpan(pkts).subspan(sent));
  }
  auto got = Receive(*b, 20);
  ASSERT_EQ(got.size(), 20u);
  std::vector<bool> seen(20, false);
  for (const auto& [src, bytes] : got) {
    EXPECT_EQ(src, a->LocalAddress()) << src.ToString();
    for (int i = 0; i < 20; ++i) {
      if (bytes == msgs[i]) seen[i] = true;
    }
  }
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(seen[i]) << "datagram " << i;
  // One address handle per entropy used.
  EXPECT_EQ(a->counters().ud.ah_created, 8u);
  EXPECT_EQ(a->counters().tx_packets, 20u);
  EXPECT_EQ(b->counters().rx_packets, 20u);
  // And back: the address a datagram came from is one to answer to.
  std::vector<uint8_t> reply = Pattern(64, 9);
  TxPacket r = To(*a, reply);
  r.dst = got[0].first;
  ASSERT_EQ(b->TxBurst({&r, 1}), 1u);
  auto back = Receive(*a, 1);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].second, reply);
}

TEST_F(VerbsUdBackendTest, ReceivesCarryTheDevicesArrivalTime) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> m = Pattern(200, 3);
  TxPacket p = To(*b, m);
  const TimeNs before = MonotonicNow();
  ASSERT_EQ(a->TxBurst({&p, 1}), 1u);
  RxPacket rx[4];
  size_t n = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (n == 0 && Clock::now() < deadline) n = b->RxBurst(rx);
  const TimeNs polled = MonotonicNow();
  ASSERT_EQ(n, 1u);
  ASSERT_FALSE(rx[0].arrival.IsInfinite());
  EXPECT_GE(rx[0].arrival, before);
  EXPECT_LE(rx[0].arrival, polled);
  EXPECT_EQ(b->counters().rx_timestamps, 1u);
}

TEST_F(VerbsUdBackendTest, RegisteredPayloadsLeaveWithoutACopy) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> header = Pattern(32, 1);
  std::vector<uint8_t> region = Pattern(1 << 16, 2);
  std::vector<uint8_t> loose = Pattern(2000, 3);
  ASSERT_TRUE(a->RegisterMemory(region.data(), region.size()).ok());
  EXPECT_TRUE(
      absl::IsAlreadyExists(a->RegisterMemory(region.data() + 100, 10)));
  TxHold hold;
  TxPacket p[2] = {To(*b, header), To(*b, header)};
  p[0].tail = region.data() + 4000;
  p[0].tail_len = 3000;
  p[0].hold = &hold;
  p[1].tail = loose.data();
  p[1].tail_len = 2000;
  p[1].hold = &hold;
  ASSERT_EQ(a->TxBurst(p), 2u);
  auto got = Receive(*b, 2);
  ASSERT_EQ(got.size(), 2u);
  const BackendCounters c = a->counters();
  EXPECT_EQ(c.ud.tx_zero_copy, 1u);
  EXPECT_EQ(c.ud.tx_copied, 1u);
  EXPECT_EQ(c.ud.tx_copied_bytes, 2000u);
  // The hold is let go once the send completed.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (hold.refs.load() != 0 && Clock::now() < deadline) a->ReleaseTails();
  EXPECT_EQ(hold.refs.load(), 0u);
  std::vector<uint8_t> want0 = header;
  want0.insert(want0.end(), region.begin() + 4000, region.begin() + 7000);
  EXPECT_TRUE(got[0].second == want0 || got[1].second == want0);
  EXPECT_TRUE(a->DeregisterMemory(region.data()).ok());
  EXPECT_TRUE(absl::IsNotFound(a->DeregisterMemory(region.data())));
}

TEST_F(VerbsUdBackendTest, AddressHandlesBeyondThePeerLimitAreRetiredSafely) {
  VerbsUdBackendOptions o = Braid0();
  o.max_ah_peers = 1;
  auto a = OpenOrDie(o);
  auto b = OpenOrDie(Braid0());
  auto c = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b && c);
  std::vector<uint8_t> m = Pattern(100, 5);
  // Alternating peers in one burst: each new peer retires the other's
  // handle while an earlier request of the same burst still names it; the
  // handle must live until that request completed (g_ah checks it).
  for (int round = 0; round < 3; ++round) {
    TxPacket p[4] = {To(*b, m), To(*c, m), To(*b, m), To(*c, m)};
    ASSERT_EQ(a->TxBurst(p), 4u);
    EXPECT_EQ(Receive(*b, 2).size(), 2u) << "round " << round;
    EXPECT_EQ(Receive(*c, 2).size(), 2u) << "round " << round;
    a->ReleaseTails();
  }
  EXPECT_EQ(a->counters().ud.ah_flushes, 12u - 1u);  // every send but the first
  EXPECT_EQ(a->counters().ud.ah_created, 12u);
  EXPECT_EQ(a->counters().tx_dropped, 0u);
  EXPECT_GT(g_ah.destroys, 0);  // retired handles were let go
  EXPECT_EQ(g_ah.violations, 0);
}

TEST_F(VerbsUdBackendTest, RefusedAddressHandleDropsAndCountsTheDatagram) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  g_faults.ah = true;
  std::vector<uint8_t> m = Pattern(100, 4);
  TxPacket p = To(*b, m);
  EXPECT_EQ(a->TxBurst({&p, 1}), 1u);  // taken, not offered again forever
  EXPECT_EQ(a->counters().ud.ah_failures, 1u);
  EXPECT_EQ(a->counters().tx_dropped, 1u);
  EXPECT_EQ(a->counters().tx_packets, 0u);
  g_faults.ah = false;  // the device has handles again: the next one goes
  EXPECT_EQ(a->TxBurst({&p, 1}), 1u);
  EXPECT_EQ(Receive(*b, 1).size(), 1u);
}

TEST_F(VerbsUdBackendTest, FullSendQueueIsBackPressureAndLosesNothing) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  std::vector<std::vector<uint8_t>> msgs;
  for (int i = 0; i < 10; ++i) msgs.push_back(Pattern(300, uint8_t(i)));
  std::vector<TxPacket> pkts;
  for (auto& m : msgs) pkts.push_back(To(*b, m));
  g_faults.post_send_rc = ENOMEM;
  g_faults.post_send_after = 4;
  EXPECT_EQ(a->TxBurst(pkts), 4u);
  EXPECT_EQ(a->counters().ud.sq_full, 1u);
  g_faults.post_send_rc = 0;
  EXPECT_EQ(a->TxBurst(absl::MakeConstSpan(pkts).subspan(4)), 6u);
  auto got = Receive(*b, 10);
  EXPECT_EQ(got.size(), 10u);
  EXPECT_EQ(a->counters().tx_dropped, 0u);
}

TEST_F(VerbsUdBackendTest, QueuePairInErrorIsResetAndCarriesOn) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> m = Pattern(500, 5);
  TxPacket p = To(*b, m);
  g_faults.post_send_rc = EINVAL;  // what a QP in the error state answers
  EXPECT_EQ(a->TxBurst({&p, 1}), 1u);
  EXPECT_EQ(a->counters().ud.post_errors, 1u);
  EXPECT_EQ(a->counters().tx_dropped, 1u);
  g_faults.post_send_rc = 0;
  const int resets = g_faults.recoveries_seen;
  EXPECT_EQ(a->TxBurst({&p, 1}), 1u);
  EXPECT_EQ(g_faults.recoveries_seen, resets + 1);
  EXPECT_EQ(a->counters().ud.qp_recoveries, 1u);
  EXPECT_EQ(Receive(*b, 1).size(), 1u);
  // An asynchronous QP-fatal event does the same on the receive side, and
  // the re-posted receive buffers take datagrams again.
  g_faults.qp_fatal = true;
  RxPacket rx[4];
  for (int i = 0; i < 1100; ++i) b->RxBurst(rx);
  EXPECT_EQ(b->counters().ud.qp_recoveries, 1u);
  EXPECT_EQ(a->TxBurst({&p, 1}), 1u);
  EXPECT_EQ(Receive(*b, 1).size(), 1u);
}

TEST_F(VerbsUdBackendTest, FatalDeviceStopsTheBackendWithoutHanging) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  g_faults.device_fatal = true;
  RxPacket rx[4];
  for (int i = 0; i < 1100; ++i) a->RxBurst(rx);
  EXPECT_EQ(a->counters().ud.device_failed, 1u);
  std::vector<uint8_t> m = Pattern(100, 6);
  TxPacket p = To(*b, m);
  EXPECT_EQ(a->TxBurst({&p, 1}), 1u);  // taken and dropped, never stuck
  EXPECT_EQ(a->counters().tx_dropped, 1u);
  EXPECT_EQ(a->RxBurst(rx), 0u);
}

TEST_F(VerbsUdBackendTest, ResetThatFailsMarksTheDeviceFailed) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> m = Pattern(100, 7);
  TxPacket p = To(*b, m);
  g_faults.post_send_rc = EINVAL;
  EXPECT_EQ(a->TxBurst({&p, 1}), 1u);
  g_faults.post_send_rc = 0;
  g_faults.modify_fail_state = IBV_QPS_INIT;
  EXPECT_EQ(a->TxBurst({&p, 1}), 1u);
  EXPECT_EQ(a->counters().ud.device_failed, 1u);
  EXPECT_EQ(a->counters().ud.qp_recoveries, 0u);
}

TEST_F(VerbsUdBackendTest, DatagramsForAnotherFamilyOrTooLongAreDropped) {
  auto a = OpenOrDie(Braid0());
  auto b = OpenOrDie(Braid0());
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> m = Pattern(100, 8), big = Pattern(5000, 9);
  TxPacket p[2] = {To(*b, m), To(*b, big)};
  p[0].dst = NetAddr::Ipv4(0x7f000001, 9000);
  EXPECT_EQ(a->TxBurst(p), 2u);
  EXPECT_EQ(a->counters().tx_dropped, 2u);
  EXPECT_EQ(a->counters().tx_packets, 0u);
}

}  // namespace
}  // namespace braid::backend

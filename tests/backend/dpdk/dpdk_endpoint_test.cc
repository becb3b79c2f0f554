// The public Endpoint over the DPDK backend, two endpoints in one process on
// a ring wire (ring_wire.h): traffic both ways, byte-exact and exactly once;
// ordered streams under injected loss, duplication and reordering; a peer
// that goes away; closing with sends in flight; neighbour resolution; and
// the errors Open gives for bad DPDK settings. The two-process runs over
// net_memif are in tests/tools/braid_perf_dpdk_memif_test.sh.
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "braid/endpoint.h"
#include "braid/testing/impairment.h"
#include "gtest/gtest.h"
#include "tests/backend/dpdk/ring_wire.h"
#include "tests/endpoint/pair_driver.h"
#include "tests/endpoint/traffic.h"

namespace braid {
namespace {

using testing::DrivePair;
using testing::FlowConfig;
using testing::FlowSender;
using testing::OpenOrDie;
using testing::ReceiveChecker;
using testing::Side;
using Clock = std::chrono::steady_clock;

constexpr char kMacA[] = "02:00:00:00:00:0a";
constexpr char kMacB[] = "02:00:00:00:00:0b";

// A's and B's options on `w`. With `static_macs`, each names the other's MAC
// (no ARP); otherwise they find each other by ARP / Neighbor Discovery.
struct PairOptions {
  EndpointOptions a, b;
};
PairOptions OptionsOn(const testing::RingWire& w, bool static_macs,
                      bool ipv6 = false) {
  PairOptions p;
  for (EndpointOptions* o : {&p.a, &p.b}) {
    o->backend = BackendKind::kDpdk;
    // Each port keeps its pool for the process (DpdkPort); small pools let
    // every test of this binary fit in the EAL's memory.
    o->dpdk.mbufs = 2047;
  }
  p.a.bind = ipv6 ? "[fd00::a]:7000" : "10.7.0.10:7000";
  p.b.bind = ipv6 ? "[fd00::b]:7001" : "10.7.0.11:7001";
  p.a.dpdk.port = w.a;
  p.b.dpdk.port = w.b;
  p.a.dpdk.local_mac = kMacA;
  p.b.dpdk.local_mac = kMacB;
  if (static_macs) {
    p.a.dpdk.next_hop_mac = kMacB;
    p.b.dpdk.next_hop_mac = kMacA;
  }
  return p;
}

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 31 + i);
  return v;
}

void ExpectNoErrors(const std::vector<std::string>& errors, const char* who) {
  for (const std::string& e : errors) ADD_FAILURE() << who << ": " << e;
}

// Runs a flow each way and checks every message arrived once, byte-exact.
void ExchangeBothWays(Endpoint* a, Endpoint* b, uint32_t count, uint64_t seed) {
  FlowConfig fa{.flow = 1, .count = count, .seed = seed};
  FlowConfig fb{.flow = 2, .count = count, .seed = seed, .zero_copy = true};
  FlowSender send_a(fa, a, b->local_address());
  FlowSender send_b(fb, b, a->local_address());
  ReceiveChecker at_a(seed), at_b(seed);
  at_b.ExpectFlow(1, 0, a->local_address());
  at_a.ExpectFlow(2, 0, b->local_address());
  Side sa{a, {&send_a}, &at_a, fb.count};
  Side sb{b, {&send_b}, &at_b, fa.count};
  std::vector<std::string> errors;
  EXPECT_TRUE(DrivePair(sa, sb, std::chrono::seconds(120), &errors));
  ExpectNoErrors(errors, "completions");
  ExpectNoErrors(send_a.errors(), "A sender");
  ExpectNoErrors(send_b.errors(), "B sender");
  ExpectNoErrors(at_a.errors(), "A receiver");
  ExpectNoErrors(at_b.errors(), "B receiver");
  EXPECT_EQ(send_a.done(), count);
  EXPECT_EQ(send_b.done(), count);
  EXPECT_EQ(at_b.received(), count);
  EXPECT_EQ(at_a.received(), count);
  EXPECT_EQ(at_b.tiny_received(), send_a.tiny_sent());
  EXPECT_EQ(at_a.tiny_received(), send_b.tiny_sent());
  EXPECT_EQ(at_a.duplicates() + at_b.duplicates(), 0u);
  EXPECT_EQ(a->stats().messages_received, count);
  EXPECT_EQ(b->stats().messages_received, count);
}

TEST(DpdkEndpointTest, TwoEndpointsExchangeMessagesBothWaysByteExact) {
  const testing::RingWire w = testing::MakeRingWire("xchg");
  PairOptions o = OptionsOn(w, /*static_macs=*/true);
  auto a = OpenOrDie(o.a);
  auto b = OpenOrDie(o.b);
  ASSERT_TRUE(a && b);
  // Busy-polled: there is no descriptor to block on.
  EXPECT_EQ(a->fd(), -1);
  EXPECT_EQ(a->local_address().ToString(), "10.7.0.10:7000");
  ExchangeBothWays(a.get(), b.get(), 3000, 5);
  const EndpointStats st = a->stats();
  // A ring port hands its mbufs to the peer port, which keeps them as long
  // as it likes: payloads are copied, never sent by reference (the
  // two-process memif test covers that).
  EXPECT_EQ(st.frames.tx_zero_copy_frames, 0u);
  EXPECT_EQ(st.frames.rx_drops(), 0u);
  EXPECT_EQ(st.frames.tx_no_neighbor, 0u);
  EXPECT_EQ(st.frames.neighbor_requests_sent, 0u);  // static next hop
}

TEST(DpdkEndpointTest, Ipv6EndpointsExchangeMessages) {
  const testing::RingWire w = testing::MakeRingWire("xchg6");
  PairOptions o = OptionsOn(w, /*static_macs=*/true, /*ipv6=*/true);
  auto a = OpenOrDie(o.a);
  auto b = OpenOrDie(o.b);
  ASSERT_TRUE(a && b);
  ExchangeBothWays(a.get(), b.get(), 1000, 6);
  EXPECT_EQ(a->stats().frames.rx_drops(), 0u);
}

TEST(DpdkEndpointTest, OrderedStreamsStayOrderedUnderLossDupAndReorder) {
  const testing::RingWire w = testing::MakeRingWire("order");
  PairOptions o = OptionsOn(w, /*static_macs=*/true);
  TestImpairments imp{
      .drop = 0.05, .duplicate = 0.05, .reorder = 0.05, .seed = 3};
  auto a = OpenOrDie(o.a, imp);
  imp.seed = 4;
  auto b = OpenOrDie(o.b, imp);
  ASSERT_TRUE(a && b);
  constexpr uint64_t kSeed = 77;
  auto sized = [](Rng& r) {
    return static_cast<uint32_t>(testing::kHeaderBytes) +
           testing::SkewedSize(r);
  };
  FlowConfig s1{
      .flow = 1, .stream = 1, .count = 2000, .seed = kSeed, .size = sized};
  FlowConfig un{
      .flow = 3, .stream = 0, .count = 1000, .seed = kSeed, .size = sized};
  FlowConfig back{
      .flow = 4, .stream = 1, .count = 1000, .seed = kSeed, .size = sized};
  FlowSender f1(s1, a.get(), b->local_address());
  FlowSender f3(un, a.get(), b->local_address());
  FlowSender f4(back, b.get(), a->local_address());
  ReceiveChecker at_a(kSeed), at_b(kSeed);
  at_b.ExpectFlow(1, 1, a->local_address());
  at_b.ExpectFlow(3, 0, a->local_address());
  at_a.ExpectFlow(4, 1, b->local_address());
  Side sa{a.get(), {&f1, &f3}, &at_a, back.count};
  Side sb{b.get(), {&f4}, &at_b, s1.count + un.count};
  std::vector<std::string> errors;
  EXPECT_TRUE(DrivePair(sa, sb, std::chrono::seconds(240), &errors));
  ExpectNoErrors(errors, "completions");
  for (FlowSender* f : {&f1, &f3, &f4}) ExpectNoErrors(f->errors(), "sender");
  ExpectNoErrors(at_b.errors(), "B receiver");
  ExpectNoErrors(at_a.errors(), "A receiver");
  EXPECT_EQ(at_b.order_violations() + at_a.order_violations(), 0u);
  EXPECT_EQ(at_b.Missing(1, s1.count), 0u);
  EXPECT_EQ(at_b.Missing(3, un.count), 0u);
  EXPECT_EQ(at_a.Missing(4, back.count), 0u);
  EXPECT_EQ(at_b.duplicates() + at_a.duplicates(), 0u);
  EXPECT_GT(a->stats().reliability.retransmits, 0u);
  EXPECT_GT(b->stats().drops.duplicates, 0u);
  EXPECT_GT(a->stats().impair_dropped, 0u);
}

// Without a static next hop each endpoint asks for the other's MAC (ARP for
// IPv4, Neighbor Discovery for IPv6), answers the other's request, and the
// first datagrams, dropped while the MAC was unknown, are retransmitted.
void ExpectNeighboursFoundEachOther(bool ipv6) {
  const testing::RingWire w = testing::MakeRingWire(ipv6 ? "nd6" : "arp4");
  PairOptions o = OptionsOn(w, /*static_macs=*/false, ipv6);
  auto a = OpenOrDie(o.a);
  auto b = OpenOrDie(o.b);
  ASSERT_TRUE(a && b);
  ExchangeBothWays(a.get(), b.get(), 500, 8);
  for (const Endpoint* e : {a.get(), b.get()}) {
    const FrameStats f = e->stats().frames;
    EXPECT_GE(f.neighbor_requests_sent + f.neighbor_replies_sent, 1u);
    EXPECT_GE(f.neighbor_learnt + f.neighbor_replies_sent, 1u);
    EXPECT_EQ(f.neighbor_ignored, 0u);
    EXPECT_EQ(f.rx_drops(), 0u);
  }
  // The one that asked first dropped what it could not address yet.
  EXPECT_GT(a->stats().frames.tx_no_neighbor + b->stats().frames.tx_no_neighbor,
            0u);
}

TEST(DpdkEndpointTest, Ipv4EndpointsFindEachOtherByArp) {
  ExpectNeighboursFoundEachOther(false);
}

TEST(DpdkEndpointTest, Ipv6EndpointsFindEachOtherByNeighborDiscovery) {
  ExpectNeighboursFoundEachOther(true);
}

// Sends one message A->B and waits for both completions.
void Handshake(Endpoint& a, Endpoint& b) {
  ASSERT_TRUE(a.Send(b.local_address(), Pattern(100, 1), {.cookie = 1}).ok());
  std::vector<Completion> ca, cb;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while ((ca.empty() || cb.empty()) && Clock::now() < deadline) {
    a.Poll(&ca);
    b.Poll(&cb);
  }
  ASSERT_EQ(ca.size(), 1u);
  ASSERT_EQ(ca[0].type, CompletionType::kSendDone);
  ASSERT_EQ(cb.size(), 1u);
  EXPECT_EQ(cb[0].data, Pattern(100, 1));
}

TEST(DpdkEndpointTest, PeerThatGoesAwayMakesSendsFailWithPeerUnreachable) {
  const testing::RingWire w = testing::MakeRingWire("gone");
  PairOptions o = OptionsOn(w, /*static_macs=*/true);
  o.a.protocol.peer_timeout = DurationNs::Millis(200);
  auto a = OpenOrDie(o.a);
  auto b = OpenOrDie(o.b);
  ASSERT_TRUE(a && b);
  Handshake(*a, *b);
  // B was last heard during the handshake.
  const auto start = Clock::now();
  const NetAddr gone = b->local_address();
  b.reset();  // its port stops: nothing answers any more
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(a->Send(gone, Pattern(5000, i), {.cookie = 10u + i}).ok());
  }
  std::vector<Completion> got;
  while (got.size() < 5 && Clock::now() - start < std::chrono::seconds(10)) {
    a->Poll(&got);
  }
  ASSERT_EQ(got.size(), 5u);
  for (const Completion& c : got) {
    EXPECT_EQ(c.type, CompletionType::kSendFailed);
    EXPECT_EQ(c.cause, FailureCause::kPeerUnreachable)
        << FailureCauseName(c.cause);
  }
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(200));
}

TEST(DpdkEndpointTest, CloseCompletesEverySendInFlightWithClosed) {
  const testing::RingWire w = testing::MakeRingWire("close");
  PairOptions o = OptionsOn(w, /*static_macs=*/true);
  auto a = OpenOrDie(o.a);
  auto b = OpenOrDie(o.b);  // alive but not polled after the handshake
  ASSERT_TRUE(a && b);
  Handshake(*a, *b);
  constexpr int kSends = 30;
  for (int i = 0; i < kSends; ++i) {
    ASSERT_TRUE(
        a->Send(b->local_address(), Pattern(i * 3000, i), {.cookie = 100u + i})
            .ok());
  }
  std::vector<Completion> got;
  for (int i = 0; i < 20; ++i) a->Poll(&got);
  ASSERT_TRUE(got.empty()) << "something completed without the peer polling";
  a->Close();
  while (a->Poll(&got) > 0) {
  }
  ASSERT_EQ(got.size(), static_cast<size_t>(kSends));
  std::set<uint64_t> cookies;
  for (const Completion& c : got) {
    EXPECT_EQ(c.type, CompletionType::kSendFailed);
    EXPECT_EQ(c.cause, FailureCause::kClosed) << FailureCauseName(c.cause);
    EXPECT_TRUE(cookies.insert(c.cookie).second);
  }
}

TEST(DpdkEndpointTest, APortCanBeOpenedAgainAfterItsEndpointIsGone) {
  const testing::RingWire w = testing::MakeRingWire("reopen");
  PairOptions o = OptionsOn(w, /*static_macs=*/true);
  auto b = OpenOrDie(o.b);
  ASSERT_TRUE(b);
  for (int round = 0; round < 2; ++round) {
    auto a = OpenOrDie(o.a);
    ASSERT_TRUE(a);
    Handshake(*a, *b);
  }
}

TEST(DpdkEndpointTest, OpenNamesWhatIsWrongWithTheDpdkSettings) {
  const testing::RingWire w = testing::MakeRingWire("errs");
  PairOptions o = OptionsOn(w, /*static_macs=*/true);
  auto a = OpenOrDie(o.a);
  ASSERT_TRUE(a);
  struct Case {
    const char* what;
    std::function<void(EndpointOptions*)> edit;
    absl::StatusCode code;
    const char* mentions;
  };
  const Case cases[] = {
      {"port in use", [](EndpointOptions*) {}, absl::StatusCode::kAlreadyExists,
       "already used"},
      {"no such port",
       [](EndpointOptions* e) { e->dpdk.port = "no_such_port"; },
       absl::StatusCode::kNotFound, "no_such_port"},
      {"any-address", [](EndpointOptions* e) { e->bind = "0.0.0.0:7000"; },
       absl::StatusCode::kInvalidArgument, "any-address"},
      {"bad MAC",
       [](EndpointOptions* e) { e->dpdk.next_hop_mac = "02:00:00:00:00"; },
       absl::StatusCode::kInvalidArgument, "next_hop_mac"},
      {"bad gateway", [](EndpointOptions* e) { e->dpdk.gateway = "fd00::1"; },
       absl::StatusCode::kInvalidArgument, "gateway"},
      {"other EAL arguments",
       [](EndpointOptions* e) { e->dpdk.eal_args = "--no-huge -m 64"; },
       absl::StatusCode::kFailedPrecondition, "already initialised"},
      {"MTU too small", [](EndpointOptions* e) { e->mtu = 500; },
       absl::StatusCode::kInvalidArgument, "mtu"},
  };
  for (const Case& c : cases) {
    EndpointOptions e = o.a;
    c.edit(&e);
    absl::StatusOr<std::unique_ptr<Endpoint>> ep = Endpoint::Open(e);
    ASSERT_FALSE(ep.ok()) << c.what;
    EXPECT_EQ(ep.status().code(), c.code) << c.what << ": " << ep.status();
    EXPECT_NE(ep.status().message().find(c.mentions), std::string::npos)
        << c.what << ": " << ep.status();
  }
}

}  // namespace
}  // namespace braid

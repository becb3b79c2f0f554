// EndpointCore scenarios in simulated time, no sockets: two cores joined by
// the filterable wire of core_pair.h. Restart, go-back-N under loss, the
// 0-byte message, the API limits with their exact status codes, a full peer
// table, and receive credit against a receiver that does not poll.
#include <algorithm>
#include <vector>

#include "base/rng.h"
#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;
using testing::Wire;

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>(seed * 131 + i * 7 + (i >> 8));
  return v;
}

OutMessage Msg(const std::vector<uint8_t>& bytes, uint64_t cookie,
               uint16_t stream = 0) {
  OutMessage m =
      OutMessage::Copy(bytes.data(), static_cast<uint32_t>(bytes.size()));
  m.cookie = cookie;
  m.stream = stream;
  return m;
}

// Unordered delivery: each arrival matches a distinct sent message.
void ExpectEachSentOnce(const std::vector<Completion>& received,
                        const std::vector<std::vector<uint8_t>>& sent) {
  std::vector<bool> matched(sent.size(), false);
  for (const Completion& c : received) {
    bool found = false;
    for (size_t i = 0; i < sent.size() && !found; ++i) {
      if (!matched[i] && sent[i] == c.data) matched[i] = found = true;
    }
    EXPECT_TRUE(found) << "a delivered message matches nothing sent (or twice)";
  }
}

// Runs in chunks until `done` or `max_chunks` * 1000 rounds.
template <typename Fn>
void RunUntil(CorePair& p, Fn done, int max_chunks = 200,
              DurationNs step = DurationNs::Micros(5)) {
  for (int i = 0; i < max_chunks && !done(); ++i) p.Run(1000, step);
}

size_t CountType(const std::vector<Completion>& v, CompletionType t) {
  return static_cast<size_t>(std::count_if(
      v.begin(), v.end(), [t](const Completion& c) { return c.type == t; }));
}

// ---------------------------------------------------------------------------
// Dead paths under a one-message-at-a-time load.

// The path id of the first data frame of a datagram, or -1.
int DataPathOf(const Wire& w) {
  wire::ParseError e;
  if (wire::ParsePreamble(w.bytes, &e) == 0) return -1;
  wire::FrameReader r(
      absl::MakeConstSpan(w.bytes).subspan(wire::kPreambleSize));
  wire::Frame f;
  while (r.Next(&f)) {
    if (f.type == wire::FrameType::kData) return f.data.path_id;
  }
  return -1;
}

// Half of A's paths drop everything A sends on them, and A has one small
// message in flight at a time (a ping-pong): its losses are found by tail
// probes and RTOs, which blame no path, and nothing sent later on another
// path overtakes them. The re-send on another path arriving while the
// original never does is the evidence: each dead path gets penalised, or
// (two choices: its loss counts as load until it delivers) is passed
// over, and stops costing a re-send on every other message.
TEST(EndpointCoreScenarioTest, DeadPathsArePenalisedUnderOneMessageInFlight) {
  ProtocolOptions o;
  o.paths = 8;
  CorePair p(o);
  p.filter = [&](const Wire& w) {
    if (w.to != p.b_addr) return true;
    const int path = DataPathOf(w);
    return path < 0 || path >= 4;  // paths 0..3 are dead
  };
  auto retransmits = [&] {
    return p.a->peer_stats(false).empty()
               ? uint64_t{0}
               : p.a->peer_stats(false)[0].reliability.retransmits;
  };
  uint64_t first_half = 0;
  std::vector<uint64_t> sent_at_half(4, 0);
  for (int i = 0; i < 200; ++i) {
    if (i == 100) {
      first_half = retransmits();
      const PeerStats h = p.a->peer_stats(true)[0];
      for (int path = 0; path < 4; ++path) {
        sent_at_half[path] = h.paths[path].packets_sent;
      }
    }
    const auto m = Pattern(100, i);
    ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m, i)).ok());
    std::vector<Completion> ra;
    RunUntil(p, [&] {
      auto v = p.Drain(*p.a);
      ra.insert(ra.end(), v.begin(), v.end());
      return !ra.empty();
    });
    ASSERT_EQ(ra.size(), 1u);
    ASSERT_EQ(ra[0].type, CompletionType::kSendDone) << "message " << i;
    p.Drain(*p.b);
  }
  const uint64_t second_half = retransmits() - first_half;
  const PeerStats s = p.a->peer_stats(true)[0];
  for (int path = 0; path < 4; ++path) {
    EXPECT_TRUE(s.paths[path].penalties >= 1 ||
                s.paths[path].packets_sent == sent_at_half[path])
        << "dead path " << path << ": " << s.paths[path].penalties
        << " penalties, " << s.paths[path].packets_sent - sent_at_half[path]
        << " packets in the second half";
  }
  // Without the blame every message needed a re-send (100 of 100 in both
  // halves: the dead paths stayed healthy); now penalised paths carry only
  // the probes that test them again (25-34 re-sends per 100 here).
  EXPECT_GT(first_half, 0u);
  EXPECT_LT(second_half, 50u) << "first 100 messages: " << first_half;
}

// ---------------------------------------------------------------------------
// Restart.

TEST(EndpointCoreScenarioTest,
     ReceiverRestartFailsInFlightSendsAndNewSendsFlow) {
  CorePair p;
  const auto m0 = Pattern(500, 0);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m0, 100)).ok());
  p.Run(200);
  ASSERT_EQ(p.Drain(*p.b).size(), 1u);
  ASSERT_EQ(p.Drain(*p.a).size(), 1u);  // A now knows B's incarnation

  // B goes dark with two sends in flight, then comes back as a new life.
  p.filter = [&](const Wire& w) { return w.to != p.b_addr; };
  const auto m1 = Pattern(5000, 1), m2 = Pattern(10, 2);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m1, 101)).ok());
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m2, 102)).ok());
  p.Run(50);
  EXPECT_TRUE(p.Drain(*p.a).empty()) << "sends completed while B was dark";
  p.RestartB(0x3333);
  p.filter = nullptr;

  std::vector<Completion> ra;
  RunUntil(p, [&] {
    auto v = p.Drain(*p.a);
    ra.insert(ra.end(), v.begin(), v.end());
    return ra.size() >= 2;
  });
  ASSERT_EQ(ra.size(), 2u);
  std::vector<uint64_t> cookies;
  for (const Completion& c : ra) {
    EXPECT_EQ(c.type, CompletionType::kSendFailed);
    EXPECT_EQ(c.cause, FailureCause::kPeerRestarted)
        << FailureCauseName(c.cause);
    EXPECT_EQ(c.peer, p.b_addr);
    cookies.push_back(c.cookie);
  }
  std::sort(cookies.begin(), cookies.end());
  EXPECT_EQ(cookies, (std::vector<uint64_t>{101, 102}));
  EXPECT_TRUE(p.Drain(*p.b).empty()) << "the new life got the old life's data";
  EXPECT_EQ(p.a->stats().peer_restarts, 1u);

  // New sends reach the new life, exactly once.
  const auto m3 = Pattern(3000, 3);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m3, 103)).ok());
  std::vector<Completion> rb, ra2;
  RunUntil(p, [&] {
    auto vb = p.Drain(*p.b), va = p.Drain(*p.a);
    rb.insert(rb.end(), vb.begin(), vb.end());
    ra2.insert(ra2.end(), va.begin(), va.end());
    return rb.size() >= 1 && ra2.size() >= 1;
  });
  p.Run(500);
  auto extra = p.Drain(*p.b);
  rb.insert(rb.end(), extra.begin(), extra.end());
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].data, m3);
  ASSERT_EQ(ra2.size(), 1u);
  EXPECT_EQ(ra2[0].type, CompletionType::kSendDone);
  EXPECT_EQ(ra2[0].cookie, 103u);
}

TEST(EndpointCoreScenarioTest,
     RestartedPeerSpeakingFirstFailsOldSendsWithPeerRestarted) {
  CorePair p;
  const auto m0 = Pattern(100, 0);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m0, 1)).ok());
  p.Run(200);
  ASSERT_EQ(p.Drain(*p.a).size(), 1u);
  ASSERT_EQ(p.Drain(*p.b).size(), 1u);

  p.filter = [&](const Wire& w) { return w.to != p.b_addr; };
  const auto m1 = Pattern(2000, 1);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m1, 2)).ok());
  p.Run(20);
  p.RestartB(0x4444);
  p.filter = nullptr;
  // The new B sends first: its incarnation is news to A.
  const auto mb = Pattern(700, 9);
  ASSERT_TRUE(p.b->Send(p.now, p.a_addr, Msg(mb, 7)).ok());
  std::vector<Completion> ra;
  RunUntil(p, [&] {
    auto v = p.Drain(*p.a);
    ra.insert(ra.end(), v.begin(), v.end());
    return ra.size() >= 2;
  });
  ASSERT_EQ(ra.size(), 2u);
  size_t failed = 0, received = 0;
  for (const Completion& c : ra) {
    if (c.type == CompletionType::kSendFailed) {
      ++failed;
      EXPECT_EQ(c.cause, FailureCause::kPeerRestarted)
          << FailureCauseName(c.cause);
      EXPECT_EQ(c.cookie, 2u);
    } else if (c.type == CompletionType::kRecv) {
      ++received;
      EXPECT_EQ(c.data, mb);
    }
  }
  EXPECT_EQ(failed, 1u);
  EXPECT_EQ(received, 1u);
  // The new life's SYNC was a claim: A challenged it and B answered.
  EXPECT_EQ(p.a->stats().peer_restarts, 1u);
  EXPECT_GE(p.a->stats().challenges_sent, 1u);
  EXPECT_GE(p.b->stats().challenges_answered, 1u);
}

// ---------------------------------------------------------------------------
// Go-back-N.

TEST(EndpointCoreScenarioTest, GoBackNDeliversEverythingExactlyOnceUnderLoss) {
  ProtocolOptions o;
  o.mode = Mode::kGoBackN;
  CorePair p(o);
  Rng loss(7);
  uint64_t dropped = 0;
  p.filter = [&](const Wire&) {
    if (loss.Bernoulli(0.05)) {
      ++dropped;
      return false;
    }
    return true;
  };
  constexpr int kMessages = 200;
  Rng sizes(11);
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < kMessages; ++i) {
    sent.push_back(Pattern(sizes.Uniform(20000), i));
    ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(sent.back(), i)).ok());
  }
  std::vector<Completion> ra, rb;
  RunUntil(
      p,
      [&] {
        auto va = p.Drain(*p.a), vb = p.Drain(*p.b);
        ra.insert(ra.end(), va.begin(), va.end());
        rb.insert(rb.end(), vb.begin(), vb.end());
        return ra.size() >= kMessages && rb.size() >= kMessages;
      },
      2000);
  p.Run(2000);
  auto vb = p.Drain(*p.b);
  rb.insert(rb.end(), vb.begin(), vb.end());

  ASSERT_EQ(ra.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(CountType(ra, CompletionType::kSendDone),
            static_cast<size_t>(kMessages));
  ASSERT_EQ(rb.size(), static_cast<size_t>(kMessages));
  ExpectEachSentOnce(rb, sent);
  EXPECT_GT(dropped, 0u);
  const EndpointStats sa = p.a->stats(), sb = p.b->stats();
  EXPECT_GT(sa.reliability.retransmits, 0u);
  // The go-back-N receiver discards out-of-order data and NAKs: this really
  // ran the baseline mode, not spraying.
  EXPECT_GT(sb.drops.out_of_order_discarded, 0u);
  EXPECT_EQ(sb.drops.no_memory, 0u);
  for (const PeerStats& ps : p.a->peer_stats(true))
    EXPECT_EQ(ps.paths.size(), 1u);
}

// ---------------------------------------------------------------------------
// The ack's reach.

// Behind a hole at the receiver's cum, an ack can report only kAckReach
// PSNs: the sender must not have new data in flight past them (it could
// neither be acked nor judged lost until the hole closed; with 16 SACK
// words a loopback bulk sender under 1 % loss stalled into an RTO every few
// ms). With no congestion window to stop it, every copy of one early packet
// is dropped for 2 ms while 32 MiB wait to be sent.
TEST(EndpointCoreScenarioTest, NewDataStaysWithinOneAcksReachOfAHole) {
  ProtocolOptions o;
  o.cc = CcAlgorithm::kNone;
  CorePair p(o);
  bool have_hole = false, hole_closed = false;
  wire::Psn hole;
  int data_frames = 0;
  const TimeNs hole_until = p.now + DurationNs::Millis(2);
  uint64_t hole_drops = 0;
  int32_t max_beyond_hole = 0;  // while the hole was open, on the wire
  p.filter = [&](const Wire& w) {
    if (w.bytes.size() < wire::kPreambleSize) return true;
    wire::FrameReader r(
        absl::MakeConstSpan(w.bytes).subspan(wire::kPreambleSize));
    wire::Frame f;
    bool pass = true;
    while (r.Next(&f)) {
      if (f.type != wire::FrameType::kData) continue;
      if (!have_hole && ++data_frames == 20) {
        have_hole = true;
        hole = f.data.psn;
      }
      if (!have_hole || hole_closed) continue;
      max_beyond_hole = std::max(max_beyond_hole, f.data.psn - hole);
      if (f.data.psn == hole) {
        if (p.now < hole_until) {
          ++hole_drops;
          pass = false;
        } else {
          hole_closed = true;
        }
      }
    }
    return pass;
  };
  constexpr int kMessages = 8;
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < kMessages; ++i) {
    sent.push_back(Pattern(4 << 20, i));
    ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(sent.back(), i)).ok());
  }
  std::vector<Completion> ra, rb;
  RunUntil(p, [&] {
    auto va = p.Drain(*p.a), vb = p.Drain(*p.b);
    ra.insert(ra.end(), va.begin(), va.end());
    rb.insert(rb.end(), vb.begin(), vb.end());
    return ra.size() >= kMessages && rb.size() >= kMessages;
  });
  EXPECT_GT(hole_drops, 1u);  // the packet and at least one re-send
  EXPECT_TRUE(hole_closed);
  // The sender went as far as it could, and not one PSN further.
  EXPECT_EQ(max_beyond_hole, static_cast<int32_t>(wire::kAckReach) - 1);
  ASSERT_EQ(CountType(ra, CompletionType::kSendDone),
            static_cast<size_t>(kMessages));
  ASSERT_EQ(rb.size(), static_cast<size_t>(kMessages));
  ExpectEachSentOnce(rb, sent);
}

// ---------------------------------------------------------------------------
// The 0-byte message.

TEST(EndpointCoreScenarioTest, ZeroByteMessageIsDeliveredAndCompleted) {
  CorePair p;
  const std::vector<uint8_t> empty;
  const auto before = Pattern(3000, 1), after = Pattern(1, 2);
  // Alone, and on an ordered stream between two others.
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(empty, 1)).ok());
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(before, 2, 5)).ok());
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(empty, 3, 5)).ok());
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(after, 4, 5)).ok());
  p.Run(500);
  auto rb = p.Drain(*p.b), ra = p.Drain(*p.a);
  ASSERT_EQ(rb.size(), 4u);
  ASSERT_EQ(ra.size(), 4u);
  EXPECT_EQ(CountType(ra, CompletionType::kSendDone), 4u);
  std::vector<std::vector<uint8_t>> stream5;
  size_t unordered_empty = 0;
  for (const Completion& c : rb) {
    ASSERT_EQ(c.type, CompletionType::kRecv);
    if (c.stream == 5) {
      stream5.push_back(c.data);
    } else if (c.data.empty()) {
      ++unordered_empty;
    }
  }
  EXPECT_EQ(unordered_empty, 1u);
  EXPECT_EQ(stream5, (std::vector<std::vector<uint8_t>>{before, empty, after}));
}

TEST(EndpointCoreScenarioTest, SizesAroundFragmentBoundariesArriveByteExact) {
  CorePair p;
  const uint32_t mss = p.a->mss();
  std::vector<uint32_t> sizes;
  for (uint32_t k = 1; k <= 3; ++k) {
    for (int d = -1; d <= 1; ++d) sizes.push_back(k * mss + d);
  }
  std::vector<std::vector<uint8_t>> sent;
  for (size_t i = 0; i < sizes.size(); ++i) {
    sent.push_back(Pattern(sizes[i], static_cast<uint32_t>(i)));
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, Msg(sent.back(), i, /*stream=*/2)).ok());
  }
  p.Run(1000);
  auto rb = p.Drain(*p.b);
  ASSERT_EQ(rb.size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(rb[i].data, sent[i])
        << "size " << sizes[i] << " (mss " << mss << ")";
  }
  EXPECT_EQ(CountType(p.Drain(*p.a), CompletionType::kSendDone), sizes.size());
}

// ---------------------------------------------------------------------------
// Limits: exact status codes.

TEST(EndpointCoreScenarioTest, MessageOverMaxMessageBytesIsInvalidArgument) {
  ProtocolOptions o;
  o.max_message_bytes = 4096;
  CorePair p(o);
  const auto too_big = Pattern(4097, 1), max = Pattern(4096, 2);
  absl::Status s = p.a->Send(p.now, p.b_addr, Msg(too_big, 1));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("max_message_bytes"), absl::string_view::npos)
      << s;
  EXPECT_TRUE(p.a->Send(p.now, p.b_addr, Msg(max, 2)).ok());
  p.Run(500);
  auto rb = p.Drain(*p.b);
  ASSERT_EQ(rb.size(), 1u) << "the refused message must not be sent";
  EXPECT_EQ(rb[0].data, max);
}

TEST(EndpointCoreScenarioTest,
     SendsPastMaxPendingSendsAreResourceExhaustedUntilCompleted) {
  ProtocolOptions o;
  o.max_pending_sends = 4;
  CorePair p(o);
  const auto m = Pattern(100, 1);
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m, i)).ok());
  absl::Status s = p.a->Send(p.now, p.b_addr, Msg(m, 4));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  // Also across peers: the limit is per endpoint.
  s = p.a->Send(p.now, NetAddr::Ipv4(0x0a000009, 7000), Msg(m, 5));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  p.Run(500);
  EXPECT_EQ(p.Drain(*p.a).size(), 4u);
  EXPECT_EQ(p.Drain(*p.b).size(), 4u);
  // Retryable: once the sends completed, there is room again.
  EXPECT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m, 6)).ok());
}

TEST(EndpointCoreScenarioTest,
     SendAfterCloseIsFailedPreconditionAndBadAddressInvalidArgument) {
  CorePair p;
  const auto m = Pattern(10, 1);
  absl::Status s = p.a->Send(p.now, NetAddr{}, Msg(m, 1));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  s = p.a->Send(p.now, NetAddr::Ipv4(0x0a000002, 0), Msg(m, 1));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  // Addresses no peer can have: the send would only fail at peer_timeout.
  for (const char* nobody : {"0.0.0.0:9", "[::]:9", "224.0.0.1:9",
                             "255.255.255.255:9", "[ff02::1]:9"}) {
    s = p.a->Send(p.now, *NetAddr::Parse(nobody), Msg(m, 1));
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << nobody << ": " << s;
  }
  EXPECT_TRUE(p.a->peer_stats(false).empty());
  p.a->Close(p.now);
  s = p.a->Send(p.now, p.b_addr, Msg(m, 1));
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
}

// ---------------------------------------------------------------------------
// Peer table.

TEST(EndpointCoreScenarioTest,
     FullPeerTableIsResourceExhaustedUntilAPeerGoesIdle) {
  ProtocolOptions o;
  o.max_peers = 2;
  o.peer_timeout = DurationNs::Millis(200);
  CorePair p(o);
  const auto m = Pattern(100, 1);
  const NetAddr x1 = NetAddr::Ipv4(0x0a000011, 7000);
  const NetAddr x2 = NetAddr::Ipv4(0x0a000012, 7000);
  const NetAddr x3 = NetAddr::Ipv4(0x0a000013, 7000);
  // Two peers that never answer hold their slots while they have sends.
  ASSERT_TRUE(p.a->Send(p.now, x1, Msg(m, 1)).ok());
  ASSERT_TRUE(p.a->Send(p.now, x2, Msg(m, 2)).ok());
  absl::Status s = p.a->Send(p.now, x3, Msg(m, 3));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find("peer table full"), absl::string_view::npos) << s;
  EXPECT_EQ(p.a->stats().peers, 2u);
  // A second message to a known peer still goes in.
  EXPECT_TRUE(p.a->Send(p.now, x1, Msg(m, 4)).ok());

  // After peer_timeout the silent peers' sends fail; they become idle and
  // evictable, so x3 gets a slot.
  TimeNs t = p.now;
  std::vector<Completion> ra;
  for (int i = 0; i < 1000 && ra.size() < 3; ++i) {
    t += DurationNs::Millis(1);
    p.a->OnTimer(t);
    TxBatch sink(64, 9000);  // what A sends to x1/x2 goes nowhere
    while (p.a->PollTx(t, &sink) > 0) sink.clear();
    p.a->PollCompletions(&ra, SIZE_MAX);
  }
  ASSERT_EQ(ra.size(), 3u);
  for (const Completion& c : ra) {
    EXPECT_EQ(c.type, CompletionType::kSendFailed);
    EXPECT_EQ(c.cause, FailureCause::kPeerUnreachable)
        << FailureCauseName(c.cause);
  }
  EXPECT_GE(t - p.now, o.peer_timeout);
  t += o.peer_timeout;  // an idle context is evictable once idle that long
  s = p.a->Send(t, x3, Msg(m, 5));
  EXPECT_TRUE(s.ok()) << s;
  const EndpointStats st = p.a->stats();
  EXPECT_EQ(st.peers, 2u);
  EXPECT_EQ(st.peers_evicted, 1u);
}

TEST(EndpointCoreScenarioTest,
     InboundFromNewPeerWithFullTableIsDroppedAndCounted) {
  ProtocolOptions o;
  o.max_peers = 1;
  o.peer_timeout = DurationNs::Millis(50);
  CorePair p(o);
  // B's only slot is taken by a busy peer that never answers.
  const NetAddr x = NetAddr::Ipv4(0x0a000099, 7000);
  const auto m = Pattern(100, 1);
  ASSERT_TRUE(p.b->Send(p.now, x, Msg(m, 1)).ok());
  p.filter = [&](const Wire& w) {
    return w.to == p.a_addr || w.to == p.b_addr;
  };
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m, 2)).ok());
  p.Run(100);
  EXPECT_GT(p.b->stats().drops.no_peer_slot, 0u);
  EXPECT_TRUE(p.Drain(*p.b).empty());
  EXPECT_EQ(p.b->stats().peers, 1u);
}

// Regression: when a receiver evicts a sender's idle context (peer table
// full), the sender's next message must still be delivered. (It used to
// fail with kPeerEvicted.) Contexts are evictable only after peer_timeout of
// idleness, so whatever the sender sends after an eviction was never seen by
// the old context and is safely resent in a new session on NEEDSYNC.
TEST(EndpointCoreScenarioTest,
     SenderEvictedIdleAtReceiverStillDeliversItsNextMessage) {
  ProtocolOptions o;
  o.max_peers = 1;
  o.peer_timeout = DurationNs::Millis(20);
  CorePair p(o);
  p.filter = [&](const Wire& w) {
    return w.to == p.a_addr || w.to == p.b_addr;
  };
  const auto m1 = Pattern(2000, 1), m2 = Pattern(3000, 2);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m1, 1)).ok());
  p.Run(200);
  ASSERT_EQ(p.Drain(*p.a).size(), 1u);
  ASSERT_EQ(p.Drain(*p.b).size(), 1u);
  // B needs its only slot for another peer: A's idle context is evicted.
  // That peer never answers, so after peer_timeout its slot is idle again.
  const NetAddr x = NetAddr::Ipv4(0x0a000099, 7000);
  p.now += o.peer_timeout;  // idle that long, A's context is evictable
  ASSERT_TRUE(p.b->Send(p.now, x, Msg(m1, 9)).ok());
  EXPECT_EQ(p.b->stats().peers_evicted, 1u);
  std::vector<Completion> rb;
  RunUntil(
      p,
      [&] {
        auto v = p.Drain(*p.b);
        rb.insert(rb.end(), v.begin(), v.end());
        return !rb.empty();
      },
      100, DurationNs::Micros(100));
  ASSERT_EQ(rb.size(), 1u);
  ASSERT_EQ(rb[0].cause, FailureCause::kPeerUnreachable);

  // A knows nothing of that: its next message must still arrive. The
  // receiver forgot only an idle context (everything delivered and acked).
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(m2, 2)).ok());
  std::vector<Completion> ra;
  rb.clear();
  RunUntil(
      p,
      [&] {
        auto va = p.Drain(*p.a), vb = p.Drain(*p.b);
        ra.insert(ra.end(), va.begin(), va.end());
        rb.insert(rb.end(), vb.begin(), vb.end());
        return !ra.empty() && !rb.empty();
      },
      100, DurationNs::Micros(100));
  ASSERT_EQ(ra.size(), 1u);
  EXPECT_EQ(ra[0].type, CompletionType::kSendDone)
      << "failed: " << FailureCauseName(ra[0].cause);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].data, m2);
}

// ---------------------------------------------------------------------------
// Receive credit.
//
// Regression (found by this test, fixed in PeerSender::OnAck): when the
// sender's credit ran out exactly at a datagram boundary, WriteDataFrames
// never saw the block, so credit_blocked_ stayed false, no probe was ever
// sent, and after peer_timeout every queued send failed with
// kPeerUnreachable although the receiver had acked everything and was only
// slow to poll. The receiver here stalls for 3x peer_timeout.

// A reader that stalled polls again: runs until B has every message of
// `sent` (sent on stream 1, so in order, once) and A a completion for each
// (appended to `ra`); every send must be done.
void ExpectReaderCatchesUp(CorePair& p,
                           const std::vector<std::vector<uint8_t>>& sent,
                           std::vector<Completion>* ra) {
  const size_t n = sent.size();
  std::vector<Completion> rb;
  RunUntil(
      p,
      [&] {
        auto vb = p.Drain(*p.b), va = p.Drain(*p.a);
        rb.insert(rb.end(), vb.begin(), vb.end());
        ra->insert(ra->end(), va.begin(), va.end());
        return rb.size() >= n && ra->size() >= n;
      },
      500);
  ASSERT_EQ(rb.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(rb[i].data, sent[i]) << "message " << i;
  }
  ASSERT_EQ(ra->size(), n);
  EXPECT_EQ(CountType(*ra, CompletionType::kSendDone), n);
}

// The queue limit holds even with the default, much larger receive budget:
// credit never reaches past the room left in the application's queue (it
// did: a reader that stopped polling took a whole 64 MiB budget per peer).
TEST(EndpointCoreScenarioTest, QueueLimitBoundsWhatASlowReaderHolds) {
  ProtocolOptions o;
  o.receive_queue_bytes = 1 << 20;  // the budget stays at 64 MiB
  CorePair p(o);
  constexpr int kMessages = 400;
  constexpr size_t kSize = 16 << 10;
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < kMessages; ++i) {
    sent.push_back(Pattern(kSize, i));
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, Msg(sent.back(), i, /*stream=*/1)).ok());
  }
  std::vector<Completion> ra;
  const TimeNs start = p.now;
  while (p.now - start < DurationNs::Millis(50)) {
    p.Run(100, DurationNs::Micros(50));
    auto v = p.Drain(*p.a);
    ra.insert(ra.end(), v.begin(), v.end());
  }
  const uint64_t held = p.b->stats().messages_received;
  // The queue, plus at most a session's initial credit granted before it
  // filled, plus the message that crossed the line.
  EXPECT_LE(held * kSize, o.receive_queue_bytes +
                              wire::kInitialCreditPackets * p.a->mss() + kSize);
  EXPECT_GT(held * kSize, o.receive_queue_bytes / 2) << "barely moved";
  // Then the reader catches up: everything arrives once, every send done.
  ExpectReaderCatchesUp(p, sent, &ra);
}

TEST(EndpointCoreScenarioTest,
     ReceiverThatDoesNotPollIsNeverOverrunAndGetsEverythingLater) {
  ProtocolOptions o;
  o.receive_queue_bytes = 64 << 10;
  o.receive_budget_bytes = 64 << 10;
  o.peer_timeout = DurationNs::Millis(200);
  CorePair p(o);
  constexpr int kMessages = 300;
  constexpr size_t kSize = 16 << 10;
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < kMessages; ++i) {
    sent.push_back(Pattern(kSize, i));
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, Msg(sent.back(), i, /*stream=*/1)).ok());
  }
  // B does not poll for well over peer_timeout of simulated time.
  const TimeNs start = p.now;
  std::vector<Completion> ra;
  while (p.now - start < DurationNs::Millis(600)) {
    p.Run(100, DurationNs::Micros(50));
    auto v = p.Drain(*p.a);
    ra.insert(ra.end(), v.begin(), v.end());
  }
  const EndpointStats stalled_b = p.b->stats();
  const uint64_t held = stalled_b.messages_received;
  EXPECT_LT(held, static_cast<uint64_t>(kMessages))
      << "the sender did not wait";
  // What B holds unpolled is bounded by the queue limit plus the credit it
  // had already granted (at most the larger of the receive budget and the
  // initial credit of a session) plus one message.
  const uint64_t bound =
      o.receive_queue_bytes +
      std::max<uint64_t>(o.receive_budget_bytes,
                         wire::kInitialCreditPackets * p.a->mss()) +
      kSize;
  EXPECT_LE(held * kSize, bound);
  EXPECT_EQ(stalled_b.drops.no_memory, 0u);
  EXPECT_EQ(stalled_b.drops.beyond_window, 0u);
  for (const Completion& c : ra) {
    EXPECT_NE(c.type, CompletionType::kSendFailed)
        << "a send failed (" << FailureCauseName(c.cause)
        << ") while the receiver was merely slow";
  }
  ASSERT_EQ(p.a->peer_stats(false).size(), 1u);
  EXPECT_GT(p.a->peer_stats(false)[0].credit_blocked, 0u);

  // Now B polls: everything arrives, in order (stream 1), once.
  ExpectReaderCatchesUp(p, sent, &ra);
  EXPECT_EQ(p.b->stats().drops.no_memory, 0u);
}

// Receive credit is granted in packets (budget / mss beyond cum, and 256
// packets at a session's start), but the reassembler reserves a message's
// whole length at its first fragment. With one message incomplete (here one
// lost packet) and credit letting fragments of the next messages in, each
// new partial message reserves its full length: credited fragments must
// still never be refused for memory (the reassembler's limit allows for
// what credit can bring in beyond the budget).
TEST(EndpointCoreScenarioTest, CreditedFragmentsAreNeverRefusedForMemory) {
  ProtocolOptions o;
  o.receive_budget_bytes = 64 << 10;
  CorePair p(o);
  bool dropped_one = false;
  uint64_t data_datagrams = 0;
  p.filter = [&](const Wire& w) {
    if (w.to != p.b_addr || w.bytes.size() < 1000) return true;  // acks etc.
    if (++data_datagrams == 2 && !dropped_one) {
      dropped_one = true;  // message 0 stays incomplete for a while
      return false;
    }
    return true;
  };
  constexpr int kMessages = 6;
  std::vector<std::vector<uint8_t>> sent;
  for (int i = 0; i < kMessages; ++i) {
    sent.push_back(Pattern(40 << 10, i));
    ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(sent.back(), i)).ok());
  }
  std::vector<Completion> rb;
  RunUntil(p, [&] {
    auto v = p.Drain(*p.b);
    rb.insert(rb.end(), v.begin(), v.end());
    return rb.size() >= kMessages;
  });
  ASSERT_TRUE(dropped_one);
  ASSERT_EQ(rb.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(p.b->stats().drops.no_memory, 0u)
      << "credited fragments were dropped for reassembly memory";
}

TEST(EndpointCoreScenarioTest, MessageLargerThanTheReceiveBudgetArrives) {
  ProtocolOptions o;
  o.receive_budget_bytes = 64 << 10;
  o.max_message_bytes = 1 << 20;
  CorePair p(o);
  const std::vector<uint8_t> big = Pattern(1 << 20, 7);
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr, Msg(big, 1)).ok());
  std::vector<Completion> rb;
  RunUntil(p, [&] {
    auto v = p.Drain(*p.b);
    rb.insert(rb.end(), v.begin(), v.end());
    return !rb.empty();
  });
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].data, big);
  EXPECT_EQ(p.b->stats().drops.no_memory, 0u);
}

}  // namespace
}  // namespace braid::endpoint

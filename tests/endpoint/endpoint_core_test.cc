#include "endpoint/endpoint_core.h"

#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

TEST(EndpointCoreTest, SmallMessageIsDeliveredByteExactAndCompleted) {
  CorePair p;
  auto msg = Pattern(100, 3);
  ASSERT_TRUE(
      p.a->Send(p.now, p.b_addr, OutMessage::Copy(msg.data(), 100)).ok());
  p.Run(100);
  auto rb = p.Drain(*p.b);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].type, CompletionType::kRecv);
  EXPECT_EQ(rb[0].data, msg);
  auto ra = p.Drain(*p.a);
  ASSERT_EQ(ra.size(), 1u);
  EXPECT_EQ(ra[0].type, CompletionType::kSendDone);
}

}  // namespace
}  // namespace braid::endpoint

namespace braid::endpoint {
namespace {

// Regression: a sender that evicts a peer and meets it again starts a new
// session; the receiver must not mistake it for its old one (which would ack
// new PSNs as duplicates and report undelivered messages as done).
TEST(EndpointCoreTest, SenderThatForgotThePeerStartsAFreshSession) {
  ProtocolOptions proto;
  proto.max_peers = 1;
  proto.peer_timeout = DurationNs::Millis(1);
  testing::CorePair p(proto);
  const NetAddr c_addr = NetAddr::Ipv4(0x0a000003, 7000);
  p.filter = [&](const testing::Wire& w) { return w.to != c_addr; };
  std::vector<uint8_t> m(20000, 7);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, OutMessage::Copy(m.data(), 20000)).ok());
  }
  p.Run(200);
  EXPECT_EQ(p.Drain(*p.b).size(), 5u);
  EXPECT_EQ(p.Drain(*p.a).size(), 5u);
  // A talks to C (unreachable) — B's idle peer entry is evicted for it; the
  // send to C fails after peer_timeout, freeing the slot again.
  p.now += proto.peer_timeout;  // B's context at A is now evictable
  ASSERT_TRUE(p.a->Send(p.now, c_addr, OutMessage::Copy(m.data(), 100)).ok());
  p.Run(400);
  auto failed = p.Drain(*p.a);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].type, CompletionType::kSendFailed);
  p.now += proto.peer_timeout;  // and now C's
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, OutMessage::Copy(m.data(), 20000)).ok());
  }
  p.Run(400);
  size_t done = 0;
  for (const Completion& c : p.Drain(*p.a))
    done += c.type == CompletionType::kSendDone;
  EXPECT_EQ(done, 10u);
  EXPECT_EQ(p.Drain(*p.b).size(), 10u);  // every "done" message really arrived
}

}  // namespace
}  // namespace braid::endpoint

namespace braid::endpoint {
namespace {

// The largest default message (64 MiB) is segmented, reassembled by direct
// placement and delivered byte-exact, with 1 % of datagrams dropped.
TEST(EndpointCoreTest, SixtyFourMebibyteMessageArrivesByteExactUnderLoss) {
  ProtocolOptions proto;
  proto.receive_budget_bytes = 80ull << 20;  // room for the whole message
  testing::CorePair p(proto, 9000);
  uint64_t n = 0;
  p.filter = [&](const testing::Wire& w) { return ++n % 100 != 0; };
  std::vector<uint8_t> big(64u << 20);
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  }
  ASSERT_TRUE(p.a->Send(p.now, p.b_addr,
                        OutMessage::Borrow(big.data(),
                                           static_cast<uint32_t>(big.size())))
                  .ok());
  std::vector<Completion> rb, ra;
  for (int i = 0; i < 200 && (rb.empty() || ra.empty()); ++i) {
    p.Run(1000);
    p.b->PollCompletions(&rb, SIZE_MAX);
    p.a->PollCompletions(&ra, SIZE_MAX);
  }
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_TRUE(rb[0].data == big);
  ASSERT_EQ(ra.size(), 1u);
  EXPECT_EQ(ra[0].type, CompletionType::kSendDone);
}

}  // namespace
}  // namespace braid::endpoint

namespace braid::endpoint {
namespace {

// Moves every datagram `src` builds now to `dst`; returns how many.
size_t Deliver(EndpointCore& src, EndpointCore& dst, const NetAddr& src_addr,
               TimeNs now, TxBatch* batch, bool hold_acks) {
  batch->clear();
  const size_t n = src.PollTx(now, batch, hold_acks);
  for (const auto& p : batch->packets()) {
    dst.OnDatagram(now, src_addr, absl::MakeConstSpan(p.data, p.len), false);
  }
  return n;
}

// A tail probe whose first copy arrived (so the ack for it was lost): the
// receiver answers on two different paths; normal acks go once.
TEST(EndpointCoreTest, AckAnsweringARepairIsSentOnTwoPaths) {
  for (bool dup_acks : {true, false}) {
    ProtocolOptions proto;
    proto.duplicate_urgent_acks = dup_acks;
    CorePair p(proto);
    TxBatch batch(16, 1472);
    const auto msg = Pattern(100, 9);
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, OutMessage::Copy(msg.data(), 100)).ok());
    ASSERT_EQ(Deliver(*p.a, *p.b, p.a_addr, p.now, &batch, false), 1u);
    // B's ack for it (a burst tail: one ack, not urgent) is lost.
    batch.clear();
    ASSERT_EQ(p.b->PollTx(p.now, &batch), 1u);
    // A's tail probe re-sends the message; B already has it.
    size_t resent = 0;
    for (int i = 0; i < 100 && resent == 0; ++i) {
      p.now = p.a->NextWake();
      p.a->OnTimer(p.now);
      resent = Deliver(*p.a, *p.b, p.a_addr, p.now, &batch, false);
    }
    ASSERT_EQ(resent, 1u);
    ASSERT_EQ(p.a->stats().reliability.retransmits_tail_probe, 1u);
    batch.clear();
    const size_t acks = p.b->PollTx(p.now, &batch);
    if (dup_acks) {
      ASSERT_EQ(acks, 2u);
      EXPECT_NE(batch.packets()[0].entropy, batch.packets()[1].entropy);
      EXPECT_EQ(std::vector<uint8_t>(batch.packets()[0].data + 4,
                                     batch.packets()[0].data + 20),
                std::vector<uint8_t>(batch.packets()[1].data + 4,
                                     batch.packets()[1].data + 20))
          << "the same ack header (type, flags, incarnations)";
    } else {
      EXPECT_EQ(acks, 1u);
    }
    for (const auto& t : batch.packets()) {
      p.a->OnDatagram(p.now, p.b_addr, absl::MakeConstSpan(t.data, t.len),
                      false);
    }
    auto ra = p.Drain(*p.a);
    ASSERT_EQ(ra.size(), 1u);
    EXPECT_EQ(ra[0].type, CompletionType::kSendDone);
  }
}

// Hands A's batch (second pieces included) to B, lets 20 us pass, brings
// B's answers back to A, and collects both sides' completions.
void ExchangeBatch(CorePair& p, TxBatch& batch, std::vector<Completion>* ra,
                   std::vector<Completion>* rb) {
  for (const auto& t : batch.packets()) {
    std::vector<uint8_t> wire(t.size());
    t.CopyTo(wire.data());
    p.b->OnDatagram(p.now, p.a_addr, wire, false);
  }
  p.now = p.now + DurationNs(20000);
  Deliver(*p.b, *p.a, p.b_addr, p.now, &batch, false);
  p.b->PollCompletions(rb, SIZE_MAX);
  p.a->PollCompletions(ra, SIZE_MAX);
}

// Sends `big` (borrowed) and a 100-byte message through a PollTx with
// uncopied payloads allowed; returns how many datagrams carried a second
// piece. Both messages must arrive byte-exact and complete.
size_t SendWithUncopiedPayloads(CorePair& p, TxBatch& batch,
                                const std::vector<uint8_t>& big) {
  const auto small = Pattern(100, 22);
  EXPECT_TRUE(
      p.a->Send(p.now, p.b_addr, OutMessage::Borrow(big.data(), big.size()))
          .ok());
  EXPECT_TRUE(
      p.a->Send(p.now, p.b_addr, OutMessage::Borrow(small.data(), 100)).ok());
  std::vector<Completion> ra, rb;
  size_t tails = 0;
  for (int i = 0; i < 2000 && ra.size() < 2; ++i) {
    batch.clear();
    p.a->PollTx(p.now, &batch, false, /*uncopied_payloads=*/true);
    for (const auto& t : batch.packets()) {
      if (t.tail_len > 0) {
        ++tails;
        // Never a small payload, and the tail is the message's own memory.
        EXPECT_GE(t.tail_len, CoreConfig().min_uncopied_payload);
        EXPECT_TRUE(t.tail >= big.data() && t.tail < big.data() + big.size());
      }
    }
    ExchangeBatch(p, batch, &ra, &rb);
  }
  EXPECT_EQ(rb.size(), 2u);
  if (rb.size() == 2) {
    EXPECT_TRUE(rb[0].data == big);
    EXPECT_TRUE(rb[1].data == small);
  }
  EXPECT_EQ(ra.size(), 2u);
  return tails;
}

// Jumbo payloads leave uncopied (as each packet's second piece); the
// receiver sees the same bytes.
TEST(EndpointCoreTest, UncopiedPayloadsArriveByteExact) {
  CorePair p({}, 8972);
  TxBatch batch(512, 8972);
  const auto big = Pattern(2000000, 21);
  const size_t tails = SendWithUncopiedPayloads(p, batch, big);
  EXPECT_GT(tails, 200u);  // 2 MB in ~8.9 KB payloads
}

// Payloads of a 1500-byte MTU are below the limit: copied, never described.
TEST(EndpointCoreTest, PayloadsBelowTheLimitAreCopiedIntoTheDatagram) {
  CorePair p;
  TxBatch batch(512, 1472);
  const auto big = Pattern(200000, 24);
  EXPECT_EQ(SendWithUncopiedPayloads(p, batch, big), 0u);
}

// A bulk sender's spray runs (one path, spray_run datagrams each) are what
// the UDP backend turns into GSO super-datagrams. A run split over two
// batches leaves as two shorter sends, so the fast path ends a batch early
// rather than start a run it cannot hold whole.
TEST(EndpointCoreTest, BulkSprayRunsAreNeverSplitAcrossBatches) {
  ProtocolOptions proto;
  proto.spray_run = DefaultSprayRun(1472);  // 44
  CorePair p(proto);
  const auto big = Pattern(1 << 20, 25);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, OutMessage::Borrow(big.data(), big.size()))
            .ok());
  }
  TxBatch batch(256, 1472);  // 256 = 5 runs of 44 and 36 slots
  std::vector<Completion> ra, rb;
  size_t batches = 0, runs = 0, full_runs = 0, straddles = 0;
  wire::Entropy last_entropy = 0;
  bool have_last = false;
  for (int i = 0; i < 4000 && ra.size() < 4; ++i) {
    batch.clear();
    p.a->PollTx(p.now, &batch, false, false);
    const auto pkts = batch.packets();
    if (!pkts.empty()) ++batches;
    // Runs of consecutive datagrams on one entropy, as the backend sees them.
    for (size_t k = 0; k < pkts.size();) {
      size_t e = k;
      while (e < pkts.size() && pkts[e].entropy == pkts[k].entropy) ++e;
      ++runs;
      if (e - k == proto.spray_run) ++full_runs;
      if (k == 0 && have_last && pkts[k].entropy == last_entropy) {
        ++straddles;
      }
      k = e;
    }
    if (!pkts.empty()) {
      last_entropy = pkts.back().entropy;
      have_last = true;
    }
    ExchangeBatch(p, batch, &ra, &rb);
  }
  ASSERT_EQ(rb.size(), 4u);
  for (const Completion& c : rb) EXPECT_TRUE(c.data == big);
  EXPECT_EQ(ra.size(), 4u);
  EXPECT_GT(batches, 10u);
  EXPECT_EQ(straddles, 0u) << runs << " runs in " << batches << " batches";
  // 4 MiB is ~2900 datagrams, ~66 runs: all but the few cut by the window
  // or the end are whole.
  EXPECT_GE(full_runs * 10, runs * 8) << full_runs << " of " << runs;
}

// A kept batch stops pointing into message buffers once materialized.
TEST(TxBatchTest, MaterializeCopiesSecondPiecesIntoTheirSlots) {
  TxBatch batch(4, 1472);
  const auto payload = Pattern(1000, 23);
  for (int i = 0; i < 3; ++i) {
    absl::Span<uint8_t> slot = batch.next_slot();
    for (int k = 0; k < 40; ++k) slot[k] = static_cast<uint8_t>(i);
    batch.Commit(NetAddr::Ipv4(0x0a000002, 7000), 0, 40, true,
                 i == 1 ? absl::Span<const uint8_t>()
                        : absl::MakeConstSpan(payload).subspan(i * 100));
  }
  // Regrouping reorders the packets; each must still find its own slot.
  std::swap(batch.mutable_packets()[0], batch.mutable_packets()[2]);
  std::vector<std::vector<uint8_t>> before;
  for (const auto& t : batch.packets()) {
    before.emplace_back(t.size());
    t.CopyTo(before.back().data());
  }
  batch.Materialize(0);
  for (size_t i = 0; i < 3; ++i) {
    const auto& t = batch.packets()[i];
    EXPECT_EQ(t.tail_len, 0u);
    EXPECT_EQ(std::vector<uint8_t>(t.data, t.data + t.len), before[i]);
  }
}

// A ping-pong: the ack for each message rides on the reply. Holding acks
// builds no ack-only datagram, and the reply datagram carries the ack (the
// sender's message completes from it).
TEST(EndpointCoreTest, AckRidesOnTheReplyWhenAcksAreHeld) {
  CorePair p;
  TxBatch batch(16, 1472);
  const auto ping = Pattern(64, 1);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, OutMessage::Copy(ping.data(), 64)).ok());
    ASSERT_EQ(Deliver(*p.a, *p.b, p.a_addr, p.now, &batch, true), 1u);
    // B receives the ping and, from round 1 on, the ack of its last reply
    // (it rode on this ping).
    size_t b_recv = 0, b_done = 0;
    for (const Completion& c : p.Drain(*p.b)) {
      if (c.type == CompletionType::kRecv) {
        ++b_recv;
        EXPECT_EQ(c.data, ping);
      }
      b_done += c.type == CompletionType::kSendDone;
    }
    EXPECT_EQ(b_recv, 1u);
    EXPECT_EQ(b_done, round == 0 ? 0u : 1u);
    // B owes A an ack, but holds it for the reply.
    EXPECT_EQ(Deliver(*p.b, *p.a, p.b_addr, p.now, &batch, true), 0u);
    const uint64_t acks_before = p.a->stats().acks_received;
    ASSERT_TRUE(
        p.b->Send(p.now, p.a_addr, OutMessage::Copy(ping.data(), 64)).ok());
    ASSERT_EQ(Deliver(*p.b, *p.a, p.b_addr, p.now, &batch, true), 1u);
    EXPECT_EQ(p.a->stats().acks_received, acks_before + 1);
    size_t done = 0, recv = 0;
    for (const Completion& c : p.Drain(*p.a)) {
      done += c.type == CompletionType::kSendDone;
      recv += c.type == CompletionType::kRecv;
    }
    EXPECT_EQ(done, 1u);
    EXPECT_EQ(recv, 1u);
  }
  // Without holding, the owed ack goes out alone.
  EXPECT_EQ(Deliver(*p.a, *p.b, p.a_addr, p.now, &batch, false), 1u);
  EXPECT_EQ(p.b->stats().acks_received, 3u);
  EXPECT_EQ(p.b->stats().datagrams_received, 4u);  // 3 pings, 1 ack
  EXPECT_EQ(p.a->stats().datagrams_received, 3u);
}

// A pending (not yet due) ack rides behind a small data frame instead of
// waiting for its own datagram.
TEST(EndpointCoreTest, PendingAckRidesBehindSmallData) {
  ProtocolOptions proto;
  proto.ack_every_packets = 64;  // nothing forces an ack by count
  proto.ack_delay = DurationNs::Millis(10);
  CorePair p(proto);
  TxBatch batch(16, 1472);
  std::vector<uint8_t> big(4000, 5), small(64, 6);
  ASSERT_TRUE(
      p.b->Send(p.now, p.a_addr, OutMessage::Copy(big.data(), 4000)).ok());
  batch.clear();
  ASSERT_EQ(p.b->PollTx(p.now, &batch), 3u);
  // Only the first datagram arrives: not the tail of a burst, so A's ack
  // for it is pending, not due.
  const auto& first = batch.packets()[0];
  p.a->OnDatagram(p.now, p.b_addr, absl::MakeConstSpan(first.data, first.len),
                  false);
  ASSERT_TRUE(
      p.a->Send(p.now, p.b_addr, OutMessage::Copy(small.data(), 64)).ok());
  ASSERT_EQ(Deliver(*p.a, *p.b, p.a_addr, p.now, &batch, false), 1u);
  EXPECT_EQ(p.b->stats().acks_received, 1u);
  EXPECT_EQ(p.a->stats().datagrams_sent, 1u);
}

}  // namespace
}  // namespace braid::endpoint

namespace braid::endpoint {
namespace {

// Messages that fit in one datagram are not split across two to fill the
// first: each goes whole (one fragment, no reassembly), several to a
// datagram when they fit. Larger messages still fill every datagram.
TEST(EndpointCoreTest, MessagesThatFitADatagramAreNotSplit) {
  CorePair p;
  TxBatch batch(64, 1472);
  // The payloads B has received since the last call.
  auto received = [&] {
    std::vector<std::vector<uint8_t>> out;
    for (Completion& c : p.Drain(*p.b)) {
      if (c.type == CompletionType::kRecv) out.push_back(std::move(c.data));
    }
    return out;
  };
  const auto kilo = Pattern(1000, 2);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, OutMessage::Copy(kilo.data(), 1000)).ok());
  }
  // Two 1000-byte messages never fit one 1472-byte datagram: one each.
  EXPECT_EQ(Deliver(*p.a, *p.b, p.a_addr, p.now, &batch, false), 10u);
  EXPECT_EQ(p.a->stats().packets_sent, 10u) << "one fragment per message";
  EXPECT_EQ(received(), std::vector<std::vector<uint8_t>>(10, kilo));

  // 600-byte messages: two per datagram, the third starts the next.
  const auto six = Pattern(600, 3);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(
        p.a->Send(p.now, p.b_addr, OutMessage::Copy(six.data(), 600)).ok());
  }
  const uint64_t frames_before = p.a->stats().packets_sent;
  EXPECT_EQ(Deliver(*p.a, *p.b, p.a_addr, p.now, &batch, false), 3u);
  EXPECT_EQ(p.a->stats().packets_sent - frames_before, 6u);

  // A 4000-byte message behind a 600-byte one fills the rest of its
  // datagram: 4600 bytes in 4 datagrams, not 5.
  const auto big = Pattern(4000, 4);
  ASSERT_TRUE(
      p.a->Send(p.now, p.b_addr, OutMessage::Copy(six.data(), 600)).ok());
  ASSERT_TRUE(
      p.a->Send(p.now, p.b_addr, OutMessage::Copy(big.data(), 4000)).ok());
  EXPECT_EQ(Deliver(*p.a, *p.b, p.a_addr, p.now, &batch, false), 4u);
  std::vector<std::vector<uint8_t>> want(7, six);
  want.push_back(big);
  EXPECT_EQ(received(), want);
}

}  // namespace
}  // namespace braid::endpoint

// Ack deferral (EndpointCore::set_defer_acks): an ack that arrives with
// data waits until the answer to that data has been sent, and is applied by
// ApplyDeferredAcks or by whatever needs it first.
#include <vector>

#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "tests/endpoint/core_pair.h"

namespace braid::endpoint {
namespace {

using testing::CorePair;

using Datagrams = std::vector<std::vector<uint8_t>>;

// Everything `src` sends now, as bytes.
Datagrams Take(EndpointCore& src, TimeNs now, bool hold_acks = false) {
  Datagrams out;
  TxBatch batch(64, 9000);
  while (src.PollTx(now, &batch, hold_acks) > 0) {
    for (const backend::TxPacket& p : batch.packets()) {
      out.emplace_back(p.data, p.data + p.len);
    }
    batch.clear();
  }
  return out;
}

void Deliver(EndpointCore& dst, const NetAddr& from, const Datagrams& ds,
             TimeNs now) {
  for (const auto& d : ds) dst.OnDatagram(now, from, d, false);
}

int Count(const std::vector<Completion>& cs, CompletionType t) {
  int n = 0;
  for (const Completion& c : cs) n += c.type == t;
  return n;
}

class AckDeferralTest : public ::testing::Test {
 protected:
  // A pings B; B answers with a pong that carries its ack of the ping.
  // Returns the pong datagram (one: the ack rides on the answer).
  Datagrams PingAndPong() {
    EXPECT_TRUE(p_.a->Send(p_.now, p_.b_addr, OutMessage::Copy(msg_, 64)).ok());
    Deliver(*p_.b, p_.a_addr, Take(*p_.a, p_.now), p_.now);
    p_.now += DurationNs::Micros(5);
    EXPECT_EQ(Count(p_.Drain(*p_.b), CompletionType::kRecv), 1);
    EXPECT_TRUE(Take(*p_.b, p_.now, /*hold_acks=*/true).empty());
    EXPECT_TRUE(p_.b->Send(p_.now, p_.a_addr, OutMessage::Copy(msg_, 64)).ok());
    Datagrams pong = Take(*p_.b, p_.now);
    EXPECT_EQ(pong.size(), 1u);
    p_.now += DurationNs::Micros(5);
    return pong;
  }

  CorePair p_;
  uint8_t msg_[64] = {};
};

TEST_F(AckDeferralTest, AnAckWithDataWaitsUntilTheAnswerHasLeft) {
  p_.a->set_defer_acks(true);
  Deliver(*p_.a, p_.b_addr, PingAndPong(), p_.now);
  EXPECT_TRUE(p_.a->HasDeferredAcks());
  std::vector<Completion> got = p_.Drain(*p_.a);
  EXPECT_EQ(Count(got, CompletionType::kRecv), 1);      // the pong, at once
  EXPECT_EQ(Count(got, CompletionType::kSendDone), 0);  // the ping's ack waits

  // The answer (the next ping) leaves before the held ack is applied.
  ASSERT_TRUE(p_.a->Send(p_.now, p_.b_addr, OutMessage::Copy(msg_, 64)).ok());
  EXPECT_EQ(Take(*p_.a, p_.now).size(), 1u);
  p_.a->ApplyDeferredAcks(p_.now);
  EXPECT_FALSE(p_.a->HasDeferredAcks());
  got = p_.Drain(*p_.a);
  EXPECT_EQ(Count(got, CompletionType::kSendDone), 1);
  EXPECT_EQ(Count(got, CompletionType::kSendFailed), 0);
  // The RTT sample was taken from the pong's arrival, not the late apply.
  const std::vector<PeerStats> ps = p_.a->peer_stats(false);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_LE(ps[0].srtt, DurationNs::Micros(10));
}

TEST_F(AckDeferralTest, OffByDefault) {
  Deliver(*p_.a, p_.b_addr, PingAndPong(), p_.now);
  EXPECT_FALSE(p_.a->HasDeferredAcks());
  EXPECT_EQ(Count(p_.Drain(*p_.a), CompletionType::kSendDone), 1);
}

TEST_F(AckDeferralTest, AnAckAloneIsAppliedAtOnce) {
  p_.a->set_defer_acks(true);
  ASSERT_TRUE(p_.a->Send(p_.now, p_.b_addr, OutMessage::Copy(msg_, 64)).ok());
  Deliver(*p_.b, p_.a_addr, Take(*p_.a, p_.now), p_.now);
  const Datagrams ack = Take(*p_.b, p_.now);  // no answer: an ack-only one
  ASSERT_EQ(ack.size(), 1u);
  Deliver(*p_.a, p_.b_addr, ack, p_.now);
  EXPECT_FALSE(p_.a->HasDeferredAcks());
  EXPECT_EQ(Count(p_.Drain(*p_.a), CompletionType::kSendDone), 1);
}

TEST_F(AckDeferralTest, TheNextDatagramAppliesAHeldAckFirst) {
  p_.a->set_defer_acks(true);
  Deliver(*p_.a, p_.b_addr, PingAndPong(), p_.now);
  ASSERT_TRUE(p_.a->HasDeferredAcks());
  // B sends another message before A answered: its ack is newer.
  ASSERT_TRUE(p_.b->Send(p_.now, p_.a_addr, OutMessage::Copy(msg_, 64)).ok());
  Deliver(*p_.a, p_.b_addr, Take(*p_.b, p_.now), p_.now);
  const std::vector<Completion> got = p_.Drain(*p_.a);
  EXPECT_EQ(Count(got, CompletionType::kSendDone), 1);
  EXPECT_EQ(Count(got, CompletionType::kRecv), 2);
}

TEST_F(AckDeferralTest, ADueTimerAppliesTheHeldAckInsteadOfRetransmitting) {
  p_.a->set_defer_acks(true);
  Deliver(*p_.a, p_.b_addr, PingAndPong(), p_.now);
  ASSERT_TRUE(p_.a->HasDeferredAcks());
  const uint64_t sent = p_.a->stats().datagrams_sent;
  // Long past every loss timer of the ping; nobody applied the held ack.
  p_.now += DurationNs::Millis(50);
  ASSERT_LE(p_.a->NextWake(), p_.now);
  p_.a->OnTimer(p_.now);
  EXPECT_FALSE(p_.a->HasDeferredAcks());
  Take(*p_.a, p_.now);
  EXPECT_EQ(p_.a->stats().reliability.retransmits, 0u);
  EXPECT_EQ(Count(p_.Drain(*p_.a), CompletionType::kSendDone), 1);
  EXPECT_GE(p_.a->stats().datagrams_sent, sent);
}

TEST_F(AckDeferralTest, CloseAppliesTheHeldAckSoTheSendIsDoneNotFailed) {
  p_.a->set_defer_acks(true);
  Deliver(*p_.a, p_.b_addr, PingAndPong(), p_.now);
  ASSERT_TRUE(p_.a->HasDeferredAcks());
  p_.a->Close(p_.now);
  const std::vector<Completion> got = p_.Drain(*p_.a);
  EXPECT_EQ(Count(got, CompletionType::kSendDone), 1);
  EXPECT_EQ(Count(got, CompletionType::kSendFailed), 0);
}

}  // namespace
}  // namespace braid::endpoint

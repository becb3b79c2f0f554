// PeerSender alone: messages are segmented into data frames, completed when
// acked, failed when their session restarts; acks of another session or
// life are dropped. Acks are written by hand, as a receiver would.
#include "endpoint/peer_sender.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/endpoint/fake_peer_host.h"

namespace braid::endpoint {
namespace {

using testing::FakePeerHost;
using testing::kLocalInc;
using testing::kPeerInc;
using testing::ParseFrames;
using testing::T;

class PeerSenderTest : public ::testing::Test {
 protected:
  PeerSenderTest() {
    sender_ = std::make_unique<PeerSender>(&link_, /*seed=*/42, T(0));
  }

  // One datagram's data frames (as Peer::BuildDatagram would write them).
  std::vector<wire::Frame> SendDatagram(TimeNs now) {
    buf_.assign(link_.cfg().max_datagram, 0);
    const wire::PathId path = sender_->DataPath(now);
    const size_t n = sender_->WriteDataFrames(now, absl::MakeSpan(buf_), path);
    sender_->FinishPayload(buf_.data() + n, nullptr);
    return ParseFrames(absl::MakeConstSpan(buf_.data(), n));
  }
  // Every data frame the sender may send now.
  std::vector<wire::DataHeader> SendAll(TimeNs now) {
    std::vector<wire::DataHeader> out;
    while (sender_->HasSendable()) {
      for (const wire::Frame& f : SendDatagram(now)) {
        if (f.type == wire::FrameType::kData) out.push_back(f.data);
      }
    }
    return out;
  }
  // A cumulative ack of every PSN below `cum`, echoing `echo`.
  void Ack(wire::Psn cum, const wire::DataHeader& echo, TimeNs now,
           uint32_t session = 0, uint64_t dst_inc = kLocalInc) {
    wire::AckHeader h;
    h.src_incarnation = kPeerInc;
    h.dst_incarnation = dst_inc;
    h.cum_psn = cum;
    h.credit_psn = cum + wire::kInitialCreditPackets;
    h.echo_path_id = echo.path_id;
    h.echo_path_seq = echo.path_seq;
    h.session = session != 0 ? session : sender_->session();
    sender_->OnAck(now, h, nullptr, &drops_);
  }
  size_t Count(CompletionType type, FailureCause cause = FailureCause::kNone) {
    size_t n = 0;
    for (const Completion& c : host_.completions) {
      if (c.type == type && c.cause == cause) ++n;
    }
    return n;
  }

  FakePeerHost host_;
  PeerLink link_ = testing::TestLink(&host_);
  std::unique_ptr<PeerSender> sender_;
  DropStats drops_;
  std::vector<uint8_t> buf_;
};

TEST_F(PeerSenderTest, MessageIsSplitIntoFragmentsWithConsecutivePsns) {
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(4000, 7).data(), 4000),
                   T(0));
  const std::vector<wire::DataHeader> frags = SendAll(T(0));
  ASSERT_GE(frags.size(), 3u);
  uint32_t bytes = 0;
  for (size_t i = 0; i < frags.size(); ++i) {
    EXPECT_EQ(frags[i].psn, frags[0].psn + static_cast<int64_t>(i));
    EXPECT_EQ(frags[i].frag_offset, bytes);
    EXPECT_EQ(frags[i].msg_len, 4000u);
    EXPECT_EQ(frags[i].dst_incarnation, kPeerInc);
    bytes += frags[i].payload_len;
  }
  EXPECT_EQ(bytes, 4000u);
  // The last frame asks for an immediate ack: nothing else can go now.
  EXPECT_NE(frags.back().flags & wire::kDataFlagAckNow, 0);
}

TEST_F(PeerSenderTest, CompletesAMessageWhenItsLastFragmentIsAcked) {
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(4000, 7).data(), 4000),
                   T(0));
  const std::vector<wire::DataHeader> frags = SendAll(T(0));
  ASSERT_GE(frags.size(), 2u);
  Ack(frags[0].psn + 1, frags[0], T(20));  // the first fragment only
  EXPECT_EQ(Count(CompletionType::kSendDone), 0u);
  EXPECT_EQ(sender_->pending_messages(), 1u);
  Ack(frags.back().psn + 1, frags.back(), T(30));
  EXPECT_EQ(Count(CompletionType::kSendDone), 1u);
  EXPECT_EQ(sender_->pending_messages(), 0u);
  EXPECT_TRUE(sender_->Idle());
  EXPECT_TRUE(sender_->session_confirmed());
}

TEST_F(PeerSenderTest, RestartFailsInFlightMessagesAndKeepsQueuedOnes) {
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(100, 1).data(), 100),
                   T(0));
  ASSERT_FALSE(SendAll(T(0)).empty());  // in flight
  const uint32_t session = sender_->session();
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(100, 2).data(), 100),
                   T(1));  // queued
  sender_->RestartSession(FailureCause::kPeerRestarted, T(2));
  EXPECT_EQ(Count(CompletionType::kSendFailed, FailureCause::kPeerRestarted),
            1u);
  EXPECT_EQ(sender_->pending_messages(), 1u);
  EXPECT_NE(sender_->session(), session);
  EXPECT_FALSE(sender_->session_confirmed());
  EXPECT_FALSE(sender_->HasUnacked());
}

TEST_F(PeerSenderTest, FailAllFailsQueuedAndInFlightMessages) {
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(100, 1).data(), 100),
                   T(0));
  ASSERT_FALSE(SendAll(T(0)).empty());
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(100, 2).data(), 100),
                   T(1));
  sender_->FailAll(FailureCause::kClosed, T(2));
  EXPECT_EQ(Count(CompletionType::kSendFailed, FailureCause::kClosed), 2u);
  EXPECT_EQ(sender_->pending_messages(), 0u);
}

TEST_F(PeerSenderTest, AckOfAnotherSessionOrLifeIsDropped) {
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(100, 1).data(), 100),
                   T(0));
  const std::vector<wire::DataHeader> frags = SendAll(T(0));
  ASSERT_EQ(frags.size(), 1u);
  Ack(frags[0].psn + 1, frags[0], T(20), sender_->session() + 1);
  Ack(frags[0].psn + 1, frags[0], T(20), 0, /*dst_inc=*/kLocalInc + 1);
  EXPECT_EQ(drops_.stale_incarnation, 2u);
  EXPECT_EQ(Count(CompletionType::kSendDone), 0u);
  EXPECT_TRUE(sender_->HasUnacked());
}

TEST_F(PeerSenderTest, NeedSyncForThisSessionResendsInFlightInANewOne) {
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(100, 1).data(), 100),
                   T(0));
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(100, 2).data(), 100),
                   T(0));
  const std::vector<wire::DataHeader> frags = SendAll(T(0));
  ASSERT_EQ(frags.size(), 2u);
  Ack(frags[0].psn + 1, frags[0], T(20));  // confirms the session
  ASSERT_TRUE(sender_->session_confirmed());
  const uint32_t session = sender_->session();
  // The receiver lost the session (evicted us) and says so about frags[1].
  EXPECT_TRUE(sender_->OnNeedSync(T(30), frags[1].psn));
  EXPECT_NE(sender_->session(), session);
  EXPECT_EQ(Count(CompletionType::kSendFailed, FailureCause::kNone), 0u);
  const std::vector<wire::DataHeader> again = SendAll(T(31));
  ASSERT_EQ(again.size(), 1u) << "the unacked message goes again";
  EXPECT_GT(again[0].psn, frags[1].psn) << "with a PSN of the new session";
  // A copy of the same NEED_SYNC, late: about the session before. Obeyed,
  // it would send the new session's messages (perhaps delivered) again.
  Ack(again[0].psn + 1, again[0], T(40));
  ASSERT_TRUE(sender_->session_confirmed());
  const uint32_t now_session = sender_->session();
  EXPECT_FALSE(sender_->OnNeedSync(T(50), frags[1].psn));
  EXPECT_FALSE(sender_->OnNeedSync(T(50), again[0].psn + 1000))
      << "a PSN not sent yet";
  EXPECT_EQ(sender_->session(), now_session);
  EXPECT_EQ(Count(CompletionType::kSendDone), 2u);
}

TEST_F(PeerSenderTest, SyncAnnouncesTheSessionAndItsFirstPsn) {
  sender_->Enqueue(OutMessage::Copy(std::vector<uint8_t>(10, 1).data(), 10),
                   T(0));
  std::vector<uint8_t> out(64);
  const size_t n = sender_->WriteSync(absl::MakeSpan(out));
  const std::vector<wire::Frame> frames =
      ParseFrames(absl::MakeConstSpan(out.data(), n));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].ctrl.type, wire::CtrlType::kSync);
  EXPECT_EQ(frames[0].ctrl.session, sender_->session());
  const std::vector<wire::DataHeader> frags = SendAll(T(0));
  ASSERT_EQ(frags.size(), 1u);
  EXPECT_EQ(frames[0].ctrl.value, frags[0].psn.value());
}

}  // namespace
}  // namespace braid::endpoint

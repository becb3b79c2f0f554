// PeerReceiver alone: it needs a SYNC before data, delivers each message
// once and drops duplicates, acks what arrived (cum and SACK), and grants
// credit within what the application's receive queue can take. Data frames
// are written by hand, as a sender would.
#include "endpoint/peer_receiver.h"

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
constexpr uint32_t kBase = 1000;
constexpr uint32_t kSession = 77;

class PeerReceiverTest : public ::testing::Test {
 protected:
  PeerReceiverTest() { receiver_ = std::make_unique<PeerReceiver>(&link_); }

  void Sync() {
    wire::CtrlFrame c;
    c.type = wire::CtrlType::kSync;
    c.session = kSession;
    c.value = kBase;
    receiver_->OnSync(c);
  }
  // A one-fragment message of `len` bytes at PSN kBase + `off` (message
  // `stream_seq` of ordered stream `stream`, if not 0).
  void Data(uint32_t off, TimeNs now, uint32_t len = 100, uint16_t stream = 0,
            uint32_t stream_seq = 0) {
    payload_.assign(len, static_cast<uint8_t>(off));
    wire::DataHeader h;
    h.src_incarnation = kPeerInc;
    h.dst_incarnation = kLocalInc;
    h.psn = wire::Psn(kBase + off);
    h.path_seq = wire::PathSeq(off);
    h.msg_seq = wire::MsgSeq(off);
    h.msg_len = len;
    h.payload_len = len;
    h.stream_id = stream;
    h.stream_seq = stream_seq;
    receiver_->OnData(now, h, payload_.data(), false, &drops_);
  }
  // The ack the receiver writes now.
  wire::Frame WriteAck(TimeNs now) {
    buf_.assign(512, 0);
    const size_t n = receiver_->WriteAck(now, absl::MakeSpan(buf_));
    std::vector<wire::Frame> f =
        ParseFrames(absl::MakeConstSpan(buf_.data(), n));
    EXPECT_EQ(f.size(), 1u);
    return f.empty() ? wire::Frame() : f[0];
  }

  FakePeerHost host_;
  PeerLink link_ = testing::TestLink(&host_);
  std::unique_ptr<PeerReceiver> receiver_;
  DropStats drops_;
  std::vector<uint8_t> payload_;
  std::vector<uint8_t> buf_;
};

TEST_F(PeerReceiverTest, DataBeforeSyncIsDroppedAndAsksForASession) {
  Data(0, T(0));
  EXPECT_EQ(drops_.unsynced, 1u);
  EXPECT_TRUE(receiver_->need_sync_reply());
  EXPECT_TRUE(host_.completions.empty());
  std::vector<uint8_t> out(64);
  const size_t n = receiver_->WriteNeedSync(absl::MakeSpan(out));
  const std::vector<wire::Frame> f =
      ParseFrames(absl::MakeConstSpan(out.data(), n));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].ctrl.type, wire::CtrlType::kNeedSync);
  EXPECT_EQ(f[0].ctrl.value, kBase) << "names the PSN that found no session";
  EXPECT_FALSE(receiver_->need_sync_reply());
}

TEST_F(PeerReceiverTest, APeerRestartForgetsTheNeedSyncOwedToItsOldLife) {
  // Data of a life that is then replaced (e.g. a forger's first contact):
  // the NEED_SYNC it earned must not reach the new life, whose session it
  // would restart.
  Data(0, T(0));
  ASSERT_TRUE(receiver_->need_sync_reply());
  receiver_->OnPeerRestarted(/*deliver_held=*/false);
  EXPECT_FALSE(receiver_->need_sync_reply());
  EXPECT_FALSE(receiver_->HasFrontMatter(T(1)));
}

TEST_F(PeerReceiverTest, HeldOrderedMessagesOfALifeTakenOnTrustAreDropped) {
  // Message 2 of stream 1 arrives, message 1 does not: 2 is held (and
  // acked). Its life is then replaced by one that proved itself: it was
  // not the peer's (a forger's first contact), so nothing of it is
  // delivered.
  Sync();
  Data(0, T(0), 100, /*stream=*/1, /*stream_seq=*/2);
  ASSERT_TRUE(host_.completions.empty());
  receiver_->OnPeerRestarted(/*deliver_held=*/false);
  EXPECT_TRUE(host_.completions.empty());
}

TEST_F(PeerReceiverTest, HeldOrderedMessagesOfARestartedPeerAreDelivered) {
  // The same, but the life was the peer's and it restarted: it counts the
  // held message as done, so it is delivered.
  Sync();
  Data(0, T(0), 100, /*stream=*/1, /*stream_seq=*/2);
  ASSERT_TRUE(host_.completions.empty());
  receiver_->OnPeerRestarted(/*deliver_held=*/true);
  EXPECT_EQ(host_.completions.size(), 1u);
}

TEST_F(PeerReceiverTest, DeliversAMessageOnceAndDropsItsDuplicate) {
  Sync();
  Data(0, T(1));
  Data(0, T(2));
  EXPECT_EQ(drops_.duplicates, 1u);
  ASSERT_EQ(host_.completions.size(), 1u);
  EXPECT_EQ(host_.completions[0].type, CompletionType::kRecv);
  EXPECT_EQ(host_.completions[0].data.size(), 100u);
}

TEST_F(PeerReceiverTest, AckNamesCumAndTheSackedPsnsPastAHole) {
  Sync();
  Data(0, T(1));
  Data(2, T(2));                            // PSN kBase + 1 is missing
  EXPECT_TRUE(receiver_->AckWanted(T(2)));  // a path-seq jump: ack at once
  const wire::Frame f = WriteAck(T(3));
  ASSERT_EQ(f.type, wire::FrameType::kAck);
  EXPECT_EQ(f.ack.cum_psn, wire::Psn(kBase + 1));
  EXPECT_EQ(f.ack.session, kSession);
  EXPECT_EQ(f.ack.dst_incarnation, kPeerInc);
  ASSERT_GE(f.ack.sack_words, 1u);
  EXPECT_EQ(wire::SackWord(f.sack, 0), uint64_t{1} << 0);  // kBase + 2
  EXPECT_FALSE(receiver_->AckPending());
}

TEST_F(PeerReceiverTest, GrantsCreditBeyondCum) {
  Sync();
  Data(0, T(1));
  const wire::Frame f = WriteAck(T(2));
  EXPECT_GE(f.ack.credit_psn - f.ack.cum_psn,
            static_cast<int32_t>(wire::kInitialCreditPackets));
  EXPECT_EQ(receiver_->granted(), f.ack.credit_psn);
  EXPECT_FALSE(receiver_->TakeCreditSqueezed());
}

TEST_F(PeerReceiverTest, ShortReceiveQueueSqueezesCreditUntilSpaceIsFreed) {
  Sync();
  Data(0, T(1));
  host_.queue_room = 1000;  // less than the receive budget
  WriteAck(T(2));
  EXPECT_TRUE(receiver_->TakeCreditSqueezed());
  EXPECT_FALSE(receiver_->TakeCreditSqueezed());  // once per ack
  EXPECT_FALSE(receiver_->AckWanted(T(3)));
  receiver_->OnReceiveSpaceFreed();
  EXPECT_TRUE(receiver_->AckWanted(T(3)));  // a window update is due
}

TEST_F(PeerReceiverTest, ResentDataAfterAnAckBlamesThatAcksPath) {
  Sync();
  Data(0, T(1));
  WriteAck(T(2));
  receiver_->OnDatagramBuilt(/*path=*/5, /*ack_bytes=*/40, /*ack_only=*/true,
                             /*copy=*/false, /*other_paths=*/false);
  // The sender re-sends PSN kBase: our ack never arrived.
  payload_.assign(100, 0);
  wire::DataHeader h;
  h.src_incarnation = kPeerInc;
  h.dst_incarnation = kLocalInc;
  h.psn = wire::Psn(kBase);
  h.flags = wire::kDataFlagRetransmit;
  h.msg_len = h.payload_len = 100;
  receiver_->OnData(T(3), h, payload_.data(), false, &drops_);
  wire::PathId path = 0;
  ASSERT_TRUE(receiver_->TakeReturnLoss(/*sender_idle=*/true, &path));
  EXPECT_EQ(path, 5);
  EXPECT_FALSE(receiver_->TakeReturnLoss(true, &path));  // once per ack
}

}  // namespace
}  // namespace braid::endpoint

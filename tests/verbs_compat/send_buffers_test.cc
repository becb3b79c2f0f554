// SendBuffers over a loopback endpoint pair: a large message built in
// scratch() goes without a copy (SendOwned) and its buffer returns to the
// endpoint's pool; a zero-copy send is reported when it ends; a refused
// send keeps scratch().
#include "verbs_compat/send_buffers.h"

#include <chrono>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "verbs_compat/qp.h"

namespace braid::verbs_compat {
namespace {

// A sender `a` with its SendBuffers, and a receiver `b`.
class SendBuffersTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }
  void Start(const EndpointOptions& o) {
    sends_.reset();
    auto a = Endpoint::Open(o);
    auto b = Endpoint::Open({});
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = std::move(*a);
    b_ = std::move(*b);
    sends_ = std::make_unique<SendBuffers>(a_.get(), &counters_);
  }
  // Polls both until `a` has a send completion; returns it.
  Completion SendCompletion() {
    std::vector<Completion> ca, cb;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (ca.empty() && std::chrono::steady_clock::now() < deadline) {
      a_->Poll(&ca);
      b_->Poll(&cb);
    }
    EXPECT_EQ(ca.size(), 1u);
    return ca.empty() ? Completion() : std::move(ca[0]);
  }

  std::unique_ptr<Endpoint> a_, b_;
  ContextCounters counters_;
  std::unique_ptr<SendBuffers> sends_;
};

TEST_F(SendBuffersTest,
       LargeScratchMessageGoesWithoutACopyAndItsBufferIsPooled) {
  std::vector<uint8_t>& buf = sends_->scratch();
  buf.assign(kZeroCopyMinBytes * 4, 7);
  const uint8_t* sent = buf.data();
  const size_t capacity = buf.capacity();
  ASSERT_EQ(sends_->Send(b_->local_address(), 0, buf, MakeCookie(5, false, 9)),
            SendResult::kOk);
  // scratch() is a fresh buffer; the endpoint has the message's.
  EXPECT_NE(sends_->scratch().data(), sent);
  EXPECT_TRUE(sends_->scratch().empty());
  EXPECT_EQ(sends_->unacked(), 1u);
  Completion c = SendCompletion();
  ASSERT_EQ(c.type, CompletionType::kSendDone);
  EXPECT_EQ(c.data.data(), sent);
  EXPECT_FALSE(sends_->OnSendCompletion(&c));  // no application memory
  EXPECT_TRUE(c.data.empty());                 // back to the endpoint's pool
  EXPECT_EQ(sends_->unacked(), 0u);
  EXPECT_EQ(a_->TakeBuffer(capacity).data(), sent);
  EXPECT_EQ(counters_.zero_copy_sends, 0u);
}

TEST_F(SendBuffersTest, SmallMessageIsCopied) {
  sends_->scratch().assign(100, 1);
  const uint8_t* data = sends_->scratch().data();
  ASSERT_EQ(sends_->Send(b_->local_address(), 0, sends_->scratch(), 1),
            SendResult::kOk);
  EXPECT_EQ(sends_->scratch().data(), data);  // kept for the next message
  Completion c = SendCompletion();
  EXPECT_TRUE(c.data.empty());
  EXPECT_FALSE(sends_->OnSendCompletion(&c));
}

TEST_F(SendBuffersTest, ZeroCopySendIsInFlightUntilItsCompletion) {
  const std::vector<uint8_t> header(24, 1), body(kZeroCopyMinBytes, 2);
  ASSERT_EQ(sends_->SendZeroCopy(b_->local_address(), 3, header, body,
                                 MakeCookie(5, false, 9), std::nullopt),
            SendResult::kOk);
  EXPECT_EQ(sends_->zero_copy_in_flight(), 1u);
  EXPECT_EQ(counters_.zero_copy_sends, 1u);
  Completion c = SendCompletion();
  ASSERT_EQ(c.type, CompletionType::kSendDone);
  EXPECT_TRUE(sends_->OnSendCompletion(&c));  // the WR may complete now
  EXPECT_EQ(sends_->zero_copy_in_flight(), 0u);
  EXPECT_EQ(sends_->unacked(), 0u);
}

TEST_F(SendBuffersTest, RefusedSendKeepsScratchAndIsCounted) {
  EndpointOptions o;
  o.protocol.max_pending_sends = 1;
  Start(o);
  const NetAddr nowhere = NetAddr::Parse("127.0.0.1:9").value();
  sends_->scratch().assign(10, 0);
  ASSERT_EQ(sends_->Send(nowhere, 0, sends_->scratch(), 1), SendResult::kOk);
  sends_->scratch().assign(kZeroCopyMinBytes, 3);
  const uint8_t* data = sends_->scratch().data();
  EXPECT_EQ(sends_->Send(nowhere, 0, sends_->scratch(), 2), SendResult::kRetry);
  EXPECT_EQ(sends_->scratch().data(), data);
  EXPECT_EQ(sends_->scratch().size(), kZeroCopyMinBytes);
  EXPECT_EQ(counters_.send_retries, 1u);
  a_->Close();
  EXPECT_EQ(sends_->Send(nowhere, 0, sends_->scratch(), 3),
            SendResult::kFailed);
  EXPECT_EQ(sends_->scratch().data(), data);
  EXPECT_EQ(counters_.transport_failures, 1u);
  EXPECT_EQ(sends_->unacked(), 1u);
}

}  // namespace
}  // namespace braid::verbs_compat

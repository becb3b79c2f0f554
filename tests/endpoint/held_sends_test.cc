#include "endpoint/held_sends.h"

#include <vector>

#include "gtest/gtest.h"

namespace braid::endpoint {
namespace {

Completion Done(uint64_t cookie) {
  Completion c;
  c.type = CompletionType::kSendDone;
  c.cookie = cookie;
  return c;
}

TEST(HeldSendsTest, ASendWhoseHoldIsFreeNeedNotWait) {
  HeldSends h;
  backend::TxHold* hold = h.Acquire();
  EXPECT_FALSE(h.MustWait(hold));
  EXPECT_FALSE(h.MustWait(nullptr));
}

TEST(HeldSendsTest, ParkedSendsLeaveInOrderOnceTheirHoldsAreFree) {
  HeldSends h;
  backend::TxHold* a = h.Acquire();
  backend::TxHold* b = h.Acquire();
  ASSERT_NE(a, b);
  a->refs = 2;  // the backend keeps two of a's packets
  ASSERT_TRUE(h.MustWait(a));
  h.Park(Done(1), std::vector<uint8_t>(10, 1), a);
  // b is free, but a send behind a waiting one waits too (order is kept).
  EXPECT_TRUE(h.MustWait(b));
  h.Park(Done(2), {}, b);
  std::vector<uint64_t> out;
  std::vector<size_t> buffers;
  auto done = [&](Completion&& c, std::vector<uint8_t>&& buf) {
    out.push_back(c.cookie);
    buffers.push_back(buf.size());
  };
  h.Drain(done);
  EXPECT_TRUE(out.empty());
  a->refs.fetch_sub(1);
  h.Drain(done);
  EXPECT_TRUE(out.empty());
  a->refs.fetch_sub(1);
  h.Drain(done);
  EXPECT_EQ(out, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(buffers, (std::vector<size_t>{10, 0}));  // a's bytes, kept till now
  EXPECT_TRUE(h.empty());
  // Both holds went back to the pool and are handed out again.
  backend::TxHold* x = h.Acquire();
  backend::TxHold* y = h.Acquire();
  EXPECT_TRUE((x == a && y == b) || (x == b && y == a));
}

}  // namespace
}  // namespace braid::endpoint

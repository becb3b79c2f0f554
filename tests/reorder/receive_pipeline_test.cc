// The reorder pieces together, driven the way the endpoint core drives them:
// Classify -> Reassembler -> OnPacket (skipped on kNoMemory) -> OrderedRelease,
// with AckScheduler fed on every data packet. Random loss, duplication and
// reordering; the sender resends whatever the window does not yet contain.
#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"
#include "reorder/ack_scheduler.h"
#include "reorder/buffer_pool.h"
#include "reorder/ordered_release.h"
#include "reorder/reassembler.h"
#include "reorder/receive_window.h"

namespace braid::reorder {
namespace {

struct Packet {
  wire::Psn psn;
  uint32_t msg;
  uint32_t offset;
  uint32_t len;
};

struct SentMessage {
  uint16_t stream;
  uint32_t stream_seq;
  std::vector<uint8_t> data;
};

void RunScenario(uint64_t seed, bool tight_memory) {
  SCOPED_TRACE(testing::Message() << "seed=" << seed);
  Rng rng(seed);
  constexpr uint32_t kMss = 1000;
  const wire::Psn base(0xFFFFF000u);  // the session crosses the PSN wrap

  // Sender side: messages, then packets with consecutive PSNs.
  std::vector<SentMessage> msgs;
  std::vector<Packet> packets;
  std::map<uint16_t, uint32_t> stream_next;
  for (uint32_t m = 0; m < 400; ++m) {
    SentMessage s;
    s.stream = static_cast<uint16_t>(rng.Uniform(4));  // 0 = unordered
    s.stream_seq = s.stream == 0 ? 0 : stream_next[s.stream]++;
    s.data.resize(rng.Uniform(6 * kMss));
    for (auto& b : s.data) b = static_cast<uint8_t>(rng.Next());
    const uint32_t len = static_cast<uint32_t>(s.data.size());
    uint32_t off = 0;
    do {
      const uint32_t n = std::min(kMss, len - off);
      packets.push_back(
          {base + static_cast<int64_t>(packets.size()), m, off, n});
      off += n;
    } while (off < len);
    msgs.push_back(std::move(s));
  }

  // Receiver side.
  BufferPool pool;
  ReceiveWindow window(1024);
  window.Reset(base);
  ReassemblerOptions ro;
  // Room for two whole messages and their bookkeeping: the one at cum and
  // one that straddles the window's edge (whose rest waits for cum to move).
  if (tight_memory) ro.max_bytes = 12 * kMss + 1024;
  ro.max_message_bytes = 6 * kMss;
  Reassembler reasm(ro, &pool);
  OrderedRelease release(OrderedReleaseOptions(), &pool);
  AckScheduler acks;
  std::vector<int> delivered(msgs.size(), 0);
  std::map<uint16_t, uint32_t> release_next;
  CompletedMessage done;
  std::vector<CompletedMessage> released;
  TimeNs now(0);
  uint64_t no_memory = 0;

  for (int round = 0; round < 200; ++round) {
    // Resend everything not yet received, shuffled, with loss and duplicates.
    std::vector<const Packet*> wire_order;
    for (const Packet& p : packets) {
      if (window.Contains(p.psn)) continue;
      if (rng.Bernoulli(0.2)) continue;
      wire_order.push_back(&p);
      if (rng.Bernoulli(0.1)) wire_order.push_back(&p);
    }
    if (wire_order.empty() &&
        window.cum() == base + static_cast<int64_t>(packets.size())) {
      break;
    }
    for (size_t i = wire_order.size(); i > 1; --i) {
      std::swap(wire_order[i - 1], wire_order[rng.Uniform(i)]);
    }
    for (const Packet* p : wire_order) {
      now += DurationNs::Nanos(100);
      const SentMessage& s = msgs[p->msg];
      const ReceiveWindow::Verdict v = window.Classify(p->psn);
      bool out_of_order = false;
      if (v == ReceiveWindow::Verdict::kNew) {
        Fragment f;
        f.msg = wire::MsgSeq(p->msg);
        f.stream_id = s.stream;
        f.stream_seq = s.stream_seq;
        f.msg_len = static_cast<uint32_t>(s.data.size());
        f.offset = p->offset;
        f.payload = absl::MakeConstSpan(s.data.data() + p->offset, p->len);
        const FragResult r = reasm.OnFragment(f, &done);
        ASSERT_NE(r, FragResult::kMalformed);
        if (r == FragResult::kNoMemory) {
          ++no_memory;
          continue;  // not recorded: the sender will resend it
        }
        ASSERT_EQ(window.OnPacket(p->psn), ReceiveWindow::Verdict::kNew);
        out_of_order = window.last_out_of_order();
        if (r == FragResult::kComplete) {
          released.clear();
          ASSERT_EQ(release.Push(std::move(done), &released),
                    OrderedRelease::PushResult::kOk);
          for (CompletedMessage& c : released) {
            const uint32_t m = c.msg.value();
            ASSERT_LT(m, msgs.size());
            ASSERT_EQ(++delivered[m], 1) << "message " << m << " twice";
            ASSERT_TRUE(c.data == msgs[m].data) << "message " << m;
            if (c.stream_id != 0) {
              ASSERT_EQ(c.stream_seq, release_next[c.stream_id]++);
            }
            pool.Put(std::move(c.data));
          }
        }
      }
      acks.OnData(now, 0, wire::PathSeq(0), false, false, out_of_order,
                  v == ReceiveWindow::Verdict::kDuplicate);
      if (acks.AckDue(now)) acks.OnAckSent(now);
    }
  }
  EXPECT_EQ(window.cum(), base + static_cast<int64_t>(packets.size()));
  for (size_t m = 0; m < msgs.size(); ++m) {
    EXPECT_EQ(delivered[m], 1) << "message " << m;
  }
  EXPECT_EQ(reasm.partial_messages(), 0u);
  EXPECT_EQ(reasm.memory_used(), 0u);
  EXPECT_EQ(release.held_messages(), 0u);
  if (tight_memory) {
    EXPECT_GT(no_memory, 0u) << "limit never exercised";
  }
  EXPECT_GT(acks.stats().acks_sent, 0u);
}

TEST(ReceivePipelineTest, LossyReorderedDuplicatedTrafficIsDeliveredOnce) {
  for (uint64_t seed = 1; seed <= 4; ++seed) RunScenario(seed, false);
}

TEST(ReceivePipelineTest, MemoryPressureOnlyDelaysDelivery) {
  for (uint64_t seed = 11; seed <= 14; ++seed) RunScenario(seed, true);
}

}  // namespace
}  // namespace braid::reorder

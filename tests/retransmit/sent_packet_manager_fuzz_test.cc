// Random API sequences against SentPacketManager, checked after every step
// against an independent model built only from the events it reports:
// in-flight accounting, the retransmit queue, unacked listing, no event for
// a PSN in the wrong state, and invalid acks changing nothing. Seeds are in
// the failure message.
#include <cstdint>
#include <map>
#include <vector>

#include "base/rng.h"
#include "gtest/gtest.h"
#include "retransmit/sent_packet_manager.h"
#include "tests/retransmit/outcome_replay.h"

namespace braid::retransmit {
namespace {

using wire::PathId;
using wire::PathSeq;
using wire::Psn;

// Checks each packet the outcomes report (via ReplayOutcome).
class Model {
 public:
  enum class St { kInFlight, kLostQueued, kLostPopped };
  struct Pkt {
    uint32_t bytes;
    St st;
  };

  void OnPacketAcked(Psn psn, uint64_t tag, uint32_t bytes, PathId, bool) {
    auto it = pkts.find(psn.value());
    ASSERT_NE(it, pkts.end()) << "acked a PSN not outstanding " << psn.value();
    EXPECT_EQ(it->second.bytes, bytes);
    EXPECT_EQ(tag, uint64_t{psn.value()} * 3);
    pkts.erase(it);
  }
  void OnPacketLost(Psn psn, uint64_t tag, uint32_t bytes, PathId, LossCause) {
    auto it = pkts.find(psn.value());
    ASSERT_NE(it, pkts.end()) << "lost a PSN not outstanding " << psn.value();
    EXPECT_EQ(it->second.st, St::kInFlight) << psn.value();
    it->second.st = St::kLostQueued;
  }
  void OnRttSample(PathId, DurationNs rtt) {
    EXPECT_GT(rtt, DurationNs::Zero());
  }
  void OnSpuriousRetransmit(Psn) {}

  std::map<uint32_t, Pkt> pkts;  // outstanding (not acked)
};

class Fuzzer {
 public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {
    RetransmitOptions o;
    o.go_back_n = rng_.Bernoulli(0.2);
    o.tail_probe = rng_.Bernoulli(0.7);
    o.initial_window_packets = 16;
    o.initial_path_log = 4;
    m_ = std::make_unique<SentPacketManager>(o);
    base_ = static_cast<uint32_t>(rng_.Next());
    m_->Reset(Psn(base_));
  }

  const SenderCounters& counters() const { return m_->counters(); }

  void Run(int steps) {
    for (int i = 0; i < steps && !::testing::Test::HasFailure(); ++i) {
      now_ += DurationNs(static_cast<int64_t>(rng_.Uniform(20000)));
      const uint64_t op = rng_.Uniform(100);
      if (op < 35) {
        SendNew();
      } else if (op < 65) {
        RandomAck();
      } else if (op < 75) {
        Timer();
      } else if (op < 75 + 12) {
        Retransmit();
      } else if (op < 90) {
        // Bogus re-send of an arbitrary PSN: counted, harmless.
        const Psn p(m_->next_psn().value() + 1 +
                    static_cast<uint32_t>(rng_.Uniform(5)));
        m_->OnRetransmitted(p, 0, NextSeq(0), now_);
      } else if (op < 93) {
        m_->OnPathRerouted(static_cast<PathId>(rng_.Uniform(6)));
      } else if (op < 94) {
        m_->ResendRefused(&out_);  // the receiver refused our first contact
        ReplayOutcome(out_, model_);
      } else if (op < 95) {
        m_->Reset(m_->next_psn());
        model_.pkts.clear();
        seq_.clear();
      } else if (NextTimer() <= now_) {
        Timer();
      }
      Check();
    }
    // Drain: a full cumulative ack acknowledges everything.
    AckInfo a;
    a.cum = m_->next_psn();
    ASSERT_TRUE(Ack(a));
    Check();
    EXPECT_TRUE(model_.pkts.empty());
    EXPECT_FALSE(m_->HasUnacked());
    EXPECT_EQ(m_->NextTimerTime(), TimeNs::Infinite());
  }

 private:
  TimeNs NextTimer() const { return m_->NextTimerTime(); }
  PathSeq NextSeq(PathId p) { return PathSeq(seq_[p]++); }
  bool Ack(const AckInfo& a) {
    const bool ok = m_->OnAck(a, now_, &out_);
    ReplayOutcome(out_, model_);
    return ok;
  }
  void Timer() {
    m_->OnTimer(now_, &out_);
    ReplayOutcome(out_, model_);
  }

  void SendNew() {
    if (m_->next_psn() - m_->lowest_unacked() > 300) return;
    const PathId p = static_cast<PathId>(rng_.Uniform(6));
    const uint32_t bytes = 1 + static_cast<uint32_t>(rng_.Uniform(4000));
    const Psn psn = m_->next_psn();
    m_->OnFirstSent(uint64_t{psn.value()} * 3, bytes, p, NextSeq(p), now_);
    model_.pkts[psn.value()] = {bytes, Model::St::kInFlight};
    sent_.push_back({p, PathSeq(seq_[p] - 1)});
    if (sent_.size() > 64) sent_.erase(sent_.begin());
  }

  void Retransmit() {
    Psn psn;
    uint64_t tag;
    uint32_t bytes;
    PathId last;
    const bool peek = rng_.Bernoulli(0.3);
    const bool got = peek ? m_->PeekRetransmit(&psn, &tag, &bytes, &last)
                          : m_->PopRetransmit(&psn, &tag, &bytes, &last);
    // The queue offers exactly the lowest queued PSN.
    bool any = false;
    uint32_t lowest = 0;
    for (const auto& [p, k] : model_.pkts) {
      if (k.st != Model::St::kLostQueued) continue;
      if (!any || Psn(p) < Psn(lowest)) lowest = p;
      any = true;
    }
    ASSERT_EQ(got, any);
    if (!got) return;
    EXPECT_EQ(psn.value(), lowest);
    EXPECT_EQ(tag, uint64_t{psn.value()} * 3);
    if (peek) return;
    model_.pkts[psn.value()].st = Model::St::kLostPopped;
    if (rng_.Bernoulli(0.9)) {
      const PathId p = static_cast<PathId>(rng_.Uniform(6));
      m_->OnRetransmitted(psn, p, NextSeq(p), now_);
      model_.pkts[psn.value()].st = Model::St::kInFlight;
      sent_.push_back({p, PathSeq(seq_[p] - 1)});
    }
  }

  void RandomAck() {
    const uint32_t next = m_->next_psn().value();
    const uint32_t low = m_->lowest_unacked().value();
    const uint32_t span = next - low;
    AckInfo a;
    bool valid = true;
    uint32_t cum = low + static_cast<uint32_t>(rng_.Uniform(span + 1));
    if (rng_.Bernoulli(0.1)) cum -= static_cast<uint32_t>(rng_.Uniform(8));
    std::vector<uint64_t> bits(rng_.Uniform(5), 0);
    for (size_t j = 0; j < bits.size(); ++j) {
      for (int b = 0; b < 64; ++b) {
        const uint32_t p = cum + 1 + static_cast<uint32_t>(64 * j + b);
        if (static_cast<int32_t>(next - p) > 0 && rng_.Bernoulli(0.3)) {
          bits[j] |= uint64_t{1} << b;
        }
      }
    }
    if (rng_.Bernoulli(0.05)) {  // refer to a PSN never sent
      valid = false;
      if (bits.empty() || rng_.Bernoulli(0.5)) {
        cum = next + 1 + static_cast<uint32_t>(rng_.Uniform(100));
      } else {
        const uint32_t off = next - cum - 1;
        if (off < 64 * bits.size()) {
          bits[off / 64] |= uint64_t{1} << (off % 64);
        } else {
          cum = next + 1;
        }
      }
    }
    a.cum = Psn(cum);
    a.sack = absl::MakeConstSpan(bits);
    if (!sent_.empty() && rng_.Bernoulli(0.9)) {
      const auto& e = sent_[rng_.Uniform(sent_.size())];
      a.echo_path = e.first;
      a.echo_path_seq = e.second;
    } else {
      a.echo_path = static_cast<PathId>(rng_.Uniform(256));
      a.echo_path_seq = PathSeq(static_cast<uint32_t>(rng_.Next()));
    }
    a.ack_delay = DurationNs(static_cast<int64_t>(rng_.Uniform(5000)) - 500);
    a.nak = rng_.Bernoulli(0.1);
    const uint64_t in_flight = m_->bytes_in_flight();
    const size_t outstanding = model_.pkts.size();
    const bool ok = Ack(a);
    EXPECT_EQ(ok, valid);
    if (!ok) {
      EXPECT_EQ(m_->bytes_in_flight(), in_flight);
      EXPECT_EQ(model_.pkts.size(), outstanding);
    }
  }

  void Check() {
    uint64_t bytes = 0;
    uint32_t packets = 0;
    bool queued = false;
    for (const auto& [p, k] : model_.pkts) {
      if (k.st == Model::St::kInFlight) {
        bytes += k.bytes;
        ++packets;
      }
      queued |= k.st == Model::St::kLostQueued;
    }
    ASSERT_EQ(m_->bytes_in_flight(), bytes);
    ASSERT_EQ(m_->packets_in_flight(), packets);
    ASSERT_EQ(m_->HasRetransmit(), queued);
    ASSERT_EQ(m_->HasUnacked(), !model_.pkts.empty());
    std::vector<uint32_t> listed;
    m_->ForEachUnacked(
        [&](Psn p, uint64_t, uint32_t) { listed.push_back(p.value()); });
    ASSERT_EQ(listed.size(), model_.pkts.size());
    for (uint32_t p : listed) ASSERT_TRUE(model_.pkts.count(p)) << p;
    if (packets > 0) {
      ASSERT_FALSE(m_->NextTimerTime().IsInfinite());
    }
  }

  Rng rng_;
  std::unique_ptr<SentPacketManager> m_;
  Model model_;
  SenderOutcome out_;
  uint32_t base_;
  TimeNs now_ = TimeNs(1000000);
  std::map<PathId, uint32_t> seq_;
  std::vector<std::pair<PathId, PathSeq>> sent_;
};

TEST(SentPacketManagerFuzzTest, RandomCallSequencesKeepTheBooksStraight) {
  struct {
    uint64_t losses[kNumLossCauses] = {};
    uint64_t rtos = 0, invalid = 0, spurious = 0, retransmits = 0;
  } total;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    Fuzzer f(seed);
    f.Run(3000);
    if (::testing::Test::HasFailure()) break;
    const SenderCounters& c = f.counters();
    for (int i = 0; i < kNumLossCauses; ++i)
      total.losses[i] += c.losses_by_cause[i];
    total.rtos += c.rtos;
    total.invalid += c.invalid_acks;
    total.spurious += c.spurious_retransmits;
    total.retransmits += c.retransmits;
  }
  // The sequences reach every loss path, not just the easy ones.
  for (int i = 0; i < kNumLossCauses; ++i) EXPECT_GT(total.losses[i], 0u) << i;
  EXPECT_GT(total.rtos, 0u);
  EXPECT_GT(total.invalid, 0u);
  EXPECT_GT(total.spurious, 0u);
  EXPECT_GT(total.retransmits, 0u);
}

}  // namespace
}  // namespace braid::retransmit

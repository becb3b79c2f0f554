#include "retransmit/sent_packet_manager.h"

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace braid::retransmit {
namespace {

using wire::PathId;
using wire::PathSeq;
using wire::Psn;

constexpr DurationNs Us(int64_t n) { return DurationNs::Micros(n); }
constexpr TimeNs T(int64_t us) { return TimeNs(us * 1000); }

struct Lost {
  uint32_t psn;
  PathId path;
  LossCause cause;
};
struct Acked {
  uint32_t psn;
  PathId path;
  bool retransmitted;
};

// The transmission an acked or lost entry names (and, for an ack, whether
// it was outstanding and which copy it orphans; for a loss, its evidence).
struct EventTx {
  PathId path = 0;
  PathSeq seq;
  bool overtaken = false;
  bool was_outstanding = true;
  bool has_orphan = false;
  PathId orphan_path = 0;
  PathSeq orphan_seq;
};

// Records what OnAck and OnTimer return, entry by entry.
class Recorder {
 public:
  // m.OnAck / m.OnTimer, recording the outcome.
  bool Ack(SentPacketManager& m, const AckInfo& a, TimeNs now) {
    const bool ok = m.OnAck(a, now, &out_);
    Take();
    return ok;
  }
  void Timer(SentPacketManager& m, TimeNs now) {
    m.OnTimer(now, &out_);
    Take();
  }
  size_t Refused(SentPacketManager& m) {
    const size_t n = m.ResendRefused(&out_);
    Take();
    return n;
  }
  void Clear() {
    const bool r = runs;
    *this = Recorder();
    runs = r;
  }

  // Whether the manager was made to report runs (RetransmitOptions::
  // acked_runs). Runs are recorded packet by packet, as the single entries
  // they stand for: every test below sees the same events either way.
  bool runs = true;
  int acked_runs = 0;
  std::vector<EventTx> acked_tx;
  std::vector<EventTx> lost_tx;
  std::vector<Acked> acked;
  std::vector<Lost> lost;
  std::vector<std::pair<PathId, DurationNs>> rtts;
  std::vector<uint32_t> spurious;
  int spurious_rtos = 0;

 private:
  void Take() {
    if (out_.has_rtt_sample) {
      rtts.push_back({out_.rtt_sample.path, out_.rtt_sample.rtt});
    }
    for (const AckedPackets& a : out_.acked) {
      const absl::Span<const uint64_t> tags = out_.Tags(a);
      if (a.count > 1) {
        EXPECT_TRUE(runs);
        ++acked_runs;
      }
      for (uint32_t i = 0; i < a.count; ++i) {
        // Tags travel with their packet.
        EXPECT_EQ(tags[i], (a.first + i).value() + 1000u);
        acked.push_back({(a.first + i).value(), a.path, a.was_retransmitted});
        EventTx tx;
        tx.path = a.path;
        tx.seq = a.first_seq + i;
        tx.was_outstanding = a.was_outstanding;
        tx.has_orphan = a.has_orphan;
        tx.orphan_path = a.orphan_path;
        tx.orphan_seq = a.orphan_seq;
        acked_tx.push_back(tx);
      }
    }
    for (const LostPacket& l : out_.lost) {
      EXPECT_EQ(l.tag, l.psn.value() + 1000u);
      lost.push_back({l.psn.value(), l.path, l.cause});
      EventTx tx;
      tx.path = l.path;
      tx.seq = l.seq;
      tx.overtaken = l.overtaken;
      lost_tx.push_back(tx);
    }
    for (Psn p : out_.spurious_retransmits) spurious.push_back(p.value());
    if (out_.spurious_rto) ++spurious_rtos;
  }

  SenderOutcome out_;
};

class SentPacketManagerTest : public ::testing::Test {
 protected:
  SentPacketManagerTest() { Make(NoProbe()); }

  static RetransmitOptions NoProbe() {
    RetransmitOptions o;
    o.tail_probe = false;
    return o;
  }
  void Make(const RetransmitOptions& o, Psn base = Psn(0)) {
    RetransmitOptions with_runs = o;
    with_runs.acked_runs = ev_.runs;
    m_ = std::make_unique<SentPacketManager>(with_runs);
    m_->Reset(base);
    next_seq_.clear();
    last_tx_.clear();
  }
  PathSeq NextSeq(PathId p) { return PathSeq(next_seq_[p]++); }
  // Exactly one loss was reported: `psn`, for `cause`.
  void ExpectOnlyLoss(uint32_t psn, LossCause cause) {
    ASSERT_EQ(ev_.lost.size(), 1u);
    EXPECT_EQ(ev_.lost[0].psn, psn);
    EXPECT_EQ(ev_.lost[0].cause, cause);
  }
  // PSN 0 on path 0 and PSN 1 on path 1, each acked after 20us: both paths
  // get srtt 20us, rttvar 10us.
  void SampleBothPaths() {
    Send(0, T(0));
    ASSERT_TRUE(Ack(1, {}, Psn(0), T(20)));
    Send(1, T(20));
    ASSERT_TRUE(Ack(2, {}, Psn(1), T(40)));
  }

  // First transmission of the next PSN on path p at `now`.
  Psn Send(PathId p, TimeNs now, uint32_t bytes = 1000) {
    const Psn psn = m_->next_psn();
    const PathSeq seq = NextSeq(p);
    m_->OnFirstSent(psn.value() + 1000u, bytes, p, seq, now);
    last_tx_[psn.value()] = {p, seq};
    return psn;
  }
  // Re-send of psn on path p at `now`.
  // 20 round trips of 20 us on path 0, one every 30 us from *t (advanced
  // past them): settles the RTT estimates.
  void SettleEstimates(TimeNs* t) {
    for (int i = 0; i < 20; ++i) {
      const Psn p = Send(0, *t);
      ASSERT_TRUE(Ack(p.value() + 1, {}, p, *t + Us(20)));
      *t = *t + Us(30);
    }
  }
  // A packet sent at `t` whose ack is merely late: the tail probe fires (at
  // *probe_at), the original arrives, and the receiver flags the probe copy
  // as a duplicate.
  void SpuriousTailProbe(TimeNs t, TimeNs* probe_at) {
    const Psn p = Send(0, t);
    *probe_at = t;
    for (int i = 0; i < 10 && m_->counters().tail_probes == 0; ++i) {
      *probe_at = m_->NextTimerTime();
      ev_.Timer(*m_, *probe_at);
    }
    ASSERT_EQ(m_->counters().tail_probes, 1u);
    ASSERT_EQ(PopAll(), std::vector<uint32_t>{p.value()});
    Resend(p, 1, *probe_at);
    echo_dup_ = true;
    ASSERT_TRUE(Ack(p.value() + 1, {}, p, *probe_at + Us(20)));
    EXPECT_EQ(m_->counters().spurious_tail_probes, 1u);
  }
  void Resend(Psn psn, PathId p, TimeNs now) {
    const PathSeq seq = NextSeq(p);
    m_->OnRetransmitted(psn, p, seq, now);
    last_tx_[psn.value()] = {p, seq};
  }
  // After SampleBothPaths: PSN 2 on path 0 at 100 us is only late; PSN 3 on
  // path 1 arrives, and the time rule declares PSN 2 lost at 100 us + the
  // reorder window (returned: the window before any learning).
  DurationNs LatePacketTimeLost() {
    const DurationNs before = m_->ReorderWindow(0);
    Send(0, T(100));  // PSN 2
    Send(1, T(101));  // PSN 3
    EXPECT_TRUE(Ack(2, {3}, Psn(3), T(121)));
    ev_.Timer(*m_, T(100) + before);
    ExpectOnlyLoss(2, LossCause::kTime);
    return before;
  }
  // Four first sends on path 0 from `t` (1 us apart); the ack of the last
  // (SACK of the later three) declares the first lost by the gap rule,
  // three seqs deep; it is re-sent on path 1 at t + 30 us. Returns its PSN.
  Psn GapLossReSent(TimeNs t) {
    const Psn first = Send(0, t);
    for (int i = 1; i < 4; ++i) Send(0, t + Us(i));
    const uint32_t f = first.value();
    EXPECT_TRUE(Ack(f, {f + 1, f + 2, f + 3}, first + 3, t + Us(21)));
    ExpectOnlyLoss(f, LossCause::kPathGap);
    EXPECT_EQ(PopAll(), std::vector<uint32_t>{f});
    Resend(first, 1, t + Us(30));
    return first;
  }
  // An ack: cum, the PSNs set in the SACK bitmap (words words), and the
  // latest transmission of `trigger` as echo.
  bool Ack(uint32_t cum, std::vector<uint32_t> sacked, Psn trigger, TimeNs now,
           DurationNs delay = DurationNs::Zero(), bool nak = false,
           size_t words = 4) {
    const auto [path, seq] = last_tx_.at(trigger.value());
    return AckEcho(cum, std::move(sacked), path, seq, now, delay, nak, words);
  }
  bool AckEcho(uint32_t cum, std::vector<uint32_t> sacked, PathId path,
               PathSeq seq, TimeNs now, DurationNs delay = DurationNs::Zero(),
               bool nak = false, size_t words = 4) {
    std::vector<uint64_t> bits(words, 0);
    for (uint32_t p : sacked) {
      const uint32_t off = p - cum - 1;
      bits.at(off / 64) |= uint64_t{1} << (off % 64);
    }
    AckInfo a;
    a.cum = Psn(cum);
    a.sack = absl::MakeConstSpan(bits);
    a.echo_path = path;
    a.echo_path_seq = seq;
    a.ack_delay = delay;
    a.nak = nak;
    a.echo_duplicate = echo_dup_;
    echo_dup_ = false;
    a.arrival = arrival_;
    arrival_ = TimeNs::Infinite();
    return ev_.Ack(*m_, a, now);
  }
  std::vector<uint32_t> PopAll() {
    std::vector<uint32_t> out;
    Psn psn;
    uint64_t tag;
    uint32_t bytes;
    PathId last;
    while (m_->PopRetransmit(&psn, &tag, &bytes, &last)) {
      out.push_back(psn.value());
    }
    return out;
  }

  std::unique_ptr<SentPacketManager> m_;
  Recorder ev_;
  TimeNs arrival_ = TimeNs::Infinite();  // the next ack's arrival
  bool echo_dup_ = false;  // the next ack flags its echo as a duplicate
  std::map<PathId, uint32_t> next_seq_;
  std::map<uint32_t, std::pair<PathId, PathSeq>> last_tx_;
};

TEST_F(SentPacketManagerTest, FirstSendsAreInFlightWithConsecutivePsns) {
  EXPECT_EQ(Send(0, T(0)), Psn(0));
  EXPECT_EQ(Send(1, T(1), 500), Psn(1));
  EXPECT_EQ(m_->next_psn(), Psn(2));
  EXPECT_EQ(m_->packets_in_flight(), 2u);
  EXPECT_EQ(m_->bytes_in_flight(), 1500u);
  EXPECT_TRUE(m_->HasUnacked());
  EXPECT_EQ(m_->lowest_unacked(), Psn(0));
  EXPECT_EQ(m_->counters().packets_sent, 2u);
}

TEST_F(SentPacketManagerTest, RefusedFirstContactResendsWhatIsInFlightOnce) {
  for (int i = 0; i < 3; ++i) Send(static_cast<PathId>(i % 2), T(i));
  EXPECT_EQ(ev_.Refused(*m_), 3u);
  ASSERT_EQ(ev_.lost.size(), 3u);
  for (const Lost& l : ev_.lost) EXPECT_EQ(l.cause, LossCause::kRefused);
  EXPECT_EQ(m_->packets_in_flight(), 0u);
  EXPECT_EQ(PopAll(), (std::vector<uint32_t>{0, 1, 2}));
  for (uint32_t p = 0; p < 3; ++p) Resend(Psn(p), 0, T(10));
  Send(1, T(11));  // new data after the refusal
  // Refusals of the rest of the burst (one challenge per refused
  // datagram) re-send nothing twice, and nothing sent since.
  ev_.Clear();
  EXPECT_EQ(ev_.Refused(*m_), 0u);
  EXPECT_TRUE(ev_.lost.empty());
  EXPECT_EQ(m_->packets_in_flight(), 4u);
  EXPECT_EQ(
      m_->counters().losses_by_cause[static_cast<int>(LossCause::kRefused)],
      3u);
  EXPECT_EQ(m_->counters()
                .retransmits_by_cause[static_cast<int>(LossCause::kRefused)],
            3u);
  // A new session starts afresh.
  m_->Reset(m_->next_psn());
  Send(0, T(20));
  EXPECT_EQ(ev_.Refused(*m_), 1u);
}

TEST_F(SentPacketManagerTest, CumulativeAckAcksAndReleasesPackets) {
  for (int i = 0; i < 3; ++i) Send(0, T(i));
  ASSERT_TRUE(Ack(3, {}, Psn(2), T(20)));
  ASSERT_EQ(ev_.acked.size(), 3u);
  EXPECT_EQ(ev_.acked[0].psn, 0u);
  EXPECT_FALSE(ev_.acked[0].retransmitted);
  EXPECT_EQ(m_->packets_in_flight(), 0u);
  EXPECT_EQ(m_->bytes_in_flight(), 0u);
  EXPECT_FALSE(m_->HasUnacked());
  EXPECT_EQ(m_->lowest_unacked(), Psn(3));
  EXPECT_EQ(m_->NextTimerTime(), TimeNs::Infinite());
}

TEST_F(SentPacketManagerTest,
       SingleLossWithTrafficBehindOnSamePathIsLostOnNextAck) {
  for (int i = 0; i < 5; ++i) Send(0, T(i));
  // PSN 0 vanished; PSN 1 (same path, later seq) arrived.
  ASSERT_TRUE(Ack(0, {1}, Psn(1), T(21)));
  ExpectOnlyLoss(0, LossCause::kPathGap);
  EXPECT_EQ(ev_.lost[0].path, 0);
  EXPECT_EQ(m_->packets_in_flight(), 3u);
  EXPECT_TRUE(m_->HasRetransmit());
  Psn psn;
  uint64_t tag;
  uint32_t bytes;
  PathId last;
  ASSERT_TRUE(m_->PopRetransmit(&psn, &tag, &bytes, &last));
  EXPECT_EQ(psn, Psn(0));
  EXPECT_EQ(tag, 1000u);
  EXPECT_EQ(bytes, 1000u);
  EXPECT_EQ(last, 0);
  EXPECT_FALSE(m_->HasRetransmit());
  EXPECT_EQ(m_->counters().losses_by_cause[0], 1u);
}

TEST_F(SentPacketManagerTest, CrossPathReorderIsNotLoss) {
  Send(0, T(0));  // slow path
  Send(1, T(1));  // fast path, arrives first
  ASSERT_TRUE(Ack(0, {1}, Psn(1), T(10)));
  EXPECT_TRUE(ev_.lost.empty());
  ev_.Timer(*m_, T(30));
  EXPECT_TRUE(ev_.lost.empty());
  ASSERT_TRUE(Ack(2, {}, Psn(0), T(40)));
  EXPECT_TRUE(ev_.lost.empty());
  EXPECT_EQ(ev_.acked.size(), 2u);
  EXPECT_EQ(m_->counters().packets_lost, 0u);
}

TEST_F(SentPacketManagerTest, SackedPacketIsAssumedToProveItsPathOrder) {
  Send(0, T(0));  // PSN 0, path 0 seq 0: lost
  Send(0, T(1));  // PSN 1, path 0 seq 1: arrives, its ack is coalesced
  Send(1, T(2));  // PSN 2, path 1: triggers the ack
  ASSERT_TRUE(Ack(0, {1, 2}, Psn(2), T(20)));
  ExpectOnlyLoss(0, LossCause::kPathGap);
}

TEST_F(SentPacketManagerTest, TimeBasedLossWaitsForTheCandidatesPathWindow) {
  SampleBothPaths();
  EXPECT_EQ(m_->path_srtt(0), Us(20));
  EXPECT_EQ(m_->path_srtt(1), Us(20));
  Send(0, T(100));  // PSN 2: lost
  Send(1, T(101));  // PSN 3: arrives
  ASSERT_TRUE(Ack(2, {3}, Psn(3), T(121)));
  EXPECT_TRUE(ev_.lost.empty());
  // srtt 20us, rttvar 10us (one sample): 100 + 20 * 10/8 + 2 * 10 + 5.
  EXPECT_EQ(m_->ReorderWindow(0), Us(50));
  EXPECT_EQ(m_->NextTimerTime(), T(150));
  ev_.Timer(*m_, T(150) - DurationNs(1));
  EXPECT_TRUE(ev_.lost.empty());
  ev_.Timer(*m_, T(150));
  ExpectOnlyLoss(2, LossCause::kTime);
}

TEST_F(SentPacketManagerTest, PacketsOfOneBurstNeverJudgeEachOtherByTime) {
  SampleBothPaths();
  // One burst at t=100: the backend may send path 1's packet first.
  Send(0, T(100));  // PSN 2
  Send(1, T(100));  // PSN 3: acked first
  ASSERT_TRUE(Ack(2, {3}, Psn(3), T(120)));
  // Past the reorder window (50us), before the RTO (200us after t=120).
  ev_.Timer(*m_, T(250));
  EXPECT_TRUE(ev_.lost.empty());
  // A packet of a later burst arriving does prove PSN 2 late.
  Send(1, T(251));  // PSN 4
  ASSERT_TRUE(Ack(2, {3, 4}, Psn(4), T(271)));
  ExpectOnlyLoss(2, LossCause::kTime);
}

TEST_F(SentPacketManagerTest, SpuriousTimeLossWidensTheReorderWindow) {
  SampleBothPaths();
  const DurationNs before = LatePacketTimeLost();
  // The late copy arrives before the re-send: the loss was wrong.
  ASSERT_TRUE(Ack(4, {}, Psn(2), T(200)));
  EXPECT_EQ(m_->counters().spurious_time_losses, 1u);
  EXPECT_EQ(m_->counters().lost_then_acked, 1u);
  EXPECT_GT(m_->ReorderWindow(0), before);
  // The learnt tolerance decays once spurious losses stop.
  const DurationNs widened = m_->ReorderWindow(0);
  TimeNs now = T(200);
  for (int i = 0; i < 2000 && m_->ReorderWindow(0) >= widened; ++i) {
    now = now + Us(50);
    const Psn p = Send(0, now);
    ASSERT_TRUE(Ack(p.value() + 1, {}, p, now + Us(20)));
  }
  EXPECT_LT(m_->ReorderWindow(0), widened);
}

TEST_F(SentPacketManagerTest, SpuriousGapLossRaisesTheGapThreshold) {
  ASSERT_EQ(GapLossReSent(T(0)), Psn(0));
  EXPECT_EQ(m_->gap_threshold(), 1u);
  // The original (path 0, seq 0) arrives after all: path 0 reorders. Three
  // later seqs had overtaken it, so a gap must now be four deep.
  ASSERT_TRUE(AckEcho(4, {}, 0, PathSeq(0), T(40)));
  EXPECT_EQ(m_->counters().spurious_gap_losses, 1u);
  EXPECT_EQ(m_->counters().spurious_retransmits, 1u);
  EXPECT_EQ(m_->gap_threshold(), 4u);
  ev_.Clear();
  for (int i = 0; i < 6; ++i) Send(0, T(50 + i));  // PSNs 4..9, seqs 4..9
  // PSN 4 missing, three seqs after it arrived: not (yet) a gap loss.
  ASSERT_TRUE(Ack(4, {5, 6, 7}, Psn(7), T(60)));
  EXPECT_TRUE(ev_.lost.empty());
  // Four after it: lost.
  ASSERT_TRUE(Ack(4, {5, 6, 7, 8}, Psn(8), T(61)));
  ExpectOnlyLoss(4, LossCause::kPathGap);
}

TEST_F(SentPacketManagerTest, DuplicateReSendOfAGapLossDoublesTheThreshold) {
  ASSERT_EQ(GapLossReSent(T(0)), Psn(0));
  // The original arrived (acked in a batch whose echo named another
  // packet); the re-send arrives as a duplicate. How far the original was
  // overtaken is unknown: the threshold doubles.
  ASSERT_TRUE(Ack(4, {}, Psn(3), T(35)));
  echo_dup_ = true;
  ASSERT_TRUE(Ack(4, {}, Psn(0), T(40)));
  EXPECT_EQ(m_->counters().spurious_gap_losses, 1u);
  EXPECT_EQ(m_->gap_threshold(), 2u);
}

TEST_F(SentPacketManagerTest,
       DuplicateReSendIsNoProofWhileTheNetworkDuplicates) {
  SampleBothPaths();  // PSNs 0, 1
  // The network duplicates: a first send, never re-sent, arrives twice.
  Send(1, T(50));  // PSN 2
  ASSERT_TRUE(Ack(3, {}, Psn(2), T(70)));
  echo_dup_ = true;
  ASSERT_TRUE(Ack(3, {}, Psn(2), T(71)));
  ASSERT_EQ(m_->counters().duplicate_echoes, 1u);
  ASSERT_EQ(GapLossReSent(T(100)), Psn(3));  // PSNs 3..6
  // The re-send of a packet really lost, duplicated by the network.
  ASSERT_TRUE(Ack(7, {}, Psn(3), T(150)));
  echo_dup_ = true;
  ASSERT_TRUE(Ack(7, {}, Psn(3), T(151)));
  EXPECT_EQ(m_->counters().duplicate_echoes, 2u);
  EXPECT_EQ(m_->counters().spurious_gap_losses, 0u);
  EXPECT_EQ(m_->gap_threshold(), 1u);
}

TEST_F(SentPacketManagerTest, GapThresholdDecaysOnceReorderingStops) {
  SampleBothPaths();
  ASSERT_EQ(GapLossReSent(T(100)), Psn(2));  // PSNs 2..5
  ASSERT_TRUE(AckEcho(6, {}, 0, PathSeq(1), T(140)));
  ASSERT_EQ(m_->gap_threshold(), 4u);
  // Acks with progress and no more proof: it halves per 64 srtt (20 us
  // here), back to the strict rule.
  TimeNs now = T(140);
  int steps = 0;
  uint32_t last = m_->gap_threshold();
  for (int i = 0; i < 1000 && m_->gap_threshold() > 1; ++i) {
    now = now + Us(50);
    const Psn p = Send(0, now);
    ASSERT_TRUE(Ack(p.value() + 1, {}, p, now + Us(20)));
    if (m_->gap_threshold() != last) {
      EXPECT_EQ(m_->gap_threshold(), last / 2);
      last = m_->gap_threshold();
      ++steps;
    }
  }
  EXPECT_EQ(m_->gap_threshold(), 1u);
  EXPECT_EQ(steps, 2);
  EXPECT_GT(now - T(140), Us(20) * 64);
}

TEST_F(SentPacketManagerTest, MaxGapThresholdOneKeepsTheStrictRule) {
  RetransmitOptions o = NoProbe();
  o.max_gap_threshold = 1;
  Make(o);
  ASSERT_EQ(GapLossReSent(T(0)), Psn(0));
  ASSERT_TRUE(AckEcho(4, {}, 0, PathSeq(0), T(40)));
  EXPECT_EQ(m_->counters().spurious_gap_losses, 1u);
  EXPECT_EQ(m_->gap_threshold(), 1u);
  ev_.Clear();
  Send(0, T(50));
  Send(0, T(51));
  ASSERT_TRUE(Ack(4, {5}, Psn(5), T(60)));
  ExpectOnlyLoss(4, LossCause::kPathGap);
}

TEST_F(SentPacketManagerTest,
       LateOriginalOfARetiredPacketStillWidensTheReorderWindow) {
  SampleBothPaths();
  const DurationNs before = LatePacketTimeLost();
  ASSERT_EQ(PopAll(), std::vector<uint32_t>{2});
  const TimeNs resent = T(100) + before;
  Resend(Psn(2), 1, resent);
  // The re-send is acked and PSN 2 leaves the window...
  ASSERT_TRUE(Ack(4, {}, Psn(2), resent + Us(20)));
  EXPECT_EQ(m_->lowest_unacked(), Psn(4));
  EXPECT_EQ(m_->counters().spurious_time_losses, 0u);
  // ... before the late original (path 0, seq 1) is echoed.
  ASSERT_TRUE(AckEcho(4, {}, 0, PathSeq(1), resent + Us(25)));
  EXPECT_EQ(m_->counters().spurious_retransmits, 1u);
  EXPECT_EQ(m_->counters().spurious_time_losses, 1u);
  EXPECT_GT(m_->ReorderWindow(0), before);
}

TEST_F(SentPacketManagerTest, TimersCoverTheReceiversAckDelay) {
  // Acks held 500us at the receiver: the path RTT is 20us, but the sender
  // waits 520us for each ack, and its timers must allow for that.
  TimeNs t = T(0);
  for (int i = 0; i < 20; ++i) {
    const Psn p = Send(0, t);
    ASSERT_TRUE(Ack(p.value() + 1, {}, p, t + Us(520), Us(500)));
    t = t + Us(600);
  }
  EXPECT_EQ(m_->srtt(), Us(20));
  EXPECT_GE(m_->rto(), Us(520));
}

TEST_F(SentPacketManagerTest, RttSampleEndsWhenTheAckArrivedNotWhenItIsRead) {
  // The path RTT is 20us; each ack waits 3ms in the socket before a busy
  // sender reads it. With the kernel's arrival time the sample stays 20us.
  TimeNs t = T(0);
  for (int i = 0; i < 10; ++i) {
    const Psn p = Send(0, t);
    arrival_ = t + Us(20);
    ASSERT_TRUE(Ack(p.value() + 1, {}, p, t + Us(3020)));
    t = t + Us(4000);
  }
  EXPECT_EQ(m_->srtt(), Us(20));
  EXPECT_EQ(m_->min_rtt(), Us(20));
  // An arrival after the read, or before the send, is not believed.
  const Psn p = Send(0, t);
  arrival_ = t - Us(5);
  ASSERT_TRUE(Ack(p.value() + 1, {}, p, t + Us(20)));
  EXPECT_EQ(m_->min_rtt(), Us(20));
  const Psn q = Send(0, t + Us(100));
  arrival_ = t + Us(900);
  ASSERT_TRUE(Ack(q.value() + 1, {}, q, t + Us(300)));
  EXPECT_LT(m_->srtt(), Us(200));  // the 200us read time, not 800us
}

TEST_F(SentPacketManagerTest, RtoWaitsForAWholeRtoWithoutProgress) {
  // A deep queue: ten packets sent at once drain one per 50us. The oldest
  // waits far longer than an RTO, but acks keep making progress.
  for (int i = 0; i < 10; ++i) Send(0, T(0));
  for (uint32_t k = 0; k < 9; ++k) {
    const TimeNs t = T(100 + 50 * k);
    ASSERT_TRUE(Ack(k + 1, {}, Psn(k), t));
    ev_.Timer(*m_, t);
  }
  EXPECT_EQ(m_->counters().rtos, 0u);
  EXPECT_TRUE(ev_.lost.empty());
  // PSN 9 never arrives: the RTO fires once progress stops for an RTO.
  const TimeNs last = T(100 + 50 * 8);
  const DurationNs rto = m_->rto();
  TimeNs fired = TimeNs::Infinite();
  for (int i = 0; i < 20 && m_->counters().rtos == 0; ++i) {
    fired = m_->NextTimerTime();
    ev_.Timer(*m_, fired);
  }
  ExpectOnlyLoss(9, LossCause::kRto);
  EXPECT_EQ(fired, last + rto);
}

TEST_F(SentPacketManagerTest, EchoOfACopyTheRtoGaveUpOnUndoesTheRto) {
  Send(0, T(0));
  ev_.Timer(*m_, T(300));
  ASSERT_EQ(m_->counters().rtos, 1u);
  EXPECT_EQ(m_->current_rto(), Us(600));
  EXPECT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, T(300));
  // The ack names the original transmission (path 0, seq 0): the host or
  // network was only slow.
  ASSERT_TRUE(AckEcho(1, {}, 0, PathSeq(0), T(310)));
  EXPECT_EQ(m_->counters().spurious_rtos, 1u);
  EXPECT_EQ(ev_.spurious_rtos, 1);
  EXPECT_EQ(m_->current_rto(), m_->rto());
  // The next RTO waits at least twice the old floor.
  EXPECT_EQ(m_->rto_floor(), Us(400));
  EXPECT_GE(m_->rto(), Us(400));
  // A genuine RTO (the echo names the re-send) is not undone.
  Send(0, T(400));
  TimeNs due = m_->NextTimerTime();
  for (int i = 0; i < 10 && m_->counters().rtos < 2; ++i) {
    ev_.Timer(*m_, due);
    if (m_->counters().rtos < 2) due = m_->NextTimerTime();
  }
  ASSERT_EQ(m_->counters().rtos, 2u);
  PopAll();
  Resend(Psn(1), 1, due);
  ASSERT_TRUE(Ack(2, {}, Psn(1), due + Us(10)));
  EXPECT_EQ(m_->counters().spurious_rtos, 1u);
  EXPECT_EQ(ev_.spurious_rtos, 1);
}

TEST_F(SentPacketManagerTest, DuplicateEchoOfAnRtoResendUndoesTheRto) {
  Send(0, T(0));
  Send(0, T(0));
  ev_.Timer(*m_, T(300));
  ASSERT_EQ(m_->counters().rtos, 1u);
  EXPECT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, T(300));
  // Both originals arrive (the ack echoes the second one), then the re-send
  // of PSN 0 arrives as a duplicate and is echoed, flagged.
  ASSERT_TRUE(AckEcho(2, {}, 0, PathSeq(1), T(320)));
  // PSN 1, sent once before the RTO, arrived after it: undone already (the
  // F-RTO rule, see below); the duplicate echo does not count it twice.
  EXPECT_EQ(m_->counters().spurious_rtos, 1u);
  echo_dup_ = true;
  ASSERT_TRUE(Ack(2, {}, Psn(0), T(330)));
  EXPECT_EQ(m_->counters().duplicate_echoes, 1u);
  EXPECT_EQ(m_->counters().spurious_rtos, 1u);
  EXPECT_EQ(ev_.spurious_rtos, 1);
  EXPECT_EQ(ev_.spurious, std::vector<uint32_t>{0});
  EXPECT_EQ(m_->current_rto(), m_->rto());
}

// F-RTO: after a receiver stall the first ack echoes a packet of its
// backlog and covers data sent once, before the RTO: the timeout was
// premature and is undone, whatever the echo names.
TEST_F(SentPacketManagerTest, PreRtoDataAckedAfterTheRtoUndoesIt) {
  for (int i = 0; i < 4; ++i) Send(0, T(0));
  ev_.Timer(*m_, T(300));
  ASSERT_EQ(m_->counters().rtos, 1u);
  EXPECT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, T(300));
  ASSERT_TRUE(AckEcho(4, {}, 0, PathSeq(3), T(900)));
  EXPECT_EQ(m_->counters().spurious_rtos, 1u);
  EXPECT_EQ(ev_.spurious_rtos, 1);
  EXPECT_EQ(m_->current_rto(), m_->rto());
}

// Not when only the packets the RTO re-sent are acknowledged: their
// re-sends may be what arrived.
TEST_F(SentPacketManagerTest, AckOfOnlyTheResentDataLeavesTheRto) {
  Send(0, T(0));
  ev_.Timer(*m_, T(300));
  ASSERT_EQ(m_->counters().rtos, 1u);
  PopAll();
  Resend(Psn(0), 1, T(300));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(320)));  // echoes the re-send
  EXPECT_EQ(m_->counters().spurious_rtos, 0u);
  // Nor by data sent after the RTO.
  const Psn p = Send(0, T(330));
  ASSERT_TRUE(Ack(p.value() + 1, {}, p, T(350)));
  EXPECT_EQ(m_->counters().spurious_rtos, 0u);
}

TEST_F(SentPacketManagerTest, DuplicateInTheSameReceiveBatchUndoesTheRto) {
  // The receiver stalled: the original and the RTO's re-send reach it in
  // one batch, and its single ack echoes the re-send flagged as duplicate.
  Send(0, T(0));
  ev_.Timer(*m_, T(300));
  ASSERT_EQ(m_->counters().rtos, 1u);
  PopAll();
  Resend(Psn(0), 1, T(300));
  echo_dup_ = true;
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(900)));
  EXPECT_EQ(m_->counters().spurious_rtos, 1u);
  EXPECT_EQ(m_->counters().spurious_retransmits, 1u);
}

TEST_F(SentPacketManagerTest, EchoOfANeededResendIsNotADuplicate) {
  Send(0, T(0));
  ev_.Timer(*m_, T(300));
  ASSERT_EQ(m_->counters().rtos, 1u);
  PopAll();
  Resend(Psn(0), 1, T(300));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(320)));  // the re-send acks it first
  EXPECT_EQ(m_->counters().duplicate_echoes, 0u);
  EXPECT_EQ(m_->counters().spurious_rtos, 0u);
  EXPECT_TRUE(ev_.spurious.empty());
}

TEST_F(SentPacketManagerTest, TenfoldSlowerPathIsNotDeclaredLostByFastAcks) {
  // Path 0: 20us RTT, path 1: 200us RTT, both sampled.
  Send(0, T(0));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(20)));
  Send(1, T(20));
  ASSERT_TRUE(Ack(2, {}, Psn(1), T(220)));
  // A slow-path packet, then fast ones acked long before it arrives.
  const Psn slow = Send(1, T(300));
  for (int i = 1; i <= 8; ++i) {
    const Psn fast = Send(0, T(300 + 20 * i));
    std::vector<uint32_t> sacked;
    for (int j = 1; j <= i; ++j) sacked.push_back(slow.value() + j);
    ASSERT_TRUE(Ack(slow.value(), sacked, fast, T(320 + 20 * i)));
    ev_.Timer(*m_, T(320 + 20 * i));
  }
  EXPECT_TRUE(ev_.lost.empty());
  ASSERT_TRUE(Ack(m_->next_psn().value(), {}, slow, T(500)));
  EXPECT_TRUE(ev_.lost.empty());
  EXPECT_EQ(m_->counters().packets_lost, 0u);
}

TEST_F(SentPacketManagerTest, UnsampledPathUsesRtoAsReorderWindow) {
  Send(0, T(0));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(10)));  // peer srtt 10us
  Send(1, T(20));                          // path 1: no sample yet
  Send(0, T(21));
  ASSERT_TRUE(Ack(1, {2}, Psn(2), T(31)));
  // Not 20 + 10 * 1.25 + 5: path 1 is judged by rto() (200us floor).
  ev_.Timer(*m_, T(100));
  EXPECT_TRUE(ev_.lost.empty());
  EXPECT_EQ(m_->NextTimerTime(), T(220));
}

TEST_F(SentPacketManagerTest, RtoFiresBacksOffAndResetsOnAck) {
  Send(0, T(0));
  // Initial srtt 100us, rttvar 50us: rto 300us.
  EXPECT_EQ(m_->rto(), Us(300));
  EXPECT_EQ(m_->NextTimerTime(), T(300));
  ev_.Timer(*m_, T(299));
  EXPECT_TRUE(ev_.lost.empty());
  ev_.Timer(*m_, T(300));
  ASSERT_EQ(ev_.lost.size(), 1u);
  EXPECT_EQ(ev_.lost[0].cause, LossCause::kRto);
  EXPECT_EQ(m_->counters().rtos, 1u);
  EXPECT_EQ(m_->rtos_since_progress(), 1u);
  EXPECT_EQ(m_->current_rto(), Us(600));
  EXPECT_EQ(m_->NextTimerTime(), TimeNs::Infinite());  // nothing in flight
  EXPECT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, T(300));
  EXPECT_EQ(m_->NextTimerTime(), T(900));
  ev_.Timer(*m_, T(900));
  EXPECT_EQ(m_->counters().rtos, 2u);
  EXPECT_EQ(m_->rtos_since_progress(), 2u);
  EXPECT_EQ(m_->current_rto(), Us(1200));
  EXPECT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 2, T(900));
  EXPECT_EQ(m_->NextTimerTime(), T(2100));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(950)));
  EXPECT_EQ(m_->counters().retransmits_by_cause[2], 2u);
  EXPECT_EQ(m_->current_rto(), m_->rto());
  EXPECT_EQ(m_->rtos_since_progress(), 0u);  // progress
}

TEST_F(SentPacketManagerTest, RtoBackoffStopsAtMaxRto) {
  RetransmitOptions o = NoProbe();
  o.max_rto = Us(1000);
  Make(o);
  Send(0, T(0));
  TimeNs now = T(0);
  for (int i = 0; i < 6; ++i) {
    now = m_->NextTimerTime();
    ev_.Timer(*m_, now);
    PopAll();
    Resend(Psn(0), 0, now);
  }
  EXPECT_EQ(m_->current_rto(), Us(1000));
  EXPECT_EQ(m_->NextTimerTime(), now + Us(1000));
  // The backoff stopped growing; the count of RTOs without progress not.
  EXPECT_EQ(m_->rtos_since_progress(), 6u);
}

TEST_F(SentPacketManagerTest, SilentPeerGetsOneResendPerRtoNotTheWindow) {
  // A window of 20 packets on one path, and nothing ever answers (a dead
  // or paused peer). Each RTO re-sends the oldest packet only, and the next
  // RTO comes a whole backed-off RTO after the last: the packets behind
  // the front, sent long ago, must not be overdue at once.
  RetransmitOptions o = NoProbe();
  o.max_rto = Us(1000);
  Make(o);
  for (int i = 0; i < 20; ++i) Send(0, T(i));
  TimeNs now = T(0);
  TimeNs prev = T(0);
  for (int i = 0; i < 8; ++i) {
    now = m_->NextTimerTime();
    ASSERT_FALSE(now.IsInfinite());
    EXPECT_GE(now - prev, Us(300)) << "RTO " << i << " came too soon";
    ev_.Timer(*m_, now);
    const std::vector<uint32_t> resent = PopAll();
    ASSERT_EQ(resent.size(), 1u) << "RTO " << i;
    Resend(Psn(resent[0]), 0, now);
    prev = now;
  }
  EXPECT_EQ(m_->counters().rtos, 8u);
  EXPECT_EQ(ev_.lost.size(), 8u);
  // Backed off to max_rto: 300 + 600 + 1000 * 6 us.
  EXPECT_EQ(now, T(6900));
}

TEST_F(SentPacketManagerTest, TailProbeQueuesNewestInFlightPacketOnce) {
  Make(RetransmitOptions{});
  Send(0, T(0));
  Send(1, T(1));
  Send(2, T(2));
  // 2 + 1.5 * 100 + 10 = 162us, before the 300us RTO.
  EXPECT_EQ(m_->NextTimerTime(), T(162));
  ev_.Timer(*m_, T(162));
  ExpectOnlyLoss(2, LossCause::kTailProbe);
  EXPECT_EQ(m_->counters().tail_probes, 1u);
  EXPECT_EQ(PopAll(), std::vector<uint32_t>{2});
  Resend(Psn(2), 3, T(162));
  EXPECT_EQ(m_->counters().retransmits_by_cause[3], 1u);
  // No second probe: next is the RTO of PSN 0.
  EXPECT_EQ(m_->NextTimerTime(), T(300));
  // The probe's answer acks the tail; PSN 0, sent 230us ago on a path
  // without a sample (window = rto() = 200us), is now lost by time.
  ASSERT_TRUE(Ack(0, {1, 2}, Psn(2), T(230)));
  EXPECT_EQ(ev_.acked.size(), 2u);
  ASSERT_EQ(ev_.lost.size(), 2u);
  EXPECT_EQ(ev_.lost[1].psn, 0u);
  EXPECT_EQ(ev_.lost[1].cause, LossCause::kTime);
}

TEST_F(SentPacketManagerTest, GoBackNNakDeclaresEveryPsnFromCumLost) {
  RetransmitOptions o = NoProbe();
  o.go_back_n = true;
  Make(o);
  for (int i = 0; i < 5; ++i) Send(0, T(i));
  ASSERT_TRUE(Ack(2, {}, Psn(3), T(20), DurationNs::Zero(), /*nak=*/true,
                  /*words=*/0));
  ASSERT_EQ(ev_.lost.size(), 3u);
  for (const Lost& l : ev_.lost) EXPECT_EQ(l.cause, LossCause::kNak);
  EXPECT_EQ(PopAll(), (std::vector<uint32_t>{2, 3, 4}));
  Resend(Psn(2), 0, T(21));
  // A second NAK for the same hole, generated before the re-send arrived.
  ASSERT_TRUE(Ack(2, {}, Psn(4), T(22), DurationNs::Zero(), true, 0));
  EXPECT_EQ(ev_.lost.size(), 3u);
  EXPECT_EQ(m_->counters().naks, 1u);
  EXPECT_EQ(m_->counters().naks_ignored, 1u);
}

TEST_F(SentPacketManagerTest, GoBackNRtoDeclaresEverythingInFlightLost) {
  RetransmitOptions o = NoProbe();
  o.go_back_n = true;
  Make(o);
  for (int i = 0; i < 4; ++i) Send(0, T(10 * i));
  ev_.Timer(*m_, T(300));
  EXPECT_EQ(ev_.lost.size(), 4u);
  EXPECT_EQ(PopAll(), (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST_F(SentPacketManagerTest, NakIsIgnoredOutsideGoBackN) {
  for (int i = 0; i < 3; ++i) Send(0, T(i));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(20), DurationNs::Zero(), true, 0));
  EXPECT_TRUE(ev_.lost.empty());
  EXPECT_EQ(m_->counters().naks_ignored, 1u);
}

TEST_F(SentPacketManagerTest, PsnWraparoundIsHandled) {
  Make(NoProbe(), Psn(0xFFFFFFF8u));
  for (int i = 0; i < 16; ++i) Send(0, T(i));
  EXPECT_EQ(m_->next_psn(), Psn(8));
  // PSN 0xFFFFFFFE lost; everything else up to PSN 3 arrived.
  std::vector<uint32_t> sacked;
  for (uint32_t p = 0xFFFFFFFFu; p != 4; ++p) sacked.push_back(p);
  ASSERT_TRUE(Ack(0xFFFFFFFEu, sacked, Psn(3), T(30)));
  ASSERT_EQ(ev_.lost.size(), 1u);
  EXPECT_EQ(ev_.lost[0].psn, 0xFFFFFFFEu);
  EXPECT_EQ(m_->lowest_unacked(), Psn(0xFFFFFFFEu));
  EXPECT_EQ(PopAll(), std::vector<uint32_t>{0xFFFFFFFEu});
  Resend(Psn(0xFFFFFFFEu), 1, T(31));
  ASSERT_TRUE(Ack(8, {}, Psn(7), T(60)));
  EXPECT_FALSE(m_->HasUnacked());
  EXPECT_EQ(m_->lowest_unacked(), Psn(8));
  EXPECT_EQ(ev_.acked.size(), 16u);
}

TEST_F(SentPacketManagerTest,
       AckReferringToUnsentPsnsIsRejectedAndChangesNothing) {
  for (int i = 0; i < 3; ++i) Send(0, T(i));
  const SenderCounters before = m_->counters();
  EXPECT_FALSE(Ack(4, {}, Psn(2), T(20)));   // cum beyond next_psn (3)
  EXPECT_FALSE(Ack(0, {3}, Psn(2), T(20)));  // SACK bit for PSN 3
  EXPECT_FALSE(Ack(0, {200}, Psn(2), T(20)));
  EXPECT_TRUE(ev_.acked.empty());
  EXPECT_TRUE(ev_.rtts.empty());
  EXPECT_EQ(m_->packets_in_flight(), 3u);
  EXPECT_EQ(m_->counters().invalid_acks, 3u);
  EXPECT_EQ(m_->counters().acks_processed, before.acks_processed);
  EXPECT_TRUE(Ack(3, {}, Psn(2), T(20)));  // cum == next_psn is fine
}

TEST_F(SentPacketManagerTest, StaleAckIsHarmless) {
  for (int i = 0; i < 4; ++i) Send(0, T(i));
  ASSERT_TRUE(Ack(4, {}, Psn(3), T(20)));
  ev_.Clear();
  ASSERT_TRUE(Ack(1, {2}, Psn(2), T(21)));  // reordered, older ack
  EXPECT_TRUE(ev_.acked.empty());
  EXPECT_TRUE(ev_.lost.empty());
  EXPECT_EQ(m_->lowest_unacked(), Psn(4));
}

TEST_F(SentPacketManagerTest,
       RttSampleSubtractsAckDelayAndIsTakenOncePerTransmission) {
  Send(0, T(0));
  Send(0, T(0));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(30), Us(10)));
  ASSERT_EQ(ev_.rtts.size(), 1u);
  EXPECT_EQ(ev_.rtts[0].first, 0);
  EXPECT_EQ(ev_.rtts[0].second, Us(20));
  EXPECT_EQ(m_->srtt(), Us(20));
  EXPECT_EQ(m_->min_rtt(), Us(20));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(40), Us(10)));  // duplicated ack
  EXPECT_EQ(ev_.rtts.size(), 1u);
  // An ack delay longer than the round trip cannot be right: no sample.
  ASSERT_TRUE(Ack(2, {}, Psn(1), T(50), Us(60)));
  EXPECT_EQ(ev_.rtts.size(), 1u);
  EXPECT_EQ(m_->counters().rtt_samples_rejected, 1u);
}

TEST_F(SentPacketManagerTest,
       RttSampleNamesTheEchoedCopyOfARetransmittedPacket) {
  Send(0, T(0));
  Send(0, T(1));
  ASSERT_TRUE(Ack(0, {1}, Psn(1), T(21)));  // PSN 0 lost by gap
  ev_.rtts.clear();
  ASSERT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, T(50));
  // The re-send on path 1 is echoed: RTT from its own send time.
  ASSERT_TRUE(Ack(2, {}, Psn(0), T(75)));
  ASSERT_EQ(ev_.rtts.size(), 1u);
  EXPECT_EQ(ev_.rtts[0].first, 1);
  EXPECT_EQ(ev_.rtts[0].second, Us(25));
  ASSERT_EQ(ev_.acked.size(), 2u);
  EXPECT_TRUE(ev_.acked[1].retransmitted);
  EXPECT_EQ(ev_.acked[1].path, 1);
  EXPECT_TRUE(ev_.spurious.empty());
}

// A packet probed, then given up on by the RTO: two re-sends. The original
// arrives, then both re-sends arrive as duplicates, after the packet left
// the window. Each re-send is counted once as spurious: never more spurious
// re-sends than re-sends (seen in a lossless ping-pong: 11 against 10).
TEST_F(SentPacketManagerTest,
       EachUnneededResendIsCountedOnceAfterThePacketIsGone) {
  Make(RetransmitOptions{});
  Send(0, T(0));
  const TimeNs probe_at = m_->NextTimerTime();
  ev_.Timer(*m_, probe_at);  // the tail probe
  ASSERT_EQ(m_->counters().tail_probes, 1u);
  ASSERT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, probe_at);
  const auto probe = last_tx_.at(0);
  TimeNs rto_at = m_->NextTimerTime();
  for (int i = 0; i < 10 && m_->counters().rtos == 0; ++i) {
    rto_at = m_->NextTimerTime();
    ev_.Timer(*m_, rto_at);  // up to the RTO
  }
  ASSERT_EQ(m_->counters().rtos, 1u);
  ASSERT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 2, rto_at);
  const auto rto = last_tx_.at(0);
  ASSERT_EQ(m_->counters().retransmits, 2u);
  // The original was only slow: it is acked, and PSN 0 leaves the window.
  ASSERT_TRUE(AckEcho(1, {}, 0, PathSeq(0), rto_at + Us(10)));
  echo_dup_ = true;
  ASSERT_TRUE(AckEcho(1, {}, probe.first, probe.second, rto_at + Us(20)));
  echo_dup_ = true;
  ASSERT_TRUE(AckEcho(1, {}, rto.first, rto.second, rto_at + Us(30)));
  EXPECT_EQ(m_->counters().spurious_retransmits, 2u);
  EXPECT_EQ(ev_.spurious.size(), 2u);
}

TEST_F(SentPacketManagerTest, EchoOfTheOriginalAfterARetransmitIsSpurious) {
  Send(0, T(0));
  ev_.Timer(*m_, T(300));  // RTO declares PSN 0 lost
  ASSERT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, T(300));
  // The original (path 0, seq 0) was only slow.
  ASSERT_TRUE(AckEcho(1, {}, 0, PathSeq(0), T(310)));
  ASSERT_EQ(ev_.spurious.size(), 1u);
  EXPECT_EQ(ev_.spurious[0], 0u);
  EXPECT_EQ(m_->counters().spurious_retransmits, 1u);
  ASSERT_EQ(ev_.acked.size(), 1u);
  EXPECT_EQ(ev_.acked[0].path, 0);  // the copy that arrived
  // RTT measured from the original send, not the re-send.
  ASSERT_EQ(ev_.rtts.size(), 1u);
  EXPECT_EQ(ev_.rtts[0].second, Us(310));
  // The re-send's own ack later is no news.
  ASSERT_TRUE(AckEcho(1, {}, 1, PathSeq(0), T(320)));
  EXPECT_EQ(ev_.spurious.size(), 1u);
  EXPECT_EQ(ev_.acked.size(), 1u);
}

TEST_F(SentPacketManagerTest, EventTxNamesTheLostTransmissionAndItsEvidence) {
  SampleBothPaths();  // path 0 seq 0, path 1 seq 0
  Send(0, T(100));    // PSN 2: path 0 seq 1
  Send(1, T(110));    // PSN 3: path 1 seq 1
  ASSERT_TRUE(Ack(2, {3}, Psn(3), T(130)));
  ev_.Timer(*m_, T(400));
  ExpectOnlyLoss(2, LossCause::kTime);
  ASSERT_EQ(ev_.lost_tx.size(), 1u);
  EXPECT_EQ(ev_.lost_tx[0].path, 0);
  EXPECT_EQ(ev_.lost_tx[0].seq, PathSeq(1));
  EXPECT_TRUE(ev_.lost_tx[0].overtaken);  // PSN 3, sent later, arrived
  // An RTO with nothing sent later known to have arrived: no evidence.
  ev_.Clear();
  Send(1, T(500));  // PSN 4: path 1 seq 2
  for (int i = 0; i < 50 && ev_.lost.empty(); ++i) {
    ev_.Timer(*m_, m_->NextTimerTime());
  }
  ASSERT_EQ(ev_.lost_tx.size(), 1u);
  EXPECT_EQ(ev_.lost[0].cause, LossCause::kRto);
  EXPECT_EQ(ev_.lost_tx[0].seq, PathSeq(2));
  EXPECT_FALSE(ev_.lost_tx[0].overtaken);
}

TEST_F(SentPacketManagerTest, AckThroughAnEarlierCopyReportsTheReSendAsOrphan) {
  Send(0, T(0));
  ev_.Timer(*m_, T(300));  // RTO declares PSN 0 (path 0 seq 0) lost
  ASSERT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, T(300));  // path 1 seq 0
  ASSERT_TRUE(AckEcho(1, {}, 0, PathSeq(0), T(310)));
  ASSERT_EQ(ev_.acked_tx.size(), 1u);
  const EventTx& tx = ev_.acked_tx[0];
  EXPECT_EQ(tx.path, 0);
  EXPECT_EQ(tx.seq, PathSeq(0));
  EXPECT_FALSE(tx.was_outstanding);  // already reported lost by the RTO
  ASSERT_TRUE(tx.has_orphan);        // the re-send will get no outcome
  EXPECT_EQ(tx.orphan_path, 1);
  EXPECT_EQ(tx.orphan_seq, PathSeq(0));
  // A plain ack of the latest copy: outstanding, no orphan.
  Send(2, T(320));
  ASSERT_TRUE(Ack(2, {}, Psn(1), T(330)));
  ASSERT_EQ(ev_.acked_tx.size(), 2u);
  EXPECT_TRUE(ev_.acked_tx[1].was_outstanding);
  EXPECT_FALSE(ev_.acked_tx[1].has_orphan);
  EXPECT_EQ(ev_.acked_tx[1].path, 2);
}

TEST_F(SentPacketManagerTest,
       SpuriousIsDetectedEvenAfterTheRetransmitWasAcked) {
  Send(0, T(0));
  ev_.Timer(*m_, T(300));
  PopAll();
  Resend(Psn(0), 1, T(300));
  ASSERT_TRUE(AckEcho(1, {}, 1, PathSeq(0), T(320)));
  EXPECT_TRUE(ev_.spurious.empty());
  ASSERT_TRUE(AckEcho(1, {}, 0, PathSeq(0), T(321)));  // late original
  EXPECT_EQ(ev_.spurious.size(), 1u);
}

TEST_F(SentPacketManagerTest, PacketBeyondSackReachIsUnknownNotLost) {
  Send(1, T(0));                            // PSN 0
  Send(1, T(1));                            // PSN 1
  Send(2, T(2));                            // PSN 2
  Send(0, T(3));                            // PSN 3: path 0 seq 0
  ASSERT_TRUE(Ack(0, {1}, Psn(1), T(20)));  // PSN 0 lost by gap on path 1
  ASSERT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 0, T(21));  // path 0 seq 1, after PSN 3's seq 0
  ev_.Clear();
  // Ack without a bitmap: PSN 3 is beyond its reach.
  ASSERT_TRUE(Ack(2, {}, Psn(0), T(40), DurationNs::Zero(), false, 0));
  EXPECT_TRUE(ev_.lost.empty());
  // With one bitmap word PSN 3 is reportable and missing: lost by gap.
  ASSERT_TRUE(Ack(2, {}, Psn(0), T(41), DurationNs::Zero(), false, 1));
  ExpectOnlyLoss(3, LossCause::kPathGap);
}

TEST_F(SentPacketManagerTest,
       SpuriousTailProbeDoublesTheProbeTimeoutUntilItDecays) {
  Make(RetransmitOptions{.max_pto_shift = 3});
  TimeNs t = T(0);
  ASSERT_NO_FATAL_FAILURE(SettleEstimates(&t));
  const DurationNs base = m_->pto();
  TimeNs probe_at;
  ASSERT_NO_FATAL_FAILURE(SpuriousTailProbe(t, &probe_at));
  EXPECT_EQ(probe_at, t + base);
  EXPECT_GE(m_->pto(), base * 2 - Us(2));  // srtt moved a little
  // 256 srtt of clean round trips later, it has come back down.
  t = probe_at + Us(100);
  for (int i = 0; i < 2000 && m_->pto() > base + Us(5); ++i) {
    const Psn q = Send(0, t);
    ASSERT_TRUE(Ack(q.value() + 1, {}, q, t + Us(20)));
    t = t + Us(30);
  }
  EXPECT_LE(m_->pto(), base + Us(5));
}

// Steady answers: the probe waits 1.5 srtt (+ ack delay). Answers that
// spread widely (a receiver woken from sleep): at least srtt + 4 rttvar.
TEST_F(SentPacketManagerTest, ProbeTimeoutCoversTheSpreadOfTheAnswers) {
  Make(RetransmitOptions{});
  TimeNs t = T(0);
  ASSERT_NO_FATAL_FAILURE(SettleEstimates(&t));  // 20 answers of 20 us
  const DurationNs ack_delay = RetransmitOptions{}.max_ack_delay;
  EXPECT_LE(m_->pto(), m_->srtt() * 3 / 2 + ack_delay + Us(1));
  for (int i = 0; i < 40; ++i) {
    const Psn p = Send(0, t);
    ASSERT_TRUE(Ack(p.value() + 1, {}, p, t + Us(i % 2 == 0 ? 10 : 90)));
    t = t + Us(100);
  }
  // Mean ~50 us, spread ~40 us: srtt + 4 rttvar is well above 1.5 srtt.
  EXPECT_GT(m_->pto(), m_->srtt() * 3 / 2 + ack_delay + Us(20));
  EXPECT_GE(m_->pto(), m_->srtt() + m_->rttvar() * 4 + ack_delay);
}

// Paths of very different delay: most answers come over fast paths, so the
// peer-wide probe timeout is theirs; a packet on the slow path gets its
// path's own round trip before it is probed.
TEST_F(SentPacketManagerTest, ProbeWaitsForTheNewestPacketsOwnPath) {
  // Path 1 answered once in 300 us, path 0 many times in 20 us since.
  auto settle = [&](TimeNs* t) {
    for (int i = 0; i < 60; ++i) {
      const Psn p = Send(i == 0 ? 1 : 0, *t);
      ASSERT_TRUE(Ack(p.value() + 1, {}, p, *t + Us(i == 0 ? 300 : 20)));
      *t = *t + Us(400);
    }
  };
  Make(RetransmitOptions{});
  TimeNs t = T(0);
  ASSERT_NO_FATAL_FAILURE(settle(&t));
  const DurationNs pto = m_->pto();
  ASSERT_LT(pto, Us(250)) << "the peer-wide timeout is the fast paths'";
  Send(1, t);
  ev_.Timer(*m_, t + pto + Us(1));
  EXPECT_TRUE(ev_.lost.empty()) << "probed before its path could answer";
  ev_.Timer(*m_, t + Us(300));
  EXPECT_TRUE(ev_.lost.empty()) << "probed before its path could answer";
  // On a fast path the peer-wide timeout applies, as before.
  Make(RetransmitOptions{});
  t = T(0);
  ASSERT_NO_FATAL_FAILURE(settle(&t));
  Send(0, t);
  ev_.Timer(*m_, t + m_->pto() + Us(1));
  ASSERT_EQ(ev_.lost.size(), 1u);
  EXPECT_EQ(ev_.lost[0].cause, LossCause::kTailProbe);
}

TEST_F(SentPacketManagerTest,
       ByDefaultASpuriousTailProbeLeavesTheTimeoutAlone) {
  Make(RetransmitOptions{});
  TimeNs t = T(0);
  ASSERT_NO_FATAL_FAILURE(SettleEstimates(&t));
  const DurationNs base = m_->pto();
  TimeNs probe_at;
  // (It checks that the spurious probe is still counted.)
  ASSERT_NO_FATAL_FAILURE(SpuriousTailProbe(t, &probe_at));
  EXPECT_LE(m_->pto(), base + Us(5));  // srtt moved a little, no doubling
}

TEST_F(SentPacketManagerTest, OldCopyIsDeadWhenANewerTransmissionIsInFlight) {
  Make(RetransmitOptions{});
  Send(0, T(0));                        // PSN 0 path 0 seq 0
  ev_.Timer(*m_, m_->NextTimerTime());  // tail probe of PSN 0
  ASSERT_EQ(PopAll(), std::vector<uint32_t>{0});
  Resend(Psn(0), 1, T(220));  // probe on path 1
  Send(0, T(221));            // PSN 1 path 0 seq 1
  ev_.Clear();
  // PSN 1 arrives on path 0: the old PSN 0 copy before it is dead, but the
  // probe is still in flight, so PSN 0 is not declared lost again.
  ASSERT_TRUE(Ack(0, {1}, Psn(1), T(241)));
  EXPECT_TRUE(ev_.lost.empty());
}

TEST_F(SentPacketManagerTest,
       RetransmitQueueIsLowestPsnFirstAndSkipsAckedOnes) {
  for (int i = 0; i < 6; ++i) Send(i % 2, T(i));
  // 0, 1 lost on their paths; 2..5 arrived.
  ASSERT_TRUE(Ack(0, {2, 3, 4, 5}, Psn(5), T(30)));
  ASSERT_EQ(ev_.lost.size(), 2u);
  EXPECT_EQ(m_->bytes_in_flight(), 0u);
  // PSN 0 turns up after all (was only late).
  ASSERT_TRUE(Ack(1, {2, 3, 4, 5}, Psn(5), T(31)));
  EXPECT_EQ(m_->counters().lost_then_acked, 1u);
  Psn psn;
  uint64_t tag;
  uint32_t bytes;
  PathId last;
  ASSERT_TRUE(m_->PeekRetransmit(&psn, &tag, &bytes, &last));
  EXPECT_EQ(psn, Psn(1));
  EXPECT_EQ(last, 1);
  EXPECT_EQ(PopAll(), std::vector<uint32_t>{1});
}

TEST_F(SentPacketManagerTest, RerouteStopsGapInferenceAcrossTheChange) {
  Send(0, T(0));  // old route
  m_->OnPathRerouted(0);
  Send(0, T(1));  // new route, may overtake
  ASSERT_TRUE(Ack(0, {1}, Psn(1), T(10)));
  EXPECT_TRUE(ev_.lost.empty());
  ASSERT_TRUE(Ack(2, {}, Psn(0), T(12)));  // the old route delivers late
  // Gap inference on the new route still works.
  Send(0, T(20));  // PSN 2 lost
  Send(0, T(21));  // PSN 3
  ASSERT_TRUE(Ack(2, {3}, Psn(3), T(31)));
  ASSERT_EQ(ev_.lost.size(), 1u);
  EXPECT_EQ(ev_.lost[0].psn, 2u);
}

TEST_F(SentPacketManagerTest, ForEachUnackedListsInFlightAndLostPackets) {
  for (int i = 0; i < 4; ++i) Send(0, T(i));
  ASSERT_TRUE(Ack(0, {2}, Psn(2), T(20)));  // 0, 1 lost; 2 acked
  std::vector<uint32_t> seen;
  uint64_t bytes = 0;
  m_->ForEachUnacked([&](Psn p, uint64_t tag, uint32_t b) {
    seen.push_back(p.value());
    EXPECT_EQ(tag, p.value() + 1000u);
    bytes += b;
  });
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(bytes, 3000u);
  m_->Reset(Psn(77));
  EXPECT_FALSE(m_->HasUnacked());
  EXPECT_FALSE(m_->HasRetransmit());
  EXPECT_EQ(m_->next_psn(), Psn(77));
  EXPECT_EQ(m_->bytes_in_flight(), 0u);
  EXPECT_EQ(m_->NextTimerTime(), TimeNs::Infinite());
}

TEST_F(SentPacketManagerTest, WindowGrowsBeyondInitialRing) {
  for (int i = 0; i < 5000; ++i) Send(static_cast<PathId>(i % 16), T(0));
  EXPECT_EQ(m_->packets_in_flight(), 5000u);
  std::vector<uint32_t> none;
  ASSERT_TRUE(Ack(5000, none, Psn(4999), T(50)));
  EXPECT_EQ(ev_.acked.size(), 5000u);
  EXPECT_TRUE(ev_.lost.empty());
  EXPECT_FALSE(m_->HasUnacked());
}

TEST_F(SentPacketManagerTest, RetransmitOfUnknownPsnIsCountedAndIgnored) {
  Send(0, T(0));
  m_->OnRetransmitted(Psn(5), 0, PathSeq(9), T(1));
  ASSERT_TRUE(Ack(1, {}, Psn(0), T(10)));
  m_->OnRetransmitted(Psn(0), 0, PathSeq(9), T(11));
  EXPECT_EQ(m_->counters().bad_retransmit_calls, 2u);
  EXPECT_EQ(m_->packets_in_flight(), 0u);
}

// OnFirstSentRun against the OnFirstSent calls it stands for: two managers
// send the same traffic, one in runs and one packet by packet, then see the
// same acks (with holes) and timers. Everything they report must match.
TEST(SentPacketManagerRunTest, ARunIsTheSameAsItsPacketsOneByOne) {
  RetransmitOptions o;  // tail probes on: the run arms the probe as well
  o.acked_runs = true;
  SentPacketManager runs(o), single(o);
  runs.Reset(Psn(7));
  single.Reset(Psn(7));
  Recorder ev_runs, ev_single;
  std::map<PathId, uint32_t> next_seq;
  std::map<uint32_t, std::pair<PathId, PathSeq>> tx;  // psn -> transmission
  TimeNs now = T(100);
  // Three rounds: runs of 1..9 packets on paths 0..3, then an ack that
  // leaves every fifth PSN out (gap losses on each path). Later rounds
  // send on paths that are busy (their holes are unresolved), and one
  // packet goes out with a path seq from the past.
  const uint32_t lens[] = {5, 1, 9, 3, 7, 2, 8, 4, 6, 9, 1, 5};
  for (int round = 0; round < 3; ++round) {
    for (size_t r = 0; r < std::size(lens); ++r) {
      const PathId path = static_cast<PathId>((r + round) % 4);
      const uint32_t n = lens[r];
      const Psn first = runs.next_psn();
      const PathSeq seq(next_seq[path]);
      runs.OnFirstSentRun(first.value() + 1000u, 1, 1200, path, seq, n, now);
      for (uint32_t i = 0; i < n; ++i) {
        single.OnFirstSent(first.value() + i + 1000u, 1200, path, seq + i, now);
        tx[first.value() + i] = {path, seq + i};
      }
      next_seq[path] += n;
      ASSERT_EQ(runs.next_psn(), single.next_psn());
      ASSERT_EQ(runs.bytes_in_flight(), single.bytes_in_flight());
      ASSERT_EQ(runs.packets_in_flight(), single.packets_in_flight());
      ASSERT_EQ(runs.NextTimerTime(), single.NextTimerTime());
      now = now + Us(2);
    }
    if (round == 1) {  // a path seq that goes back: counted by both
      const Psn psn = runs.next_psn();
      const PathSeq old(next_seq[2] - 3);
      runs.OnFirstSentRun(psn.value() + 1000u, 1, 1200, 2, old, 1, now);
      single.OnFirstSent(psn.value() + 1000u, 1200, 2, old, now);
      tx[psn.value()] = {2, old};
    }
    const uint32_t end = runs.next_psn().value();
    std::vector<uint64_t> bits(4, 0);
    for (uint32_t p = 8; p < end; ++p) {
      if (p % 5 == 0) continue;
      const uint32_t off = p - 8;
      bits[off / 64] |= uint64_t{1} << (off % 64);
    }
    AckInfo a;
    a.cum = Psn(7);  // PSN 7 (the first sent) missing; 8.. as the bitmap says
    a.sack = absl::MakeConstSpan(bits);
    a.echo_path = tx.at(end - 2).first;
    a.echo_path_seq = tx.at(end - 2).second;
    now = now + Us(30);
    ASSERT_TRUE(ev_runs.Ack(runs, a, now));
    ASSERT_TRUE(ev_single.Ack(single, a, now));
    ASSERT_EQ(runs.NextTimerTime(), single.NextTimerTime());
  }
  // Then the timers, until both have nothing left to fire.
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(runs.NextTimerTime(), single.NextTimerTime());
    if (runs.NextTimerTime().IsInfinite()) break;
    now = runs.NextTimerTime();
    ev_runs.Timer(runs, now);
    ev_single.Timer(single, now);
  }
  ASSERT_FALSE(ev_single.lost.empty());  // the comparison covers losses
  ASSERT_EQ(ev_runs.acked.size(), ev_single.acked.size());
  for (size_t i = 0; i < ev_runs.acked.size(); ++i) {
    EXPECT_EQ(ev_runs.acked[i].psn, ev_single.acked[i].psn);
    EXPECT_EQ(ev_runs.acked[i].path, ev_single.acked[i].path);
  }
  ASSERT_EQ(ev_runs.lost.size(), ev_single.lost.size());
  for (size_t i = 0; i < ev_runs.lost.size(); ++i) {
    EXPECT_EQ(ev_runs.lost[i].psn, ev_single.lost[i].psn);
    EXPECT_EQ(ev_runs.lost[i].path, ev_single.lost[i].path);
    EXPECT_EQ(ev_runs.lost[i].cause, ev_single.lost[i].cause);
  }
  EXPECT_EQ(ev_runs.rtts, ev_single.rtts);
  const SenderCounters& cr = runs.counters();
  const SenderCounters& cs = single.counters();
  EXPECT_EQ(cr.packets_sent, cs.packets_sent);
  EXPECT_EQ(cr.bytes_sent, cs.bytes_sent);
  EXPECT_EQ(cr.packets_lost, cs.packets_lost);
  EXPECT_EQ(cr.losses_by_cause, cs.losses_by_cause);
  EXPECT_EQ(cr.packets_acked, cs.packets_acked);
  EXPECT_EQ(cr.rtos, cs.rtos);
  EXPECT_EQ(cr.tail_probes, cs.tail_probes);
  EXPECT_EQ(cr.path_seq_regressions, 1u);
  EXPECT_EQ(cs.path_seq_regressions, 1u);
  EXPECT_EQ(runs.bytes_in_flight(), single.bytes_in_flight());
}

// Acks applied as runs against the same acks packet by packet: runs form
// only of packets sent together on one path (bursts on paths 0 and 1, a
// second burst on path 0 that continues its seqs, two bursts in a row on
// path 2, a re-sent packet), and report exactly what MarkAcked one by one
// does.
TEST(SentPacketManagerRunTest, AcksOfRunsReportWhatPacketByPacketAcksDo) {
  RetransmitOptions o;
  o.tail_probe = false;
  RetransmitOptions o_runs = o;
  o_runs.acked_runs = true;
  SentPacketManager with(o_runs), without(o);
  Recorder ev_with, ev_without;
  ev_without.runs = false;
  std::map<PathId, uint32_t> next_seq;
  const auto send = [&](PathId path, uint32_t n, TimeNs at) {
    for (uint32_t i = 0; i < n; ++i) {
      for (SentPacketManager* m : {&with, &without}) {
        m->OnFirstSent(m->next_psn().value() + 1000u, 1200, path,
                       PathSeq(next_seq[path]), at);
      }
      ++next_seq[path];
    }
  };
  for (SentPacketManager* m : {&with, &without}) m->Reset(Psn(0));
  send(0, 10, T(100));  // PSN 0-9
  send(1, 5, T(100));   // 10-14
  send(0, 6, T(102));   // 15-20: path 0 seqs 10-15, a later send time
  send(2, 4, T(104));   // 21-24
  send(2, 4, T(105));   // 25-28: path 2 seqs go on, the send time does not
  // PSN 3 is lost (path gap) and re-sent: acked later, it is no run's.
  const auto ack = [&](uint32_t cum, std::vector<uint32_t> sacked, PathId ep,
                       uint32_t eseq, TimeNs now) {
    std::vector<uint64_t> bits(2, 0);
    for (uint32_t p : sacked) {
      const uint32_t off = p - cum - 1;
      bits[off / 64] |= uint64_t{1} << (off % 64);
    }
    AckInfo a;
    a.cum = Psn(cum);
    a.sack = absl::MakeConstSpan(bits);
    a.echo_path = ep;
    a.echo_path_seq = PathSeq(eseq);
    ASSERT_TRUE(ev_with.Ack(with, a, now));
    ASSERT_TRUE(ev_without.Ack(without, a, now));
  };
  std::vector<uint32_t> sacked;
  for (uint32_t p = 4; p < 27; ++p) sacked.push_back(p);
  // 0-2 by cum (echoing PSN 2: path 0, seq 2), 4-26 by SACK; 27-28 later.
  ack(3, sacked, 0, 2, T(130));
  Psn psn;
  uint64_t tag;
  uint32_t bytes;
  PathId last;
  for (SentPacketManager* m : {&with, &without}) {
    ASSERT_TRUE(m->PopRetransmit(&psn, &tag, &bytes, &last));
    ASSERT_EQ(psn, Psn(3));
    m->OnRetransmitted(psn, 1, PathSeq(next_seq[1]), T(131));
  }
  ++next_seq[1];
  ack(29, {}, 1, next_seq[1] - 1, T(160));
  // Runs: [0-2] (the echoed PSN 2 in it), [4-9], [10-14], [15-20], [21-24],
  // [25-26] and [27-28]; PSN 3 (re-sent) alone.
  EXPECT_EQ(ev_with.acked_runs, 7);
  EXPECT_EQ(ev_without.acked_runs, 0);
  ASSERT_EQ(ev_with.acked.size(), 29u);
  ASSERT_EQ(ev_with.acked.size(), ev_without.acked.size());
  ASSERT_EQ(ev_with.acked_tx.size(), 29u);
  ASSERT_EQ(ev_with.acked_tx.size(), ev_without.acked_tx.size());
  for (size_t i = 0; i < ev_with.acked.size(); ++i) {
    EXPECT_EQ(ev_with.acked[i].psn, ev_without.acked[i].psn) << i;
    EXPECT_EQ(ev_with.acked[i].path, ev_without.acked[i].path) << i;
    EXPECT_EQ(ev_with.acked[i].retransmitted, ev_without.acked[i].retransmitted)
        << i;
    EXPECT_EQ(ev_with.acked_tx[i].path, ev_without.acked_tx[i].path) << i;
    EXPECT_EQ(ev_with.acked_tx[i].seq, ev_without.acked_tx[i].seq) << i;
    EXPECT_EQ(ev_with.acked_tx[i].was_outstanding,
              ev_without.acked_tx[i].was_outstanding)
        << i;
  }
  EXPECT_EQ(ev_with.lost.size(), ev_without.lost.size());
  EXPECT_EQ(ev_with.rtts, ev_without.rtts);
  EXPECT_EQ(with.counters().packets_acked, without.counters().packets_acked);
  EXPECT_EQ(with.counters().bytes_acked, without.counters().bytes_acked);
  EXPECT_EQ(with.bytes_in_flight(), 0u);
  EXPECT_EQ(without.bytes_in_flight(), 0u);
  EXPECT_EQ(with.packets_in_flight(), 0u);
  EXPECT_EQ(with.NextTimerTime(), without.NextTimerTime());
}

// Acks whose SACK bitmaps overlap (each repeats what the one before said),
// shift as cum advances, reach past each other, and sometimes arrive older
// than one already processed: each packet is acked exactly once, and every
// packet some ack named is acked. (The manager skips bits the newest ack
// before already set; a wrong skip loses or repeats packets here.)
TEST_F(SentPacketManagerTest, OverlappingSackBitmapsAckEachPacketOnce) {
  for (const size_t words : {size_t{1}, size_t{2}, size_t{8}}) {
    for (const uint32_t pull : {10u, 40u, 150u}) {
      Make(NoProbe());
      ev_.Clear();
      constexpr uint32_t kN = 600;
      for (uint32_t i = 0; i < kN; ++i) Send(static_cast<PathId>(i % 4), T(i));
      // The receiver gets the PSNs in a random order and acks after each.
      std::mt19937 rng(static_cast<uint32_t>(words * 1000 + pull));
      std::vector<uint32_t> order(kN);
      for (uint32_t i = 0; i < kN; ++i) order[i] = i;
      // Mostly in order, with PSNs pulled up to `pull` places later (short
      // pulls let cum advance often: the bitmaps shift between acks).
      for (uint32_t i = 0; i < kN; ++i) {
        const uint32_t j = std::min<uint32_t>(kN - 1, i + rng() % pull);
        std::swap(order[i], order[j]);
      }
      struct Snapshot {
        uint32_t cum;
        std::vector<uint32_t> sacked;
        uint32_t trigger;
      };
      std::vector<Snapshot> acks;
      std::set<uint32_t> got;
      uint32_t cum = 0;
      for (uint32_t psn : order) {
        got.insert(psn);
        while (got.count(cum) > 0) ++cum;
        Snapshot a{cum, {}, psn};
        for (auto it = got.upper_bound(cum);
             it != got.end() && *it < cum + 1 + 64 * words; ++it) {
          a.sacked.push_back(*it);
        }
        acks.push_back(std::move(a));
      }
      // Every fifth ack overtakes the one before it on the way.
      for (size_t i = 4; i < acks.size(); i += 5)
        std::swap(acks[i - 1], acks[i]);
      std::set<uint32_t> named;
      int64_t now = kN + 20;
      for (const Snapshot& a : acks) {
        ASSERT_TRUE(Ack(a.cum, a.sacked, Psn(a.trigger), T(now++),
                        DurationNs::Zero(),
                        /*nak=*/false, words));
        for (uint32_t p = 0; p < a.cum; ++p) named.insert(p);
        named.insert(a.sacked.begin(), a.sacked.end());
        // Acked as soon as named, not later through cum.
        ASSERT_EQ(ev_.acked.size(), named.size())
            << "after ack cum " << a.cum << ", " << words << " words, pull "
            << pull;
      }
      std::map<uint32_t, int> times;
      for (const Acked& a : ev_.acked) ++times[a.psn];
      for (const auto& [psn, n] : times) {
        EXPECT_EQ(n, 1) << "PSN " << psn << " with " << words << " words";
      }
      EXPECT_EQ(times.size(), named.size()) << words << " words";
      EXPECT_EQ(named.size(), kN);
      EXPECT_FALSE(m_->HasUnacked());
    }
  }
}

}  // namespace
}  // namespace braid::retransmit

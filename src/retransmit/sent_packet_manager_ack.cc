// SentPacketManager, part 2: acks — validation, the echoed transmission
// (RTT sample, proof of arrival, spurious re-sends), newly acked packets
// and runs, what an ack teaches (reorder window, gap threshold, RTO undo).
#include <algorithm>

#include "retransmit/sent_packet_manager.h"

namespace braid::retransmit {

namespace {
// A raised RTO floor halves after this many floors without a spurious RTO.
constexpr int64_t kRtoFloorDecayRtos = 256;
}  // namespace

void SentPacketManager::NoteArrival(wire::PathId p, wire::PathSeq seq,
                                    TimeNs sent) {
  PathState& ps = Path(p);
  if (!ps.has_hwm || seq > ps.hwm) {
    ps.hwm = seq;
    ps.has_hwm = true;
    if (!ps.touched) {
      ps.touched = true;
      touched_paths_.push_back(p);
    }
  }
  if (ps.has_barrier && seq < ps.barrier &&
      (!ps.has_pre_hwm || seq > ps.pre_hwm)) {
    ps.pre_hwm = seq;
    ps.has_pre_hwm = true;
  }
  if (!has_rack_ || sent > rack_sent_) {
    rack_sent_ = sent;
    has_rack_ = true;
  }
}

void SentPacketManager::TakeRttSample(wire::PathId p, TxRecord& rec,
                                      DurationNs ack_delay, TimeNs now,
                                      SenderOutcome& out) {
  if (rec.sampled) return;  // one sample per transmission (duplicate acks)
  rec.sampled = true;
  // The timers must cover the receiver's hold time too: they run on the
  // round trip as the sender sees it, ack delay included.
  if (now > rec.sent) response_.AddSample(now - rec.sent);
  const DurationNs delay = Max(ack_delay, DurationNs::Zero());
  const DurationNs sample = (now - rec.sent) - delay;
  if (sample <= DurationNs::Zero()) {
    ++counters_.rtt_samples_rejected;
    return;
  }
  rtt_.AddSample(sample);
  paths_[p].rtt.AddSample(sample);
  ++counters_.rtt_samples;
  out.has_rtt_sample = true;
  out.rtt_sample = RttSample{p, sample};
}

void SentPacketManager::MarkAcked(Packet& pkt, wire::Psn psn, TimeNs now,
                                  SenderOutcome& out) {
  AckedPackets a;
  a.first = psn;
  a.bytes = pkt.bytes;
  a.tags_at = static_cast<uint32_t>(out.tags.size());
  a.path = pkt.path;
  a.first_seq = pkt.seq;
  a.was_retransmitted = pkt.tx_count > 1;
  a.was_outstanding = pkt.state == State::kInFlight;
  if (echo_active_ && psn == echo_psn_) {
    // Arrival already noted from the echo.
    a.path = echo_path_;
    a.first_seq = echo_seq_;
    const bool latest = echo_path_ == pkt.path && echo_seq_ == pkt.seq;
    a.was_outstanding = latest && echo_outstanding_;
    if (!latest && pkt.state == State::kInFlight) {
      a.has_orphan = true;  // the re-send in flight
      a.orphan_path = pkt.path;
      a.orphan_seq = pkt.seq;
    }
  } else if (!pkt.ambiguous) {
    NoteArrival(pkt.path, pkt.seq, pkt.sent);  // assume the latest copy
  }
  if (rto_undo_armed_ && pkt.tx_count == 1 && pkt.sent < rto_at_) {
    acked_pre_rto_original_ = true;
  }
  if (pkt.state == State::kInFlight) {
    bytes_in_flight_ -= pkt.bytes;
    --packets_in_flight_;
  } else if (pkt.state == State::kLost) {
    ++counters_.lost_then_acked;
    // Acked before the re-send: whichever ack said so, the copy we gave up
    // on arrived.
    if (pkt.last_loss == LossCause::kTime && !pkt.loss_disproved) {
      pkt.loss_disproved = true;
      OnSpuriousTimeLoss(now);
    }
    if (pkt.in_queue) {
      pkt.in_queue = false;
      --lost_pending_;
    }
  }
  pkt.state = State::kAcked;
  ++counters_.packets_acked;
  counters_.bytes_acked += pkt.bytes;
  out.acked.push_back(a);
  out.tags.push_back(pkt.tag);
}

uint32_t SentPacketManager::AckedRunLength(wire::Psn p, wire::Psn end) const {
  const Packet& a = ring_[p.value() & mask_];
  // A packet sent once and still in flight: the copy acked is that one (an
  // echo of it names the same transmission). Re-sent packets, and while an
  // RTO may be undone every packet, need MarkAcked's own rules.
  const auto plain = [](const Packet& q) {
    return q.state == State::kInFlight && q.tx_count == 1 && !q.ambiguous;
  };
  if (rto_undo_armed_ || !plain(a)) return 0;
  const int32_t room = end - p;
  const uint32_t limit = static_cast<uint32_t>(
      std::min<int32_t>(room, static_cast<int32_t>(kMaxAckedRun)));
  uint32_t n = 1;
  while (n < limit) {
    const wire::Psn psn = p + n;
    const Packet& q = ring_[psn.value() & mask_];
    if (!plain(q) || q.path != a.path || q.seq != a.seq + n ||
        q.sent != a.sent || q.bytes != a.bytes) {
      break;
    }
    ++n;
  }
  return n;
}

void SentPacketManager::AckRange(wire::Psn from, wire::Psn to, bool runs,
                                 TimeNs now, SenderOutcome& out) {
  for (wire::Psn p = from; p < to;) {
    Packet& pkt = ring_[p.value() & mask_];
    if (pkt.state == State::kAcked) {
      ++p;
      continue;
    }
    const uint32_t n = runs ? AckedRunLength(p, to) : 0;
    if (n < 2) {
      MarkAcked(pkt, p, now, out);
      ++p;
      continue;
    }
    // MarkAcked's work for n plain packets, once where it can be.
    PathState& ps = paths_[pkt.path];
    if (ps.has_barrier) {
      for (uint32_t i = 0; i < n; ++i)
        NoteArrival(pkt.path, pkt.seq + i, pkt.sent);
    } else {
      NoteArrival(pkt.path, pkt.seq + (n - 1), pkt.sent);
    }
    AckedPackets run;
    run.first = p;
    run.count = n;
    run.bytes = pkt.bytes;
    run.tags_at = static_cast<uint32_t>(out.tags.size());
    run.path = pkt.path;
    run.first_seq = pkt.seq;
    for (uint32_t i = 0; i < n; ++i) {
      Packet& q = ring_[(p + i).value() & mask_];
      q.state = State::kAcked;
      out.tags.push_back(q.tag);
    }
    bytes_in_flight_ -= uint64_t{pkt.bytes} * n;
    packets_in_flight_ -= n;
    counters_.packets_acked += n;
    counters_.bytes_acked += uint64_t{pkt.bytes} * n;
    out.acked.push_back(run);
    p = p + n;
  }
}

uint64_t SentPacketManager::SackMemoBits(uint64_t off) const {
  const uint64_t word = off / 64;
  const unsigned sh = static_cast<unsigned>(off % 64);
  const uint64_t lo = word < sack_memo_.size() ? sack_memo_[word] : 0;
  if (sh == 0) return lo;
  const uint64_t hi = word + 1 < sack_memo_.size() ? sack_memo_[word + 1] : 0;
  return (lo >> sh) | (hi << (64 - sh));
}

bool SentPacketManager::OnAck(const AckInfo& ack, TimeNs now,
                              SenderOutcome* outcome) {
  SenderOutcome& out = *outcome;
  out.Clear();
  rto_memo_sent_ = TimeNs::Infinite();
  // Validate before touching anything: nothing may refer to PSNs not sent.
  if (ack.cum > next_) {
    ++counters_.invalid_acks;
    return false;
  }
  const uint64_t span = static_cast<uint32_t>(next_ - ack.cum);
  const size_t words = ack.sack.size();
  if (!SackWithin(ack.sack, span)) {
    ++counters_.invalid_acks;
    return false;
  }
  ++counters_.acks_processed;
  const uint64_t reach_off =
      std::min<uint64_t>(1 + 64 * static_cast<uint64_t>(words), span);
  // Reach of *this* ack: an earlier ack with a longer bitmap said nothing
  // about what arrived since.
  reach_ = ack.cum + static_cast<int64_t>(reach_off);

  ProcessEcho(ack, now, out);

  // Newly acknowledged packets.
  const uint64_t acked_before = counters_.packets_acked;
  const bool runs = opts_.acked_runs;
  if (base_ < ack.cum) AckRange(base_, ack.cum, runs, now, out);
  // Bit i of word j here is bit memo_shift + 64 j + i of the memo.
  const int32_t memo_shift = sack_memo_.empty() ? -1 : ack.cum - sack_memo_cum_;
  AckSacked(ack, memo_shift, runs, now, out);
  echo_active_ = false;
  // An older ack (reordered on the way) names nothing the memo lacks.
  if (sack_memo_.empty() || memo_shift >= 0) {
    sack_memo_cum_ = ack.cum;
    sack_memo_.assign(ack.sack.begin(), ack.sack.end());
  }
  // F-RTO (RFC 5682's rule, per packet): data sent before the RTO and never
  // re-sent was delivered after it, so the path was not dead but slow (a
  // stalled receiver, a descheduled host): the timeout was premature. The
  // echo rules above catch it only when the echoed copy is the one the RTO
  // gave up on; after a receiver stall the first ack echoes a packet of the
  // backlog instead, and the re-sends' duplicate echoes can be crowded out
  // (measured on loopback: 1 of 10 such RTOs undone in a lossless bulk run).
  if (acked_pre_rto_original_) {
    acked_pre_rto_original_ = false;
    if (rto_undo_armed_) UndoRto(out);
  }
  while (base_ != next_ &&
         ring_[base_.value() & mask_].state == State::kAcked) {
    ring_[base_.value() & mask_].state = State::kEmpty;
    ++base_;
  }
  if (counters_.packets_acked != acked_before) OnAckProgress(now);

  if (ack.nak) {
    if (opts_.go_back_n) {
      ProcessNak(ack.cum, out);
    } else {
      ++counters_.naks_ignored;
    }
  }
  ProcessPathTimers(now, /*after_ack=*/true, out);
  if (lost_pending_ == 0) heap_.clear();
  return true;
}

bool SentPacketManager::SackWithin(absl::Span<const uint64_t> sack,
                                   uint64_t span) {
  for (size_t j = sack.size(); j-- > 0;) {
    const uint64_t w = sack[j];
    if (w == 0) continue;
    const uint64_t highest = 1 + 64 * static_cast<uint64_t>(j) +
                             (63 - static_cast<uint64_t>(__builtin_clzll(w)));
    return highest < span;
  }
  return true;
}

void SentPacketManager::ProcessEcho(const AckInfo& ack, TimeNs now,
                                    SenderOutcome& out) {
  echo_active_ = false;
  TxRecord* rec = ack.echo_path < paths_.size()
                      ? paths_[ack.echo_path].log.Find(ack.echo_path_seq)
                      : nullptr;
  if (rec == nullptr) {
    ++counters_.echo_unknown;
  } else {
    // The sample ends when the ack reached this host, not when this process
    // got to read it (a busy or descheduled sender is not network delay).
    const TimeNs end = !ack.arrival.IsInfinite() && ack.arrival <= now &&
                               ack.arrival > rec->sent
                           ? ack.arrival
                           : now;
    TakeRttSample(ack.echo_path, *rec, ack.ack_delay, end, out);
    NoteArrival(ack.echo_path, rec->seq, rec->sent);
    Packet* pkt = Get(rec->psn);
    // The echoed copy is one we declared lost: re-sent already
    // (superseded), or still waiting in the retransmit queue.
    const bool declared_lost =
        rec->superseded || (pkt != nullptr && pkt->state == State::kLost &&
                            pkt->tx_index == rec->tx_index);
    if (declared_lost && pkt != nullptr && !pkt->loss_disproved) {
      pkt->loss_disproved = true;
      OnLossDisproved(pkt->last_loss, ack.echo_path, *rec, now, out);
    }
    // The receiver flags an echo of a duplicate: one copy of this packet
    // was unnecessary (like a D-SACK).
    if (ack.echo_duplicate && !rec->dup_noted) {
      rec->dup_noted = true;
      ++counters_.duplicate_echoes;
      OnDuplicateArrival(*rec, pkt, now, out);
    }
    if (rec->superseded) OnSupersededEchoed(*rec, pkt, ack.echo_path, now, out);
    if (pkt != nullptr && pkt->state != State::kAcked) {
      echo_active_ = true;
      echo_psn_ = rec->psn;
      echo_path_ = ack.echo_path;
      echo_seq_ = rec->seq;
      echo_outstanding_ = !declared_lost;
    }
  }
}

void SentPacketManager::OnSupersededEchoed(TxRecord& rec, Packet* pkt,
                                           wire::PathId echo_path, TimeNs now,
                                           SenderOutcome& out) {
  rec.superseded = false;
  if (pkt == nullptr || !pkt->spurious_reported) {
    // The re-send that superseded this copy is what was not needed; if
    // it arrives as a duplicate too, that is already counted here.
    if (pkt != nullptr) pkt->spurious_reported = true;
    if (rec.superseded_on < paths_.size()) {
      TxRecord* resend =
          paths_[rec.superseded_on].log.FindCopyAfter(rec.psn, rec.tx_index);
      if (resend != nullptr) {
        resend->dup_noted = true;
        // A packet acked through its re-send and retired before its
        // late original was echoed: the re-send names the loss rule.
        if (pkt == nullptr && resend->repairs != TxRecord::kFirstSend) {
          OnLossDisproved(static_cast<LossCause>(resend->repairs), echo_path,
                          rec, now, out);
        }
      }
    }
    ++counters_.spurious_retransmits;
    out.spurious_retransmits.push_back(rec.psn);
  }
}

void SentPacketManager::AckSacked(const AckInfo& ack, int32_t memo_shift,
                                  bool runs, TimeNs now, SenderOutcome& out) {
  const size_t words = ack.sack.size();
  for (size_t j = 0; j < words; ++j) {
    uint64_t w = ack.sack[j];
    if (w != 0 && memo_shift >= 0) {
      w &= ~SackMemoBits(static_cast<uint64_t>(memo_shift) + 64 * j);
    }
    if (w == 0) continue;
    const wire::Psn word_base =
        ack.cum + static_cast<int64_t>(1 + 64 * static_cast<uint64_t>(j));
    if (word_base + 63 < base_) continue;  // entirely acked already
    while (w != 0) {
      // The next stretch of set bits: [b, b + len).
      const int b = __builtin_ctzll(w);
      const uint64_t from_b = w >> b;
      const int len = ~from_b == 0 ? 64 - b : __builtin_ctzll(~from_b);
      w = len + b >= 64 ? 0 : w & ~((uint64_t{1} << (b + len)) - 1);
      wire::Psn from = word_base + b;
      const wire::Psn to = from + len;
      if (to <= base_) continue;
      if (from < base_) from = base_;
      AckRange(from, to, runs, now, out);
    }
  }
}

void SentPacketManager::OnAckProgress(TimeNs now) {
  last_progress_ = now;
  rtos_since_progress_ = 0;
  DecayReorderWindow(now);
  DecayGapThreshold(now);
  DecayPto(now);
  if (rto_floor_ > opts_.min_rto &&
      now >= rto_floor_changed_ + rto_floor_ * kRtoFloorDecayRtos) {
    rto_floor_ = Max(opts_.min_rto, rto_floor_ / 2);
    rto_floor_changed_ = now;
  }
  if (backoff_ > 0) {
    backoff_ = 0;
    RecomputeRtoDeadline();  // shorter RTO: the deadline moves earlier
  }
  if (opts_.tail_probe) {
    tlp_base_ = now;
    tlp_armed_ = true;
  }
}

void SentPacketManager::OnLossDisproved(LossCause cause, wire::PathId path,
                                        const TxRecord& rec, TimeNs now,
                                        SenderOutcome& out) {
  switch (cause) {
    case LossCause::kTime:
      OnSpuriousTimeLoss(now);
      break;
    case LossCause::kPathGap:
      OnSpuriousGapLoss(Overtaken(path, rec), now);
      break;
    case LossCause::kRto:
      if (rto_undo_armed_) UndoRto(out);
      break;
    default:  // a probe, or a NAK (go-back-N): nothing to learn
      break;
  }
}

void SentPacketManager::OnDuplicateArrival(const TxRecord& rec, Packet* pkt,
                                           TimeNs now, SenderOutcome& out) {
  // The loss the unnecessary re-send repaired: the echoed copy's own cause
  // if it is a re-send; else (the original, overtaken by its re-send) the
  // packet's last loss, if the packet is still in the window.
  uint8_t cause = rec.repairs;
  if (cause == TxRecord::kFirstSend && pkt != nullptr && pkt->tx_count > 1) {
    cause = static_cast<uint8_t>(pkt->last_loss);
  }
  if (cause == static_cast<uint8_t>(LossCause::kTime) &&
      (pkt == nullptr || !pkt->loss_disproved)) {
    if (pkt != nullptr) pkt->loss_disproved = true;
    OnSpuriousTimeLoss(now);
  }
  // A first transmission, never re-sent, arrived twice: the network
  // duplicates packets (or, rarely, a tail probe's original came late).
  if (rec.repairs == TxRecord::kFirstSend && !rec.superseded &&
      (pkt == nullptr || pkt->tx_count == 1)) {
    net_dup_quiet_until_ = now + rtt_.srtt() * kNetDupQuietSrtts;
  }
  // The re-send of a gap loss arrived as a duplicate: its original had
  // arrived, overtaken on its path (the usual proof: the receiver's ack of a
  // late original often echoes another arrival of its batch) -- unless the
  // network duplicates, when this may be the re-send of a packet really
  // lost. How far it was overtaken is not known here: double the threshold.
  if (rec.repairs == static_cast<uint8_t>(LossCause::kPathGap) &&
      (pkt == nullptr || !pkt->loss_disproved) && now >= net_dup_quiet_until_) {
    if (pkt != nullptr) pkt->loss_disproved = true;
    OnSpuriousGapLoss(2 * gap_thresh_ - 1, now);
  }
  if (rto_undo_armed_ && std::find(rto_lost_.begin(), rto_lost_.end(),
                                   rec.psn) != rto_lost_.end()) {
    UndoRto(out);
  }
  if (cause == static_cast<uint8_t>(LossCause::kTailProbe) &&
      (pkt == nullptr || !pkt->spurious_reported)) {
    ++counters_.spurious_tail_probes;
    if (pto_shift_ < opts_.max_pto_shift) ++pto_shift_;
    pto_changed_ = now;
  }
  if (cause != TxRecord::kFirstSend &&
      (pkt == nullptr || !pkt->spurious_reported)) {
    if (pkt != nullptr) pkt->spurious_reported = true;
    ++counters_.spurious_retransmits;
    out.spurious_retransmits.push_back(rec.psn);
  }
}

void SentPacketManager::UndoRto(SenderOutcome& out) {
  // The network delivered what the RTO gave up on: the timeout was
  // premature (a stalled host, not a dead network). Undo the backoff and
  // let congestion control undo its reaction.
  rto_undo_armed_ = false;
  backoff_ = 0;
  // This host or its peer stalls longer than the RTO allowed for: wait
  // longer before the next one (decays while no RTO proves premature).
  rto_floor_ = Min(rto_floor_ * 2, Max(opts_.min_rto, opts_.max_rto / 4));
  rto_floor_changed_ = last_progress_;
  RecomputeRtoDeadline();
  ++counters_.spurious_rtos;
  out.spurious_rto = true;
}

}  // namespace braid::retransmit

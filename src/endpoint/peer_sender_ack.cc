// PeerSender, acks in: an ack's header checks, then the sent-packet
// manager's outcome of an ack or a timer applied to the path set,
// congestion control and the messages in flight; the timers; stats.
#include <algorithm>
#include <array>
#include <bitset>

#include "endpoint/peer_sender.h"

namespace braid::endpoint {

void PeerSender::OnAck(TimeNs now, const wire::AckHeader& h,
                       const uint8_t* sack, DropStats* drops, TimeNs arrival,
                       uint16_t return_port) {
  if (h.dst_incarnation != link_->our_inc || h.session != session_) {
    ++drops->stale_incarnation;  // an ack for an earlier life or session
    return;
  }
  uint64_t words[wire::kMaxSackWords];
  for (size_t i = 0; i < h.sack_words; ++i) words[i] = wire::SackWord(sack, i);
  retransmit::AckInfo info;
  info.cum = h.cum_psn;
  info.sack = absl::MakeConstSpan(words, h.sack_words);
  info.echo_path = h.echo_path_id;
  info.echo_path_seq = h.echo_path_seq;
  info.ack_delay = DurationNs(h.ack_delay_ns);
  info.nak = (h.flags & wire::kAckFlagNak) != 0;
  info.echo_duplicate = (h.flags & wire::kAckFlagEchoDup) != 0;
  info.arrival = arrival;
  if (!sent_.OnAck(info, now, &outcome_)) {
    ++drops->invalid_ack;
    return;
  }
  ApplyOutcome(now, return_port);
  if (awaiting_delivery_ > 0) CompleteDelivered(now);
  ++acks_received_;
  last_ack_progress_ = now;
  link_->last_activity = now;
  session_confirmed_ = true;
  link_->proven = true;  // it received what we sent to its address
  // Credit only grows, and never past what a receive window can hold.
  if (h.credit_psn > credit_limit_ && h.credit_psn - h.cum_psn <= (1 << 16)) {
    credit_limit_ = h.credit_psn;
  }
  if (sent_.next_psn() < credit_limit_) {
    credit_blocked_ = false;
  } else if (!credit_blocked_ && HasNewData()) {
    // The credit ran out exactly at a datagram boundary: WriteDataFrames
    // never saw the block, so mark it here (it arms the probe timer).
    credit_blocked_ = true;
    ++credit_blocked_count_;
  }
  const uint32_t ce_delta = h.ce_count - last_ce_count_;
  last_ce_count_ = h.ce_count;
  if (ce_delta > 0 && ce_delta < (1u << 20)) {
    ecn_echoes_ += ce_delta;
    // Marks echoed from a path being steered away from are its own.
    const bool steered = (h.flags & wire::kAckFlagEchoCe) &&
                         h.echo_path_id < paths_.size() &&
                         paths_.SteeredAway(h.echo_path_id);
    if (steered) {
      ++steered_signals_;
    } else {
      pending_ack_event_.ce_packets += ce_delta;
      have_ack_event_ = true;
    }
  }
  if ((h.flags & wire::kAckFlagEchoCe) && h.echo_path_id < paths_.size()) {
    paths_.OnEcn(h.echo_path_id, now);
  }
  PopFinishedMessages();
  FlushCcEvents(now);
  TrackOldestUnacked(now);
}

void PeerSender::ApplyOutcome(TimeNs now, uint16_t return_port) {
  // In the order the manager found it: the sample (taken from the echo,
  // first), the acked packets, then the losses the ack revealed. The path
  // set's verdicts depend on that order; a reroute it decides is told to
  // the manager now, after its call returned.
  const retransmit::SenderOutcome& o = outcome_;
  if (o.has_rtt_sample) ApplyRttSample(o.rtt_sample, now, return_port);
  for (const retransmit::AckedPackets& a : o.acked) {
    if (a.count == 1) {
      ApplyAcked(a, o.tags[a.tags_at], now);
    } else {
      ApplyAckedRun(a, o.Tags(a), now);
    }
  }
  for (const retransmit::LostPacket& l : o.lost) ApplyLost(l, now);
  rel_.spurious_retransmits += o.spurious_retransmits.size();
  if (o.spurious_rto) {
    ++rel_.spurious_rtos;
    spurious_rto_ = true;
  }
}

void PeerSender::ApplyAcked(const retransmit::AckedPackets& a, uint64_t tag,
                            TimeNs now) {
  // Every transmission gets one outcome: the copy that arrived is acked
  // (or, if it had been given up on already, counts as a late arrival), a
  // re-send still in flight is discarded.
  if (a.path < paths_.size()) {
    if (a.was_outstanding) {
      paths_.OnAcked(a.path, a.first_seq, a.bytes, now);
    } else {
      paths_.OnLateArrival(a.path, a.first_seq, now);
    }
  }
  if (a.has_orphan && a.orphan_path < paths_.size()) {
    paths_.OnDiscarded(a.orphan_path, a.orphan_seq);
  }
  if (a.was_retransmitted && a.was_outstanding) {
    BlameIfResentElsewhere(a.first, a.path, now);
  }
  pending_ack_event_.bytes_acked += a.bytes;
  ++pending_ack_event_.packets_acked;
  have_ack_event_ = true;
  OnFragmentsAcked(tag, 1, now);
}

void PeerSender::ApplyAckedRun(const retransmit::AckedPackets& run,
                               absl::Span<const uint64_t> tags, TimeNs now) {
  // ApplyAcked for each of the run's packets: first sends, outstanding, no
  // orphan, one path.
  if (run.path < paths_.size()) {
    paths_.OnAckedRun(run.path, run.first_seq, run.count, run.bytes, now);
  }
  pending_ack_event_.bytes_acked += uint64_t{run.bytes} * run.count;
  pending_ack_event_.packets_acked += run.count;
  have_ack_event_ = true;
  // A run's fragments are mostly consecutive ones of one message: each
  // message's share is counted at once.
  for (uint32_t i = 0; i < run.count;) {
    const uint32_t msg = MsgOf(tags[i]);
    uint32_t k = 1;
    while (i + k < run.count && MsgOf(tags[i + k]) == msg) ++k;
    OnFragmentsAcked(tags[i], k, now);
    i += k;
  }
}

void PeerSender::ApplyLost(const retransmit::LostPacket& l, TimeNs now) {
  const wire::PathId path = l.path;
  if (l.cause == retransmit::LossCause::kTailProbe ||
      l.cause == retransmit::LossCause::kRefused) {
    // A probe re-sends a packet that is not known to be lost, and a
    // refused first contact was dropped by the receiver, not the network:
    // no penalty for its path, no loss signal for congestion control. The
    // copy re-sent will never get an outcome of its own (the re-send's
    // stands for the packet): release its slot now.
    if (path < paths_.size()) {
      paths_.OnDiscarded(path, l.seq);
      RememberUnblamed(l.psn, path, l.seq);
    }
    return;
  }
  // An RTO loss is judged per timer run (AttributeRtoToPaths), after this.
  bool steered_loss = false;
  if (l.cause != retransmit::LossCause::kRto && path < paths_.size()) {
    // A loss on a path already being steered away from is that path's
    // problem (it is penalised or a hot spot), not the shared window's.
    steered_loss = paths_.SteeredAway(path);
    const multipath::PathEvent pe = paths_.OnLoss(path, l.seq, now);
    // A recycled entropy takes a new route: packets after this point may
    // overtake older ones on the same path id, so the FIFO rule must not
    // compare across the change.
    if (pe == multipath::PathEvent::kRecycled) sent_.OnPathRerouted(path);
  }
  if (steered_loss) {
    ++steered_signals_;
    return;
  }
  pending_loss_event_.bytes_lost += l.bytes;
  ++pending_loss_event_.packets_lost;
  if (l.cause == retransmit::LossCause::kRto) {
    if (!pending_loss_event_.rto) ++rel_.rtos;
    pending_loss_event_.rto = true;
  }
  have_loss_event_ = true;
}

void PeerSender::ApplyRttSample(const retransmit::RttSample& s, TimeNs now,
                                uint16_t return_port) {
  const wire::PathId path = s.path;
  const DurationNs rtt = s.rtt;
  // The ack came back on a slow return path: the sample is mostly that
  // path's delay, not the data path's (multipath/return_paths.h).
  if (return_port != 0 && path < paths_.size()) {
    const DurationNs base = paths_.stats(path).min_rtt;
    if (base > DurationNs::Zero() &&
        return_paths_.Observe(return_port, rtt - base)) {
      ++slow_return_samples_;
      return;
    }
  }
  if (path < paths_.size() &&
      paths_.OnRttSample(path, rtt, now) == multipath::PathEvent::kRecycled) {
    sent_.OnPathRerouted(path);
  }
  // A hot-spot path's queueing is answered by steering traffic off it, not
  // by shrinking the window every path shares (protocol.md §9).
  if (path < paths_.size() &&
      (paths_.SteeredAway(path) || paths_.HotSample(path, rtt))) {
    ++steered_signals_;
    return;
  }
  pending_ack_event_.rtt = rtt;
  have_ack_event_ = true;
}

void PeerSender::AttributeRtoToPaths(TimeNs now) {
  // Per path: how many packets the RTO declared lost, the transmission it
  // declared lost last, and whether something sent after that one was
  // known to have arrived then.
  std::bitset<256> rto_paths, overtaken;
  std::array<uint32_t, 256> count;
  std::array<wire::PathSeq, 256> seq;
  std::array<wire::Psn, 256> psn;
  for (const retransmit::LostPacket& l : outcome_.lost) {
    if (l.cause != retransmit::LossCause::kRto || l.path >= paths_.size()) {
      continue;
    }
    if (!rto_paths.test(l.path)) count[l.path] = 0;
    rto_paths.set(l.path);
    ++count[l.path];
    seq[l.path] = l.seq;
    psn[l.path] = l.psn;
    overtaken.set(l.path, l.overtaken);
  }
  if (rto_paths.none()) return;
  // A timeout on most paths at once is the host or the peer stalling, not
  // a bad path. So is one with nothing sent after it known to have
  // arrived: the RTO fires only after a whole RTO without progress, and a
  // silent peer, a stalled host or lost acks look the same from here.
  const bool path_specific = rto_paths.count() * 2 <= paths_.size();
  // But the same again, with nothing acknowledged since the last RTO, is
  // a peer silent on every route tried: gone, or every route is dead (a
  // sender whose entropies all hash onto failed links — with 3 of 4 spines
  // blackholed, (3/4)^16 = 1 % of senders with 16 paths — heard nothing
  // until its peer timeout). The timed-out paths then move to fresh
  // entropies, so that each backed-off re-send tries new routes. A stalled
  // host or peer meets the first RTO, not two in a row without progress.
  // However few paths timed out: a sender with little in flight (a small
  // window, one small message at a time) has its RTOs on one or two paths,
  // never blamed (nothing overtook them), and would re-send on those same
  // dead "healthy" paths until its peer timeout.
  const bool explore = sent_.rtos_since_progress() >= 2;
  for (size_t p = 0; p < paths_.size(); ++p) {
    if (!rto_paths.test(p)) continue;
    const auto id = static_cast<wire::PathId>(p);
    for (uint32_t i = 0; i < count[p]; ++i) {
      if (!path_specific || !overtaken.test(p)) {
        paths_.OnDiscarded(id, seq[p]);
        RememberUnblamed(psn[p], id, seq[p]);
      } else if (paths_.OnTimeout(id, seq[p], now) ==
                 multipath::PathEvent::kRecycled) {
        sent_.OnPathRerouted(id);
      }
    }
    if (explore && paths_.Explore(id) == multipath::PathEvent::kRecycled) {
      ++rel_.rto_reroutes;
      sent_.OnPathRerouted(id);
    }
  }
}

void PeerSender::OnFragmentsAcked(uint64_t tag, uint32_t count, TimeNs now) {
  OutMessage* m = MessageForTag(tag);
  if (m == nullptr || m->done) return;
  // No message has more fragments acked than sent, so the message cannot
  // have been fully acked before the last of these `count`.
  m->frags_acked += count;
  if (!m->FullyAcked()) return;
  if (m->stream == 0) {
    // Unordered: the receiver delivers a message the moment it has all of
    // it, so acked means delivered.
    CompleteMessage(*m, now);
  } else if (!m->awaiting_delivery) {
    // Ordered: the receiver holds it until its stream predecessors are in;
    // CompleteDelivered completes it once nothing before it is missing.
    m->awaiting_delivery = true;
    ++awaiting_delivery_;
  }
}

void PeerSender::CompleteDelivered(TimeNs now) {
  // Every PSN below lowest_unacked() is acked, so every message whose
  // fragments all lie below it arrived whole, and so did everything sent
  // before it on its stream (a stream's messages take increasing PSNs):
  // the receiver has released it in order. Messages are in PSN order in
  // inflight_; the scan ends at the first one that reaches the unacked
  // PSN, and the ones it passes complete here or already have, so it is
  // amortised O(1) per completion.
  const wire::Psn base = sent_.lowest_unacked();
  for (size_t i = 0; i < inflight_.size() && awaiting_delivery_ > 0; ++i) {
    OutMessage& m = inflight_[i];
    if (m.done) continue;
    if (m.HasUnsent() || !(m.last_psn < base)) break;
    if (m.awaiting_delivery) {
      m.awaiting_delivery = false;
      --awaiting_delivery_;
      CompleteMessage(m, now);
    }
  }
}

void PeerSender::RememberUnblamed(wire::Psn psn, wire::PathId path,
                                  wire::PathSeq seq) {
  unblamed_[unblamed_next_] = Unblamed{psn, path, seq, true};
  unblamed_next_ = (unblamed_next_ + 1) % unblamed_.size();
}

void PeerSender::BlameIfResentElsewhere(wire::Psn psn, wire::PathId acked_path,
                                        TimeNs now) {
  for (Unblamed& u : unblamed_) {
    if (!u.valid || u.psn != psn) continue;
    u.valid = false;
    // The copy that arrived is a re-send still in flight (not a late
    // original: that would be a spurious re-send), on another path; the
    // original never arrived in all that time.
    if (u.path == acked_path || u.path >= paths_.size()) continue;
    if (paths_.OnLossFoundLate(u.path, u.seq, now) ==
        multipath::PathEvent::kRecycled) {
      sent_.OnPathRerouted(u.path);
    }
  }
}

void PeerSender::TrackOldestUnacked(TimeNs now) {
  if (!sent_.HasUnacked()) {
    oldest_unacked_since_ = TimeNs::Infinite();
    return;
  }
  const wire::Psn lowest = sent_.lowest_unacked();
  if (oldest_unacked_since_.IsInfinite() || lowest != oldest_unacked_) {
    oldest_unacked_ = lowest;
    oldest_unacked_since_ = now;
  }
}

void PeerSender::FlushCcEvents(TimeNs now) {
  if (spurious_rto_) {
    spurious_rto_ = false;
    cc_->OnSpuriousRto();
  }
  if (have_loss_event_) {
    pending_loss_event_.now = now;
    pending_loss_event_.bytes_in_flight = sent_.bytes_in_flight();
    cc_->OnLoss(pending_loss_event_);
    pending_loss_event_ = {};
    have_loss_event_ = false;
  }
  if (have_ack_event_) {
    pending_ack_event_.now = now;
    pending_ack_event_.min_rtt = sent_.min_rtt();
    pending_ack_event_.srtt = sent_.srtt();
    pending_ack_event_.bytes_in_flight = sent_.bytes_in_flight();
    cc_->OnAck(pending_ack_event_);
    pending_ack_event_ = {};
    have_ack_event_ = false;
  }
}

void PeerSender::OnTimer(TimeNs now) {
  // Woken only because an ack is due (every data frame that asks for an
  // immediate ack makes one due at once): PollTx sends it; the loss, RTO,
  // probe and timeout machinery below has nothing to do.
  if (TimerDeadline() > now) return;
  sent_.OnTimer(now, &outcome_);
  ApplyOutcome(now, /*return_port=*/0);
  AttributeRtoToPaths(now);
  paths_.OnTimer(now);
  FlushCcEvents(now);
  TrackOldestUnacked(now);
  const bool busy = sent_.HasUnacked() || !queued_.empty();
  const bool stuck = !oldest_unacked_since_.IsInfinite() &&
                     now - oldest_unacked_since_ >= cfg().proto.peer_timeout;
  if ((busy && now - last_ack_progress_ >= cfg().proto.peer_timeout) || stuck) {
    // The peer answered nothing for peer_timeout: fail what it holds up.
    FailAll(FailureCause::kPeerUnreachable, now);
    return;
  }
  ScheduleCreditProbe(now);
}

bool PeerSender::OnFirstContactRefused(TimeNs now) {
  if (sent_.ResendRefused(&outcome_) == 0) return false;
  ApplyOutcome(now, /*return_port=*/0);
  return true;
}

void PeerSender::ScheduleCreditProbe(TimeNs now) {
  // Credit-blocked with nothing in flight: ask the receiver for an ack.
  if (credit_blocked_ && sent_.packets_in_flight() == 0) {
    if (next_probe_.IsInfinite()) {
      next_probe_ = now + sent_.rto();
    } else if (now >= next_probe_) {
      probe_due_ = true;
      next_probe_ = now + sent_.rto();
    }
  } else {
    next_probe_ = TimeNs::Infinite();
  }
}

TimeNs PeerSender::TimerDeadline() const {
  TimeNs t = sent_.NextTimerTime();
  t = Min(t, paths_.NextTimerTime());
  t = Min(t, next_probe_);
  if (sent_.HasUnacked() || !queued_.empty()) {
    t = Min(t, last_ack_progress_ + cfg().proto.peer_timeout);
  }
  t = Min(t, oldest_unacked_since_ + cfg().proto.peer_timeout);
  if (credit_blocked_ && next_probe_.IsInfinite()) {
    // Arm the probe timer on the next OnTimer.
    t = Min(t, link_->last_activity + sent_.rto());
  }
  return t;
}

void PeerSender::OnReturnLoss(wire::PathId path, TimeNs now) {
  if (paths_.OnReturnLoss(path, now) == multipath::PathEvent::kRecycled) {
    sent_.OnPathRerouted(path);
  }
}

void PeerSender::FillStats(PeerStats* s, bool with_paths) const {
  s->packets_sent = packets_sent_;
  s->bytes_sent = bytes_sent_;
  s->messages_sent = messages_sent_;
  s->messages_failed = messages_failed_;
  s->acks_received = acks_received_;
  s->ecn_echoes = ecn_echoes_;
  s->reliability = rel_;
  s->reliability.spurious_losses = sent_.counters().spurious_time_losses;
  s->reliability.spurious_gap_losses = sent_.counters().spurious_gap_losses;
  // By the loss each re-send repaired, counted when it is sent (so they sum
  // to `retransmits`; a packet declared lost and acked before its re-send
  // counts nowhere).
  const auto& by = sent_.counters().retransmits_by_cause;
  auto cause = [&](retransmit::LossCause c) { return by[static_cast<int>(c)]; };
  s->reliability.retransmits_path_gap = cause(retransmit::LossCause::kPathGap);
  s->reliability.retransmits_time = cause(retransmit::LossCause::kTime);
  s->reliability.retransmits_rto = cause(retransmit::LossCause::kRto);
  s->reliability.retransmits_tail_probe =
      cause(retransmit::LossCause::kTailProbe);
  s->reliability.retransmits_nak = cause(retransmit::LossCause::kNak);
  s->reliability.retransmits_refused = cause(retransmit::LossCause::kRefused);
  s->srtt = sent_.srtt();
  s->min_rtt = sent_.min_rtt();
  s->rto = sent_.rto();
  s->cwnd_bytes = cc_->cwnd_bytes();
  s->bytes_in_flight = sent_.bytes_in_flight();
  s->gap_threshold = sent_.gap_threshold();
  s->credit_blocked = credit_blocked_count_;
  s->healthy_paths = paths_.healthy_paths();
  s->penalties = paths_.total_penalties();
  s->recycles = paths_.total_recycles();
  s->steered_signals = steered_signals_;
  s->slow_return_samples = slow_return_samples_;
  s->paths.clear();
  if (!with_paths) return;
  for (size_t p = 0; p < paths_.size(); ++p) {
    const multipath::PathStats& ps = paths_.stats(static_cast<wire::PathId>(p));
    PathStats o;
    o.entropy = ps.entropy;
    o.health = ps.health == multipath::PathHealth::kHealthy     ? "healthy"
               : ps.health == multipath::PathHealth::kPenalised ? "penalised"
                                                                : "probing";
    o.packets_sent = ps.packets_sent;
    o.bytes_sent = ps.bytes_sent;
    o.packets_acked = ps.packets_acked;
    o.packets_lost = ps.packets_lost;
    o.ecn_marks = ps.ecn_marks;
    o.timeouts = ps.timeouts;
    o.penalties = ps.penalties;
    o.recycles = ps.recycles;
    o.srtt = ps.srtt;
    o.min_rtt = ps.min_rtt;
    s->paths.push_back(o);
  }
}

}  // namespace braid::endpoint

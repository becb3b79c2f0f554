// Peer, send side: what may be sent, acks in, completions out, sessions.
// The data frames themselves are built in peer_data_frames.cc.
#include <algorithm>

#include "endpoint/peer.h"

namespace braid::endpoint {

void Peer::Enqueue(OutMessage&& m, TimeNs now) {
  if (!sent_.HasUnacked() && queued_.empty() && inflight_count_ == 0) {
    // Idle → busy: the silence deadline counts from now.
    last_ack_progress_ = now;
  }
  queued_.push_back(std::move(m));
}

bool Peer::CanSendNew() const {
  if (sent_.packets_in_flight() > 0 &&
      sent_.bytes_in_flight() + cfg_.mss + wire::kDataHeaderSize >
          cc_->cwnd_bytes()) {
    return false;
  }
  // Within one ack's reach of the lowest unacked PSN: behind a hole at the
  // receiver's cum, a packet past the reach could neither be acked nor
  // judged lost (only an RTO would move it). The receiver's datagrams are
  // taken to be as large as ours (the same MTU on both sides).
  if (sent_.next_psn() - sent_.lowest_unacked() >=
      static_cast<int32_t>(cfg_.ack_reach)) {
    return false;
  }
  return sent_.next_psn() < credit_limit_;
}

uint32_t Peer::NewDatagramBudget(uint32_t bytes, uint32_t cap) const {
  // CanSendNew's three limits, each turned into a count of datagrams.
  const int32_t outstanding = sent_.next_psn() - sent_.lowest_unacked();
  const int64_t by_reach = int64_t{cfg_.ack_reach} - outstanding;
  const int64_t by_credit = credit_limit_ - sent_.next_psn();
  int64_t n = std::min<int64_t>({int64_t{cap}, by_reach, by_credit});
  if (n <= 0) return 0;
  // The window: the j-th datagram (from 0) may go if nothing is in flight
  // before it, or if in-flight bytes + j * bytes + one more MSS fit.
  const uint64_t need = cfg_.mss + wire::kDataHeaderSize;
  const uint64_t cwnd = cc_->cwnd_bytes();
  const uint64_t in_flight = sent_.bytes_in_flight();
  int64_t by_cwnd;
  if (in_flight + need <= cwnd) {
    by_cwnd = static_cast<int64_t>((cwnd - need - in_flight) / bytes) + 1;
  } else {
    by_cwnd = sent_.packets_in_flight() == 0 ? 1 : 0;
  }
  n = std::min(n, by_cwnd);
  return static_cast<uint32_t>(std::max<int64_t>(n, 0));
}

bool Peer::HasNewData() const {
  return !queued_.empty() ||
         (!inflight_.empty() && inflight_.back().HasUnsent());
}

bool Peer::HasSendable() const {
  if (sent_.HasRetransmit()) return true;
  return HasNewData() && CanSendNew();
}

OutMessage* Peer::MessageForTag(uint64_t tag) {
  const uint32_t idx = MsgOf(tag) - inflight_base_;
  if (idx >= inflight_.size()) return nullptr;
  return &inflight_[idx];
}

void Peer::StartMessage(OutMessage& m) {
  m.msg_seq = next_msg_seq_++;
  if (m.stream != 0) {
    if (stream_next_seq_.size() <= m.stream)
      stream_next_seq_.resize(m.stream + 1u, 0);
    m.stream_seq = stream_next_seq_[m.stream]++;
  }
  m.next_offset = 0;
  m.frags_sent = 0;
  m.frags_acked = 0;
  ++inflight_count_;
}

void Peer::CompleteMessage(OutMessage& m, TimeNs now) {
  m.done = true;
  --inflight_count_;
  ++messages_sent_;
  Completion c;
  c.type = CompletionType::kSendDone;
  c.peer = addr_;
  c.stream = m.stream;
  c.cookie = m.cookie;
  GiveBackBuffer(m, &c);
  host_->Complete(std::move(c));
  if (m.owned.capacity() > 0) host_->RecycleBuffer(std::move(m.owned));
  std::vector<uint8_t>().swap(m.owned);  // release the copy now
  m.data = nullptr;
}

void Peer::PopFinishedMessages() {
  while (!inflight_.empty() && inflight_.front().done) {
    inflight_.pop_front();
    ++inflight_base_;
  }
}

void Peer::FailMessage(OutMessage& m, FailureCause cause) {
  ++messages_failed_;
  Completion c;
  c.type = CompletionType::kSendFailed;
  c.cause = cause;
  c.peer = addr_;
  c.stream = m.stream;
  c.cookie = m.cookie;
  GiveBackBuffer(m, &c);
  host_->Complete(std::move(c));
}

void Peer::GiveBackBuffer(OutMessage& m, Completion* c) {
  if (!m.give_back) return;
  c->data = std::move(m.owned);
  m.give_back = false;
  m.data = nullptr;
}

void Peer::RestartSession(FailureCause cause, TimeNs now) {
  if (cause == FailureCause::kNone) {
    // The receiver evicted our idle context and dropped what we sent since
    // (it never saw any of it: see PeerTable::Insert). Send those messages
    // again, first and in order, in the new session.
    for (size_t i = inflight_.size(); i-- > 0;) {
      if (inflight_[i].done) continue;
      OutMessage m = std::move(inflight_[i]);
      m.msg_seq = m.stream_seq = m.next_offset = m.frags_sent = m.frags_acked =
          0;
      m.awaiting_delivery = false;
      queued_.push_front(std::move(m));
      if (!queued_.front().owned.empty() && queued_.front().prefix_len == 0) {
        queued_.front().data = queued_.front().owned.data();
      }
    }
  } else {
    for (size_t i = 0; i < inflight_.size(); ++i) {
      if (!inflight_[i].done) FailMessage(inflight_[i], cause);
    }
  }
  inflight_.clear();
  inflight_count_ = 0;
  awaiting_delivery_ = 0;
  inflight_base_ = next_msg_seq_;
  const wire::Psn base = sent_.next_psn();
  sent_.Reset(base);
  paths_.Reset();
  return_paths_.Reset();
  cc_->Reset();
  ++session_;
  session_base_ = base;
  session_confirmed_ = false;
  credit_limit_ = base + wire::kInitialCreditPackets;
  stream_next_seq_.clear();
  credit_blocked_ = false;
  probe_due_ = false;
  next_probe_ = TimeNs::Infinite();
  have_ack_event_ = have_loss_event_ = false;
  last_ack_progress_ = now;
  oldest_unacked_since_ = TimeNs::Infinite();
}

void Peer::FailAll(FailureCause cause, TimeNs now) {
  RestartSession(cause, now);
  while (!queued_.empty()) {
    FailMessage(queued_.front(), cause);
    queued_.pop_front();
  }
}

void Peer::OnAck(TimeNs now, const wire::AckHeader& h, const uint8_t* sack,
                 DropStats* drops, TimeNs arrival, uint16_t return_port) {
  if (h.dst_incarnation != cfg_.local_incarnation || h.session != session_) {
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
  event_now_ = now;
  ack_return_port_ = return_port;
  if (!sent_.OnAck(info, now, *this)) {
    ++drops->invalid_ack;
    return;
  }
  if (awaiting_delivery_ > 0) CompleteDelivered(now);
  ++acks_received_;
  last_ack_progress_ = now;
  last_activity_ = now;
  session_confirmed_ = true;
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

void Peer::OnPacketAcked(wire::Psn psn, uint64_t tag, uint32_t bytes,
                         wire::PathId last_path, bool was_retransmitted) {
  // Every transmission gets one outcome: the copy that arrived is acked
  // (or, if it had been given up on already, counts as a late arrival), a
  // re-send still in flight is discarded.
  const retransmit::EventTx& tx = sent_.event_tx();
  if (tx.path < paths_.size()) {
    if (tx.was_outstanding) {
      paths_.OnAcked(tx.path, tx.seq, bytes, event_now_);
    } else {
      paths_.OnLateArrival(tx.path, tx.seq, event_now_);
    }
  }
  if (tx.has_orphan && tx.orphan_path < paths_.size()) {
    paths_.OnDiscarded(tx.orphan_path, tx.orphan_seq);
  }
  if (was_retransmitted && tx.was_outstanding) {
    BlameIfResentElsewhere(psn, tx.path);
  }
  pending_ack_event_.bytes_acked += bytes;
  ++pending_ack_event_.packets_acked;
  have_ack_event_ = true;
  OnFragmentsAcked(tag, 1);
}

void Peer::OnRunAcked(const AckedRun& run) {
  // OnPacketAcked for each of the run's packets: first sends, outstanding,
  // no orphan, one path.
  if (run.path < paths_.size()) {
    paths_.OnAckedRun(run.path, run.first_seq, run.count, run.bytes,
                      event_now_);
  }
  pending_ack_event_.bytes_acked += uint64_t{run.bytes} * run.count;
  pending_ack_event_.packets_acked += run.count;
  have_ack_event_ = true;
  // A run's fragments are mostly consecutive ones of one message: each
  // message's share is counted at once.
  for (uint32_t i = 0; i < run.count;) {
    const uint32_t msg = MsgOf(run.tags[i]);
    uint32_t k = 1;
    while (i + k < run.count && MsgOf(run.tags[i + k]) == msg) ++k;
    OnFragmentsAcked(run.tags[i], k);
    i += k;
  }
}

void Peer::OnFragmentsAcked(uint64_t tag, uint32_t count) {
  OutMessage* m = MessageForTag(tag);
  if (m == nullptr || m->done) return;
  // No message has more fragments acked than sent, so the message cannot
  // have been fully acked before the last of these `count`.
  m->frags_acked += count;
  if (!m->FullyAcked()) return;
  if (m->stream == 0) {
    // Unordered: the receiver delivers a message the moment it has all of
    // it, so acked means delivered.
    CompleteMessage(*m, event_now_);
  } else if (!m->awaiting_delivery) {
    // Ordered: the receiver holds it until its stream predecessors are in;
    // CompleteDelivered completes it once nothing before it is missing.
    m->awaiting_delivery = true;
    ++awaiting_delivery_;
  }
}

void Peer::CompleteDelivered(TimeNs now) {
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

void Peer::RememberUnblamed(wire::Psn psn, wire::PathId path) {
  unblamed_[unblamed_next_] = Unblamed{psn, path, true};
  unblamed_next_ = (unblamed_next_ + 1) % unblamed_.size();
}

void Peer::BlameIfResentElsewhere(wire::Psn psn, wire::PathId acked_path) {
  for (Unblamed& u : unblamed_) {
    if (!u.valid || u.psn != psn) continue;
    u.valid = false;
    // The copy that arrived is a re-send still in flight (not a late
    // original: that would be a spurious re-send), on another path; the
    // original never arrived in all that time.
    if (u.path == acked_path || u.path >= paths_.size()) continue;
    if (paths_.OnLossFoundLate(u.path, event_now_) ==
        multipath::PathEvent::kRecycled) {
      sent_.OnPathRerouted(u.path);
    }
  }
}

void Peer::OnPacketLost(wire::Psn psn, uint64_t tag, uint32_t bytes,
                        wire::PathId path, retransmit::LossCause cause) {
  const wire::PathSeq seq = sent_.event_tx().seq;
  const bool overtaken = sent_.event_tx().overtaken;
  bool steered_loss = false;
  if (cause == retransmit::LossCause::kTailProbe) {
    // A probe re-sends a packet that is not known to be lost: no penalty
    // for its path, no loss signal for congestion control. The copy being
    // probed will never get an outcome of its own (the re-send's stands
    // for the packet): release its slot now.
    if (path < paths_.size()) {
      paths_.OnDiscarded(path, seq);
      RememberUnblamed(psn, path);
    }
    return;
  }
  if (cause == retransmit::LossCause::kRto) {
    // Judged per timer run (AttributeRtoToPaths): a timeout on most paths
    // at once is the host or the peer stalling, not a bad path. So is one
    // with nothing sent after it known to have arrived: the RTO fires only
    // after a whole RTO without progress, and a silent peer, a stalled host
    // or lost acks look the same from here.
    if (path < paths_.size()) {
      rto_paths_.set(path);
      ++rto_lost_[path];
      rto_seq_[path] = seq;
      rto_psn_[path] = psn;
      rto_overtaken_.set(path, overtaken);
    }
  } else if (path < paths_.size()) {
    // A loss on a path already being steered away from is that path's
    // problem (it is penalised or a hot spot), not the shared window's.
    steered_loss = paths_.SteeredAway(path);
    const multipath::PathEvent pe = paths_.OnLoss(path, seq, event_now_);
    // A recycled entropy takes a new route: packets after this point may
    // overtake older ones on the same path id, so the FIFO rule must not
    // compare across the change.
    if (pe == multipath::PathEvent::kRecycled) sent_.OnPathRerouted(path);
  }
  if (steered_loss) {
    ++steered_signals_;
    return;
  }
  pending_loss_event_.bytes_lost += bytes;
  ++pending_loss_event_.packets_lost;
  if (cause == retransmit::LossCause::kRto) {
    if (!pending_loss_event_.rto) ++rel_.rtos;
    pending_loss_event_.rto = true;
  }
  have_loss_event_ = true;
}

void Peer::OnRttSample(wire::PathId path, DurationNs rtt) {
  // The ack came back on a slow return path: the sample is mostly that
  // path's delay, not the data path's (multipath/return_paths.h).
  if (ack_return_port_ != 0 && path < paths_.size()) {
    const DurationNs base = paths_.stats(path).min_rtt;
    if (base > DurationNs::Zero() &&
        return_paths_.Observe(ack_return_port_, rtt - base)) {
      ++slow_return_samples_;
      return;
    }
  }
  if (path < paths_.size() && paths_.OnRttSample(path, rtt, event_now_) ==
                                  multipath::PathEvent::kRecycled) {
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

void Peer::AttributeRtoToPaths(TimeNs now) {
  if (rto_paths_.none()) return;
  const bool path_specific = rto_paths_.count() * 2 <= paths_.size();
  for (size_t p = 0; p < paths_.size(); ++p) {
    if (!rto_paths_.test(p)) continue;
    const auto id = static_cast<wire::PathId>(p);
    for (uint32_t i = 0; i < rto_lost_[p]; ++i) {
      if (!path_specific || !rto_overtaken_.test(p)) {
        paths_.OnDiscarded(id, rto_seq_[p]);
        RememberUnblamed(rto_psn_[p], id);
      } else if (paths_.OnTimeout(id, rto_seq_[p], now) ==
                 multipath::PathEvent::kRecycled) {
        sent_.OnPathRerouted(id);
      }
    }
    rto_lost_[p] = 0;
  }
  rto_paths_.reset();
}

void Peer::TrackOldestUnacked(TimeNs now) {
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

void Peer::OnSpuriousRetransmit(wire::Psn psn) { ++rel_.spurious_retransmits; }

void Peer::OnSpuriousRto() {
  ++rel_.spurious_rtos;
  spurious_rto_ = true;
}

void Peer::FlushCcEvents(TimeNs now) {
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

}  // namespace braid::endpoint

// PeerReceiver: data in, duplicates out, reassembly, ordered release, acks
// and credit out; SYNC and PROBE frames.
#include "endpoint/peer_receiver.h"

#include <algorithm>

namespace braid::endpoint {

namespace {

reorder::AckOptions AckOpts(const PeerConfig& cfg) {
  reorder::AckOptions o;
  o.ack_every_packets = cfg.proto.ack_every_packets;
  o.ack_delay = cfg.proto.ack_delay;
  return o;
}

reorder::ReassemblerOptions ReasmOptions(const PeerConfig& cfg,
                                         PeerHost* host) {
  reorder::ReassemblerOptions o;
  // Credit is granted in packets from the budget, but the reassembler
  // reserves a whole message at its first fragment. Credited data must
  // never be refused, so the reassembler's hard limit sits above the
  // budget by what credit can still bring in: the one message that
  // straddles the credit limit (the sender sends messages one after the
  // other in PSN order, so the messages before it fit in the credited
  // bytes) and the initial credit every session starts with, which is
  // granted before the receiver's budget is known to the sender.
  o.max_bytes = cfg.proto.receive_budget_bytes +
                uint64_t{cfg.proto.max_message_bytes} +
                uint64_t{wire::kInitialCreditPackets} * cfg.mss;
  o.max_message_bytes = cfg.proto.max_message_bytes;
  o.pool = host->buffer_pool();
  o.budget = host->reassembly_budget();
  o.fragment_copy_limit = cfg.fragment_copy_limit;
  return o;
}

// The PSN window the receiver tracks; credit never exceeds it. Its bitmap
// starts with room for a session's initial credit and grows with the
// window the sender uses.
constexpr uint32_t kWindowPackets = 1u << 16;
constexpr uint32_t kInitialWindowPackets = wire::kInitialCreditPackets;

}  // namespace

PeerReceiver::PeerReceiver(PeerLink* link)
    : link_(link),
      window_(kWindowPackets, kInitialWindowPackets),
      acks_(AckOpts(link->cfg())),
      reassembler_(ReasmOptions(link->cfg(), link->host)) {
  granted_ = window_.cum() + wire::kInitialCreditPackets;
}

void PeerReceiver::OnPeerRestarted(bool deliver_held) {
  ResetReceiveSide(0, window_.cum(), deliver_held);
  rx_synced_ = false;
  retired_sessions_.fill(0);
  // Owed to the life that is gone: a NEED_SYNC would reach the new one
  // (it is addressed when built) and restart its session.
  need_sync_reply_ = false;
  ack_copy_due_ = false;
}

void PeerReceiver::ResetReceiveSide(uint32_t session, wire::Psn base,
                                    bool deliver_held) {
  window_.Reset(base);
  reassembler_.Clear();
  // Held ordered messages were acknowledged: deliver them (in order, the
  // failed ones skipped) rather than drop what the sender counts as done.
  released_.clear();
  ordered_.Flush(&released_);
  if (deliver_held) {
    for (reorder::CompletedMessage& m : released_) Deliver(std::move(m));
  }
  released_.clear();
  if (rx_synced_ && rx_session_ != session) {
    retired_sessions_[retired_session_next_++ % retired_sessions_.size()] =
        rx_session_;
  }
  rx_session_ = session;
  granted_ = base + wire::kInitialCreditPackets;
  nak_pending_ = false;
  nak_sent_for_cum_ = false;
  rx_path_seen_.fill(false);
  last_ack_blamable_ = false;  // its PSNs were the old session's
  rx_since_ack_ = false;
}

bool PeerReceiver::TakeResume(Resume* r) const {
  if (!Idle() || window_.out_of_order_packets() != 0) return false;
  size_t streams = 0;
  bool fits = true;
  ordered_.ForEachStream([&](uint16_t stream, uint32_t seq) {
    if (seq == 0) return;
    if (streams == kResumeStreams) {
      fits = false;
      return;
    }
    r->stream_seq[streams++] = {stream, seq};
  });
  if (!fits) return false;
  r->streams = static_cast<uint8_t>(streams);
  r->synced = rx_synced_;
  r->session = rx_session_;
  r->cum = window_.cum();
  r->granted = granted_;
  r->retired = retired_sessions_;
  r->retired_next = retired_session_next_;
  return true;
}

void PeerReceiver::ApplyResume(const Resume& r) {
  ResetReceiveSide(r.session, r.cum);
  rx_synced_ = r.synced;
  granted_ = r.granted;
  retired_sessions_ = r.retired;
  retired_session_next_ = r.retired_next;
  for (size_t i = 0; i < r.streams; ++i) {
    ordered_.SetNextSeq(r.stream_seq[i].first, r.stream_seq[i].second);
  }
}

bool PeerReceiver::TakeReturnLoss(bool sender_idle, wire::PathId* path) {
  if (!resent_dup_) return false;
  resent_dup_ = false;
  const wire::Psn psn = resent_dup_psn_;
  // The peer re-sent a packet we hold: every ack covering it since it
  // arrived was lost (or is very late), the last one among them. A side
  // sending data of its own gets outcomes for its paths and judges them by
  // those; only a pure receiver's return paths have no other judge
  // (protocol.md gap 14). Once per ack sent: the re-sends of one loss
  // burst blame one path.
  if (!last_ack_blamable_ || !sender_idle) return false;
  // Not evidence against that ack: a packet that arrived after it. We were
  // late to ack (descheduled, or holding the ack for the application's
  // answer) and the peer's timer re-sent it. Judged by the range of PSNs
  // received since the last ack (a superset under reordering: fewer
  // blames, never more).
  if (rx_since_ack_ && !(psn < rx_since_ack_lo_) && !(psn > rx_since_ack_hi_)) {
    return false;
  }
  last_ack_blamable_ = false;
  ++return_path_losses_;
  *path = last_ack_path_;
  return true;
}

void PeerReceiver::OnData(TimeNs now, const wire::DataHeader& h,
                          const uint8_t* payload, bool ce, DropStats* drops,
                          TimeNs arrival) {
  // The ack delay we report counts from the datagram's arrival at this host.
  const TimeNs at = arrival.IsInfinite() ? now : arrival;
  link_->last_activity = now;
  resent_dup_ = false;
  if (!rx_synced_) {
    // We hold no session for this sender (e.g. we evicted it): ask for one.
    ++drops->unsynced;
    need_sync_reply_ = true;
    need_sync_psn_ = h.psn;
    return;
  }
  ++packets_received_;
  if (ce) ++ecn_marks_received_;
  const wire::Psn cum = window_.cum();
  const bool ack_now = (h.flags & wire::kDataFlagAckNow) != 0;
  const bool retransmit = (h.flags & wire::kDataFlagRetransmit) != 0;
  if (h.psn < cum || window_.Contains(h.psn)) {
    ++drops->duplicates;
    if (retransmit) {
      resent_dup_ = true;  // see TakeReturnLoss
      resent_dup_psn_ = h.psn;
    }
    acks_.OnData(at, h.path_id, h.path_seq, ce, ack_now, false, true,
                 retransmit);
    return;
  }
  if (h.psn >= granted_) {
    ++drops->beyond_window;
    return;
  }
  if (cfg().proto.mode == Mode::kGoBackN && h.psn != cum) {
    // RoCE-style receiver: only the next PSN is accepted; one NAK per gap.
    ++drops->out_of_order_discarded;
    if (!nak_sent_for_cum_) nak_pending_ = true;
    return;
  }
  reorder::CompletedMessage done;
  const reorder::FragResult r = Reassemble(h, payload, &done);
  if (r == reorder::FragResult::kMalformed) {
    ++drops->inconsistent_fragment;
    return;
  }
  if (r == reorder::FragResult::kNoMemory) {
    // Not recorded: the sender will send it again.
    if (reassembler_.last_refusal_endpoint()) {
      ++drops->reassembly_full;
    } else {
      ++drops->no_memory;
    }
    return;
  }
  window_.OnPacket(h.psn);
  rx_since_ack_lo_ = rx_since_ack_ ? wire::Min(rx_since_ack_lo_, h.psn) : h.psn;
  rx_since_ack_hi_ = rx_since_ack_ ? wire::Max(rx_since_ack_hi_, h.psn) : h.psn;
  rx_since_ack_ = true;
  nak_sent_for_cum_ = false;
  bytes_received_ += h.payload_len;
  const bool path_gap = NotePathSeq(h.path_id, h.path_seq);
  acks_.OnData(at, h.path_id, h.path_seq, ce, ack_now, path_gap, false,
               retransmit);
  if (r == reorder::FragResult::kComplete) {
    released_.clear();
    // A refusal (a stream_seq already released or held: only a buggy or
    // forged sender's) drops the message; OrderedRelease counts it, and
    // FillStats reports it as ordered_refused (protocol.md, known gap 2).
    ordered_.Push(std::move(done), &released_);
    for (reorder::CompletedMessage& m : released_) Deliver(std::move(m));
    released_.clear();
  }
}

reorder::FragResult PeerReceiver::Reassemble(const wire::DataHeader& h,
                                             const uint8_t* payload,
                                             reorder::CompletedMessage* done) {
  reorder::Fragment f;
  f.msg = h.msg_seq;
  f.stream_id = h.stream_id;
  f.stream_seq = h.stream_seq;
  f.msg_len = h.msg_len;
  f.offset = h.frag_offset;
  f.payload = absl::MakeConstSpan(payload, h.payload_len);
  if (h.flags & wire::kDataFlagPlaced) f.placement = &h.placement;
  reassembler_.set_proven(link_->proven);
  return reassembler_.OnFragment(
      f,
      [this](const reorder::Fragment& fr, absl::Span<uint8_t>* dest) {
        return link_->host->Place(link_->addr, fr.stream_id, *fr.placement,
                                  fr.msg_len, dest);
      },
      done);
}

bool PeerReceiver::NotePathSeq(wire::PathId p, wire::PathSeq seq) {
  // A jump in the sender's per-path sequence is a loss on that path.
  bool path_gap = false;
  if (rx_path_seen_[p] && seq.value() != rx_path_next_[p] &&
      static_cast<int32_t>(seq.value() - rx_path_next_[p]) > 0) {
    path_gap = true;
  }
  if (!rx_path_seen_[p] ||
      static_cast<int32_t>(seq.value() - rx_path_next_[p]) >= 0) {
    rx_path_next_[p] = seq.value() + 1;
    rx_path_seen_[p] = true;
  }
  return path_gap;
}

void PeerReceiver::Deliver(reorder::CompletedMessage&& m) {
  ++messages_received_;
  Completion c;
  c.type = CompletionType::kRecv;
  c.peer = link_->addr;
  c.stream = m.stream_id;
  c.data = std::move(m.data);
  c.msg_len = m.msg_len;
  if (m.placement != reorder::Placement::kNone) {
    c.placement = m.placement == reorder::Placement::kPlaced
                      ? PlacementStatus::kPlaced
                      : PlacementStatus::kRefused;
    c.descriptor.key = m.ext.key;
    c.descriptor.offset = m.ext.offset;
    c.descriptor.head_bytes = m.ext.head_len;
  }
  link_->host->Complete(std::move(c));
}

wire::Psn PeerReceiver::CreditLimit(uint64_t queue_room) const {
  if (queue_room == 0) return granted_;  // the queue is full
  const uint64_t held = reassembler_.bytes_buffered() + ordered_.held_bytes();
  // What this peer may have outstanding: its receive budget, but never more
  // than the application's queue still has room for (every byte credited
  // ends there once its message completes). Without the second term a
  // slow reader held receive_queue_bytes plus a whole receive budget per
  // peer (64 MiB each by default) instead of about receive_queue_bytes.
  const uint64_t budget =
      std::min(cfg().proto.receive_budget_bytes, queue_room);
  const uint64_t avail = budget > held ? (budget - held) / cfg().mss : 0;
  // Never less than a session's initial credit beyond cum: a message that
  // alone exceeds the budget still completes (at that window), and the
  // reassembler's limit allows for it (see ReasmOptions in peer.cc).
  const uint32_t pkts = static_cast<uint32_t>(
      std::clamp<uint64_t>(avail, wire::kInitialCreditPackets, (1u << 16) - 1));
  return wire::Max(granted_, window_.cum() + pkts);
}

bool PeerReceiver::AckWanted(TimeNs now) const {
  if (!rx_synced_) return false;
  return nak_pending_ || window_update_ || acks_.AckDue(now);
}

size_t PeerReceiver::WriteAck(TimeNs now, absl::Span<uint8_t> out) {
  if (!rx_synced_) return 0;
  if (out.size() < wire::AckFrameSize(0)) return 0;
  uint64_t words[wire::kMaxSackWords];
  const size_t room_words = std::min<size_t>(
      wire::kMaxSackWords, (out.size() - wire::kAckHeaderSize) / 8);
  const size_t n = window_.FillSack(absl::MakeSpan(words, room_words));
  const reorder::AckScheduler::Echo echo = acks_.OnAckSent(now);
  last_ack_urgent_ = echo.urgent;
  // A second copy repeats the duplicate echo of the first.
  const bool echo_dup = echo.duplicate || (ack_copy_due_ && ack_copy_echo_dup_);
  last_ack_echo_dup_ = echo_dup;
  wire::AckHeader h;
  h.flags = (nak_pending_ ? wire::kAckFlagNak : 0) |
            (echo.ce ? wire::kAckFlagEchoCe : 0) |
            (echo_dup ? wire::kAckFlagEchoDup : 0);
  h.echo_path_id = echo.path;
  h.src_incarnation = link_->our_inc;
  h.dst_incarnation = link_->peer_inc;
  h.cum_psn = window_.cum();
  h.echo_path_seq = echo.seq;
  h.ack_delay_ns = static_cast<uint32_t>(
      std::clamp<int64_t>(echo.ack_delay.ns(), 0, 0xffffffffLL));
  const uint64_t queue_room = link_->host->ReceiveQueueRoom();
  granted_ = CreditLimit(queue_room);
  h.credit_psn = granted_;
  if (queue_room < cfg().proto.receive_budget_bytes) credit_squeezed_ = true;
  h.ce_count = echo.ce_count;
  h.session = rx_session_;
  const size_t size = wire::WriteAck(h, absl::MakeConstSpan(words, n), out);
  if (size == 0) return 0;
  ++acks_sent_;
  rx_since_ack_ = false;
  window_update_ = false;
  if (nak_pending_) {
    nak_pending_ = false;
    nak_sent_for_cum_ = true;
  }
  return size;
}

size_t PeerReceiver::WriteDueAck(TimeNs now, absl::Span<uint8_t> out,
                                 bool due) {
  last_ack_urgent_ = false;
  const size_t n = due ? WriteAck(now, out) : 0;
  ack_copy_due_ = false;
  return n;
}

void PeerReceiver::OnSync(const wire::CtrlFrame& c) {
  // Session numbers start at a random value per sender context, so a
  // sender that forgot us (evicted) never reuses the one we hold; a SYNC
  // of the current or a retired session is a late duplicate.
  if (rx_synced_ && c.session == rx_session_) return;
  for (uint32_t r : retired_sessions_) {
    if (r != 0 && r == c.session) return;
  }
  ResetReceiveSide(c.session, wire::Psn(c.value));
  rx_synced_ = true;
}

void PeerReceiver::OnProbe(const wire::CtrlFrame& c) {
  if (rx_synced_ && c.session == rx_session_) window_update_ = true;
}

size_t PeerReceiver::WriteNeedSync(absl::Span<uint8_t> out) {
  wire::CtrlFrame c;
  c.type = wire::CtrlType::kNeedSync;
  c.src_incarnation = link_->our_inc;
  c.dst_incarnation = link_->peer_inc;
  c.value = need_sync_psn_.value();
  need_sync_reply_ = false;
  return wire::WriteCtrl(c, out);
}

void PeerReceiver::OnDatagramBuilt(wire::PathId path, size_t ack_bytes,
                                   bool ack_only, bool copy, bool other_paths) {
  if (ack_bytes > 0 && ack_only && last_ack_urgent_ && !copy &&
      cfg().proto.duplicate_urgent_acks && other_paths) {
    // An urgent ack alone in its datagram: send it again on another path
    // (built right after this one, in the same transmit turn).
    ack_copy_due_ = true;
    ack_copy_avoid_ = path;
    ack_copy_echo_dup_ = last_ack_echo_dup_;
  }
  if (ack_bytes > 0) {
    last_ack_path_ = path;
    last_ack_blamable_ = true;
  }
}

void PeerReceiver::FillStats(PeerStats* s) const {
  s->packets_received = packets_received_;
  s->bytes_received = bytes_received_;
  s->messages_received = messages_received_;
  const reorder::ReassemblerStats& rs = reassembler_.stats();
  s->messages_placed = rs.messages_placed;
  s->messages_refused = rs.messages_refused;
  const reorder::OrderedReleaseStats& os = ordered_.stats();
  s->ordered_refused = os.stale + os.duplicate + os.too_many_streams;
  s->bytes_placed = rs.bytes_placed;
  s->bytes_reassembled = rs.bytes_copied;
  s->acks_sent = acks_sent_;
  s->ecn_marks_received = ecn_marks_received_;
  s->return_path_losses = return_path_losses_;
}

}  // namespace braid::endpoint

// Peer, send side: segmentation, data frames, acks in, completions out,
// sessions.
#include <algorithm>
#include <cstring>

#include "endpoint/peer.h"

namespace braid::endpoint {
namespace {

// A fragment's tag in the sent-packet manager: its message and byte offset.
constexpr uint64_t TagOf(uint32_t msg_seq, uint32_t offset) {
  return (uint64_t{msg_seq} << 32) | offset;
}
constexpr uint32_t MsgOf(uint64_t tag) {
  return static_cast<uint32_t>(tag >> 32);
}
constexpr uint32_t OffsetOf(uint64_t tag) { return static_cast<uint32_t>(tag); }

uint8_t PlacedFlag(const OutMessage& m) {
  return m.placed ? wire::kDataFlagPlaced : 0;
}

}  // namespace

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

void Peer::CopyDeferred() {
  if (deferred_.len > 0) {
    std::memcpy(deferred_.dst, deferred_.src, deferred_.len);
  }
  deferred_ = DeferredPayload();
}

wire::PathId Peer::NextSprayPath(TimeNs now, int avoid, bool healthy_only) {
  if (run_left_ > 0 && run_path_ != avoid &&
      paths_.stats(run_path_).health == multipath::PathHealth::kHealthy) {
    --run_left_;
    return run_path_;
  }
  run_path_ = paths_.Pick(now, avoid, healthy_only);
  run_left_ = cfg_.proto.spray_run > 1 ? cfg_.proto.spray_run - 1 : 0;
  return run_path_;
}

// Inlined into both callers: it runs once per datagram or run sent.
[[gnu::always_inline]] inline void Peer::SendNewFragments(
    OutMessage& m, wire::PathId path, uint32_t plen, uint32_t count, TimeNs now,
    wire::DataHeader* h) {
  const uint32_t offset = m.next_offset;
  const uint32_t bytes =
      static_cast<uint32_t>(wire::DataHeaderBytes(h->flags)) + plen;
  h->stream_id = m.stream;
  h->psn = sent_.next_psn();
  h->path_seq = paths_.OnSentRun(path, bytes, count, now);
  h->msg_seq = wire::MsgSeq(m.msg_seq);
  h->stream_seq = m.stream_seq;
  h->msg_len = m.len;
  h->frag_offset = offset;
  sent_.OnFirstSentRun(TagOf(m.msg_seq, offset), plen, bytes, path, h->path_seq,
                       count, now);
  if (oldest_unacked_since_.IsInfinite()) TrackOldestUnacked(now);
  m.last_psn = h->psn + (count - 1);
  m.next_offset += plen * count;
  m.frags_sent += count;
  packets_sent_ += count;
  bytes_sent_ += uint64_t{plen} * count;
}

size_t Peer::WriteFrame(const wire::DataHeader& h, const uint8_t* payload,
                        uint32_t len, absl::Span<uint8_t> out) {
  // The previous frame's payload goes in now; this one's waits, so the last
  // payload of a datagram can leave from the message's buffer uncopied.
  CopyDeferred();
  const size_t hdr = wire::WriteDataHeader(h, len, out);
  deferred_.dst = out.data() + hdr;
  deferred_.src = payload;
  deferred_.len = len;
  return hdr + len;
}

size_t Peer::WriteDataFrames(TimeNs now, absl::Span<uint8_t> out,
                             wire::PathId path) {
  size_t pos = 0;
  size_t last_frame = SIZE_MAX;
  int frames = 0;
  const bool multipath = paths_.size() > 1;
  for (;;) {
    const size_t room = out.size() - pos;
    if (room < wire::kDataHeaderSize) break;
    wire::DataHeader h;
    h.path_id = path;
    h.src_incarnation = cfg_.local_incarnation;
    h.dst_incarnation = peer_inc_;
    wire::Psn psn;
    uint64_t tag;
    uint32_t bytes;
    wire::PathId last_path;
    if (sent_.PeekRetransmit(&psn, &tag, &bytes, &last_path)) {
      // A retransmission goes on another path than its last one; if this
      // datagram's path is that one, it waits for the next datagram.
      if (frames > 0 && multipath && last_path == path) break;
      OutMessage* m = MessageForTag(tag);
      if (m == nullptr || m->done) {
        sent_.PopRetransmit(&psn, &tag, &bytes, &last_path);  // stale entry
        continue;
      }
      // A re-send carries exactly the bytes of the original fragment.
      h.flags =
          wire::kDataFlagRetransmit | wire::kDataFlagAckNow | PlacedFlag(*m);
      const uint32_t offset = OffsetOf(tag);
      const uint32_t plen =
          bytes - static_cast<uint32_t>(wire::DataHeaderBytes(h.flags));
      h.placement = m->placement;
      if (bytes > room) break;
      sent_.PopRetransmit(&psn, &tag, &bytes, &last_path);
      h.stream_id = m->stream;
      h.psn = psn;
      h.path_seq = paths_.OnSent(path, bytes, now);
      h.msg_seq = wire::MsgSeq(m->msg_seq);
      h.stream_seq = m->stream_seq;
      h.msg_len = m->len;
      h.frag_offset = offset;
      last_frame = pos;
      pos += WriteFrame(h, m->At(offset), plen, out.subspan(pos));
      sent_.OnRetransmitted(psn, path, h.path_seq, now);
      ++rel_.retransmits;
      ++packets_sent_;
      ++frames;
      continue;
    }
    if (!CanSendNew()) {
      if (HasNewData() && sent_.next_psn() >= credit_limit_ &&
          !credit_blocked_) {
        credit_blocked_ = true;
        ++credit_blocked_count_;
      }
      break;
    }
    // New data: the fragment takes what is left of the datagram (at least
    // one byte), so a datagram ends one message and starts the next and
    // every datagram of a bulk transfer has the same size (whole GSO runs).
    // Except that a message small enough for one datagram is not split: if
    // it does not fit in what is left, it starts the next datagram (one
    // fragment, no reassembly at the receiver, one loss cannot cost it
    // twice). Splitting them made 1 KiB messages 2.4x slower than 1.4 KiB
    // ones (braid-perf --test rate on loopback).
    OutMessage* m = nullptr;
    if (!inflight_.empty() && inflight_.back().HasUnsent()) {
      m = &inflight_.back();
    } else if (!queued_.empty()) {
      const OutMessage& q = queued_.front();
      const size_t q_hdr = wire::DataHeaderBytes(PlacedFlag(q));
      if (q_hdr + (q.len > 0 ? 1 : 0) > room) break;
      if (frames > 0 && q_hdr + q.len > room &&
          q_hdr + q.len <= WholeDatagramRoom()) {
        break;
      }
      inflight_.push_back(std::move(queued_.front()));
      queued_.pop_front();
      if (inflight_.size() == 1) inflight_base_ = next_msg_seq_;
      m = &inflight_.back();
      StartMessage(*m);
    } else {
      break;
    }
    h.flags = PlacedFlag(*m);
    h.placement = m->placement;
    const size_t hdr = wire::DataHeaderBytes(h.flags);
    const uint32_t offset = m->next_offset;
    const uint32_t left = m->len - offset;
    if (hdr + (left > 0 ? 1 : 0) > room) break;
    // A fragment never spans a prefix and the caller's body (two buffers);
    // its re-sends repeat its offset and length, so they do not either.
    const uint32_t plen = static_cast<uint32_t>(
        std::min<size_t>(m->ContiguousFrom(offset), room - hdr));
    last_frame = pos;
    const uint8_t* payload = m->At(offset);
    SendNewFragments(*m, path, plen, 1, now, &h);
    pos += WriteFrame(h, payload, plen, out.subspan(pos));
    ++frames;
  }
  // The last frame we can send for now asks for an immediate ack, so the
  // tail of a burst is never held by ack coalescing.
  if (last_frame != SIZE_MAX && !HasSendable()) {
    out[last_frame + 2] |= wire::kDataFlagAckNow;
  }
  return pos;
}

size_t Peer::BuildFullDatagrams(TimeNs now, TxBatch* batch, size_t max,
                                absl::Span<const uint8_t> preamble,
                                bool uncopied) {
  // Whatever BuildDatagram would put in front of the data, or instead of
  // new data, is left to it.
  if (!session_confirmed_ || need_sync_reply_ || probe_due_ || ack_copy_due_ ||
      sent_.HasRetransmit() || acks_.pending() || AckWanted(now) ||
      inflight_.empty()) {
    return 0;
  }
  const uint32_t room = cfg_.max_datagram - wire::kPreambleSize;
  size_t n = 0;
  // CanSendNew() as of now; recomputed after each run (nothing else
  // changes it inside this loop).
  bool can_send = CanSendNew();
  while (n < max && !batch->full()) {
    OutMessage& m = inflight_.back();
    if (!can_send || !m.HasUnsent()) break;
    const uint8_t flags = PlacedFlag(m);
    const uint32_t hdr = static_cast<uint32_t>(wire::DataHeaderBytes(flags));
    const uint32_t offset = m.next_offset;
    // One frame fills the datagram: BuildDatagram's fragment would take
    // all of its room too (and then find no room for another frame).
    const uint32_t plen = room - hdr;
    const uint32_t whole = m.ContiguousFrom(offset) / plen;
    if (whole == 0) break;
    // A new spray run that the batch cannot hold whole waits for the next.
    if (batch->size() > 0 && RunWouldSplit(batch->room())) {
      batch->Close();
      break;
    }
    // The path, chosen as BuildDatagram chooses it for new data. The
    // datagrams after the first continue its run for as long as
    // NextSprayPath would keep to it (a healthy path with run left) and
    // CanSendNew would allow them: they go out as one run, each the same
    // as the one before but for PSN, path seq and offset.
    const wire::PathId path = NextSprayPath(now, /*avoid=*/-1, false);
    const bool run_goes_on =
        paths_.stats(path).health == multipath::PathHealth::kHealthy;
    const uint32_t cap = static_cast<uint32_t>(
        std::min<size_t>({size_t{whole}, max - n, batch->room(),
                          size_t{1} + (run_goes_on ? run_left_ : 0u)}));
    const uint32_t count = NewDatagramBudget(hdr + plen, cap);
    if (count == 0) break;  // (not expected: CanSendNew held for the first)
    run_left_ = static_cast<uint16_t>(run_left_ - (count - 1));
    last_ack_urgent_ = false;
    wire::DataHeader h;
    h.path_id = path;
    h.src_incarnation = cfg_.local_incarnation;
    h.dst_incarnation = peer_inc_;
    h.flags = flags;
    h.placement = m.placement;
    const uint8_t* payload = m.At(offset);
    SendNewFragments(m, path, plen, count, now, &h);
    const bool tail_uncopied = uncopied && plen >= cfg_.min_uncopied_payload;
    const uint32_t len = wire::kPreambleSize + hdr + (tail_uncopied ? 0 : plen);
    const wire::Entropy entropy = paths_.entropy(path);
    uint8_t* first = batch->next_slot().data();
    std::memcpy(first, preamble.data(), wire::kPreambleSize);
    wire::WriteDataHeader(h, plen,
                          absl::MakeSpan(first + wire::kPreambleSize, room));
    uint8_t* frame = nullptr;
    for (uint32_t i = 0; i < count; ++i) {
      uint8_t* slot = batch->next_slot().data();
      frame = slot + wire::kPreambleSize;
      if (i > 0) {
        // A fixed size for the usual header: inline moves, not a call.
        if (hdr == wire::kDataHeaderSize) {
          std::memcpy(slot, first, wire::kPreambleSize + wire::kDataHeaderSize);
        } else {
          std::memcpy(slot, first, wire::kPreambleSize + hdr);
        }
        wire::PatchDataHeader(frame, h.psn + i, h.path_seq + i,
                              offset + i * plen);
      }
      absl::Span<const uint8_t> tail;
      if (tail_uncopied) {
        tail = absl::MakeConstSpan(payload, plen);
      } else {
        std::memcpy(frame + hdr, payload, plen);
      }
      payload += plen;
      batch->Commit(
          addr_, entropy, len, /*ect=*/true, tail, local_,
          static_cast<uint8_t>(std::min<uint32_t>(count - 1 - i, 255)));
    }
    n += count;
    // The last datagram we can send for now asks for an immediate ack, as
    // in WriteDataFrames (!HasSendable(); no re-send is queued here).
    can_send = CanSendNew();
    if (!can_send || !HasNewData()) frame[2] |= wire::kDataFlagAckNow;
    last_activity_ = now;
  }
  return n;
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

// PeerSender, data frames: the builder of data datagrams, for
// Peer::BuildDatagram's general path and the bulk fast path
// (BuildFullDatagrams).
#include <algorithm>
#include <cstring>

#include "endpoint/peer_sender.h"

namespace braid::endpoint {
namespace {

uint8_t PlacedFlag(const OutMessage& m) {
  return m.placed ? wire::kDataFlagPlaced : 0;
}

// Header bytes of a first transmission of a fragment of `m`.
uint32_t NewHeaderBytes(const OutMessage& m) {
  return static_cast<uint32_t>(wire::DataHeaderBytes(PlacedFlag(m)));
}

}  // namespace

void PeerSender::CopyDeferred() {
  if (deferred_.len > 0) {
    std::memcpy(deferred_.dst, deferred_.src, deferred_.len);
  }
  deferred_ = DeferredPayload();
}

void PeerSender::DeferPayload(uint8_t* dst, const uint8_t* src, uint32_t len,
                              backend::TxHold* hold) {
  // The previous frame's payload goes in now; this one's waits, so the last
  // payload of a datagram can leave from the message's buffer uncopied.
  CopyDeferred();
  deferred_.dst = dst;
  deferred_.src = src;
  deferred_.len = len;
  deferred_.hold = hold;
}

wire::PathId PeerSender::NextSprayPath(TimeNs now, int avoid,
                                       bool healthy_only) {
  if (run_path_ != avoid && SprayRunFollowers() > 0) {
    --run_left_;
    return run_path_;
  }
  run_path_ = paths_.Pick(now, avoid, healthy_only);
  run_left_ = cfg().proto.spray_run > 1 ? cfg().proto.spray_run - 1 : 0;
  return run_path_;
}

// Inlined: it runs once per frame or run written.
[[gnu::always_inline]] inline wire::DataHeader PeerSender::DataFrameHeader(
    const OutMessage& m, wire::PathId path, uint8_t flags,
    uint32_t offset) const {
  wire::DataHeader h;
  h.flags = flags | PlacedFlag(m);
  h.path_id = path;
  h.stream_id = m.stream;
  h.src_incarnation = link_->our_inc;
  h.dst_incarnation = link_->peer_inc;
  h.msg_seq = wire::MsgSeq(m.msg_seq);
  h.stream_seq = m.stream_seq;
  h.msg_len = m.len;
  h.frag_offset = offset;
  h.placement = m.placement;
  return h;
}

// Inlined into both callers: it runs once per datagram or run sent.
template <typename EachFrame>
[[gnu::always_inline]] inline uint32_t PeerSender::WriteNewFragments(
    OutMessage& m, wire::PathId path, uint32_t plen, uint32_t count, TimeNs now,
    absl::Span<uint8_t> first, size_t stride, size_t lead, EachFrame&& each) {
  const uint32_t offset = m.next_offset;
  wire::DataHeader h = DataFrameHeader(m, path, 0, offset);
  const uint32_t bytes =
      static_cast<uint32_t>(wire::DataHeaderBytes(h.flags)) + plen;
  h.psn = sent_.next_psn();
  h.path_seq = paths_.OnSentRun(path, bytes, count, now);
  sent_.OnFirstSentRun(TagOf(m.msg_seq, offset), plen, bytes, path, h.path_seq,
                       count, now);
  if (oldest_unacked_since_.IsInfinite()) TrackOldestUnacked(now);
  const uint8_t* payload = m.At(offset);
  m.last_psn = h.psn + (count - 1);
  m.next_offset += plen * count;
  m.frags_sent += count;
  packets_sent_ += count;
  bytes_sent_ += uint64_t{plen} * count;
  return static_cast<uint32_t>(wire::WriteDataHeaderRun(
      h, plen, count, first, stride, lead, [&](uint32_t i, uint8_t* frame) {
        each(i, frame, payload + size_t{i} * plen);
      }));
}

uint32_t PeerSender::WriteNewFragmentsForTesting(
    OutMessage& m, wire::PathId path, uint32_t plen, uint32_t count, TimeNs now,
    absl::Span<uint8_t> first, size_t stride, size_t lead,
    absl::FunctionRef<void(uint32_t, uint8_t*, const uint8_t*)> each) {
  return WriteNewFragments(m, path, plen, count, now, first, stride, lead,
                           each);
}

// Inlined into both callers: it runs once per datagram or run sent.
[[gnu::always_inline]] inline bool PeerSender::AskAckIfLastForNow(
    uint8_t* frame) {
  // The tail of a burst is then never held by ack coalescing.
  if (HasSendable()) return false;
  wire::AddDataFlags(frame, wire::kDataFlagAckNow);
  return true;
}

[[gnu::always_inline]] inline PeerSender::ResendStep PeerSender::WriteResend(
    TimeNs now, absl::Span<uint8_t> out, wire::PathId path, int frames,
    size_t* written) {
  wire::Psn psn;
  uint64_t tag;
  uint32_t bytes;
  wire::PathId last_path;
  if (!sent_.PeekRetransmit(&psn, &tag, &bytes, &last_path)) {
    return ResendStep::kNone;
  }
  // A retransmission goes on another path than its last one; if this
  // datagram's path is that one, it waits for the next datagram.
  if (frames > 0 && paths_.size() > 1 && last_path == path) {
    return ResendStep::kStop;
  }
  OutMessage* m = MessageForTag(tag);
  if (m == nullptr || m->done) {
    sent_.PopRetransmit(&psn, &tag, &bytes, &last_path);  // stale entry
    return ResendStep::kSkipped;
  }
  // A re-send carries exactly the bytes of the original fragment.
  wire::DataHeader h = DataFrameHeader(
      *m, path, wire::kDataFlagRetransmit | wire::kDataFlagAckNow,
      OffsetOf(tag));
  const size_t hdr = wire::DataHeaderBytes(h.flags);
  const uint32_t plen = bytes - static_cast<uint32_t>(hdr);
  if (bytes > out.size()) return ResendStep::kStop;
  sent_.PopRetransmit(&psn, &tag, &bytes, &last_path);
  h.psn = psn;
  h.path_seq = paths_.OnSent(path, bytes, now);
  wire::WriteDataHeader(h, plen, out);
  DeferPayload(out.data() + hdr, m->At(h.frag_offset), plen, m->hold);
  sent_.OnRetransmitted(psn, path, h.path_seq, now);
  ++rel_.retransmits;
  ++packets_sent_;
  *written = bytes;
  return ResendStep::kWritten;
}

[[gnu::always_inline]] inline OutMessage* PeerSender::NextNewMessage(
    size_t room, int frames) {
  // New data: the fragment takes what is left of the datagram (at least
  // one byte), so a datagram ends one message and starts the next and
  // every datagram of a bulk transfer has the same size (whole GSO runs).
  // Except that a message small enough for one datagram is not split: if
  // it does not fit in what is left, it starts the next datagram (one
  // fragment, no reassembly at the receiver, one loss cannot cost it
  // twice). Splitting them made 1 KiB messages 2.4x slower than 1.4 KiB
  // ones (braid-perf --test rate on loopback).
  // A hinted message's new data goes only on its flow's path.
  if (!inflight_.empty() && inflight_.back().HasUnsent()) {
    return FlowFits(inflight_.back().flow) ? &inflight_.back() : nullptr;
  }
  if (queued_.empty()) return nullptr;
  const OutMessage& q = queued_.front();
  if (!FlowFits(q.flow)) return nullptr;
  const size_t q_hdr = NewHeaderBytes(q);
  if (q_hdr + (q.len > 0 ? 1 : 0) > room) return nullptr;
  if (frames > 0 && q_hdr + q.len > room &&
      q_hdr + q.len <= WholeDatagramRoom()) {
    return nullptr;
  }
  inflight_.push_back(std::move(queued_.front()));
  queued_.pop_front();
  if (inflight_.size() == 1) inflight_base_ = next_msg_seq_;
  OutMessage* m = &inflight_.back();
  StartMessage(*m);
  return m;
}

size_t PeerSender::WriteDataFrames(TimeNs now, absl::Span<uint8_t> out,
                                   wire::PathId path) {
  size_t pos = 0;
  size_t last_frame = SIZE_MAX;
  int frames = 0;
  for (;;) {
    const size_t room = out.size() - pos;
    if (room < wire::kDataHeaderSize) break;
    size_t written = 0;
    const ResendStep step =
        WriteResend(now, out.subspan(pos), path, frames, &written);
    if (step == ResendStep::kStop) break;
    if (step == ResendStep::kSkipped) continue;
    if (step == ResendStep::kWritten) {
      last_frame = pos;
      pos += written;
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
    OutMessage* m = NextNewMessage(room, frames);
    if (m == nullptr) break;
    const size_t hdr = NewHeaderBytes(*m);
    const uint32_t offset = m->next_offset;
    const uint32_t left = m->len - offset;
    if (hdr + (left > 0 ? 1 : 0) > room) break;
    // A fragment never spans a prefix and the caller's body (two buffers);
    // its re-sends repeat its offset and length, so they do not either.
    const uint32_t plen = static_cast<uint32_t>(
        std::min<size_t>(m->ContiguousFrom(offset), room - hdr));
    last_frame = pos;
    pos += WriteNewFragments(
               *m, path, plen, /*count=*/1, now, out.subspan(pos), 0, 0,
               [&](uint32_t, uint8_t* frame, const uint8_t* payload) {
                 DeferPayload(frame + hdr, payload, plen, m->hold);
               }) +
           plen;
    ++frames;
  }
  if (last_frame != SIZE_MAX) AskAckIfLastForNow(out.data() + last_frame);
  return pos;
}

size_t PeerSender::BuildFullDatagrams(TimeNs now, TxBatch* batch, size_t max,
                                      absl::Span<const uint8_t> preamble,
                                      bool uncopied) {
  // Whatever BuildDatagram would put in front of the data, or instead of
  // new data, is left to it (Peer::BuildFullDatagrams has checked the
  // receiver half's part).
  if (!session_confirmed_ || probe_due_ || sent_.HasRetransmit() ||
      inflight_.empty()) {
    return 0;
  }
  const uint32_t lead = cfg().lead;
  const uint32_t room = cfg().max_datagram - lead;
  size_t n = 0;
  // CanSendNew() as of now; recomputed after each run (nothing else
  // changes it inside this loop).
  bool can_send = CanSendNew();
  while (n < max && !batch->full()) {
    OutMessage& m = inflight_.back();
    if (!can_send || !m.HasUnsent()) break;
    const uint32_t hdr = NewHeaderBytes(m);
    // One frame fills the datagram: BuildDatagram's fragment would take
    // all of its room too (and then find no room for another frame).
    const uint32_t plen = room - hdr;
    const uint32_t whole = m.ContiguousFrom(m.next_offset) / plen;
    if (whole == 0) break;
    // A new spray run that the batch cannot hold whole waits for the next.
    if (batch->size() > 0 && RunWouldSplit(batch->room())) {
      batch->Close();
      break;
    }
    // The path, chosen as BuildDatagram chooses it for new data. The
    // datagrams after the first continue its run for as long as
    // NextSprayPath would keep to it (a hinted message: up to a run's
    // length on its flow's path) and CanSendNew would allow them: they go
    // out as one run, built by the same WriteNewFragments.
    const bool hinted = m.flow != 0;
    const wire::PathId path = hinted ? FlowPath(now, m.flow)
                                     : NextSprayPath(now, /*avoid=*/-1, false);
    size_t run = size_t{1} + SprayRunFollowers();
    if (hinted) {
      // A probing path takes its probe alone, as in a spray run.
      run = paths_.stats(path).health == multipath::PathHealth::kHealthy
                ? std::max<size_t>(cfg().proto.spray_run, 1)
                : 1;
    }
    const uint32_t cap = static_cast<uint32_t>(
        std::min<size_t>({size_t{whole}, max - n, batch->room(), run}));
    const uint32_t count = NewDatagramBudget(hdr + plen, cap);
    if (count == 0) break;  // (not expected: CanSendNew held for the first)
    if (!hinted) run_left_ = static_cast<uint16_t>(run_left_ - (count - 1));
    const bool tail_uncopied = uncopied && LeavesTailUncopied(plen);
    const uint32_t len = lead + hdr + (tail_uncopied ? 0 : plen);
    const wire::Entropy entropy = paths_.entropy(path);
    uint8_t* first = batch->next_slot().data();
    std::memcpy(first, preamble.data(), lead);
    uint8_t* frame = nullptr;
    WriteNewFragments(
        m, path, plen, count, now, absl::MakeSpan(first + lead, room),
        batch->slot_size(), lead,
        [&](uint32_t i, uint8_t* f, const uint8_t* payload) {
          absl::Span<const uint8_t> tail;
          if (tail_uncopied) {
            tail = absl::MakeConstSpan(payload, plen);
          } else {
            std::memcpy(f + hdr, payload, plen);
          }
          // Frame i is in the batch's next slot.
          batch->Commit(
              link_->addr, entropy, len, /*ect=*/true, tail, link_->local,
              static_cast<uint8_t>(std::min<uint32_t>(count - 1 - i, 255)),
              tail_uncopied ? m.hold : nullptr);
          frame = f;
        });
    n += count;
    // As in WriteDataFrames (no re-send is queued here, so what stops the
    // ack request also stops this loop).
    can_send = !AskAckIfLastForNow(frame);
    link_->last_activity = now;
  }
  return n;
}

}  // namespace braid::endpoint

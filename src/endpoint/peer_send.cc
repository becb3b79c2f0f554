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

}  // namespace braid::endpoint

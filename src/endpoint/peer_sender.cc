// PeerSender: sessions, messages (what may be sent, completion, failure),
// control frames. Data frames are built in peer_data_frames.cc; acks in and
// timers are in peer_sender_ack.cc.
#include "endpoint/peer_sender.h"

#include <algorithm>

namespace braid::endpoint {
namespace {

multipath::PathSetOptions PathOptions(const PeerConfig& cfg) {
  multipath::PathSetOptions o;
  o.num_paths = cfg.proto.mode == Mode::kGoBackN
                    ? 1
                    : std::clamp<uint16_t>(cfg.proto.paths, 1, 256);
  o.entropy_space = cfg.entropy_count;
  o.spray_choices = cfg.proto.spray_choices;
  return o;
}

retransmit::RetransmitOptions RtxOptions(const PeerConfig& cfg) {
  retransmit::RetransmitOptions o;
  o.min_rto = cfg.proto.min_rto;
  // Backoff must leave room for many attempts before the peer is declared
  // unreachable: a heavily lossy path can lose several probes in a row.
  o.max_rto = Max(cfg.proto.min_rto,
                  Min(cfg.proto.max_rto, cfg.proto.peer_timeout / 16));
  o.initial_rtt = cfg.proto.initial_rtt;
  o.go_back_n = cfg.proto.mode == Mode::kGoBackN;
  o.acked_runs = cfg.acked_runs;
  o.tail_probe = cfg.proto.mode != Mode::kGoBackN;
  // The tail probe needs no allowance for ack coalescing: the newest packet
  // of every burst asks for an immediate ack (kDataFlagAckNow), and the
  // response srtt it is timed by already includes how long receivers hold
  // acks. Measured on a loopback ping-pong with 1 % loss on both sides
  // (docs/performance.md): p99 16-20 us instead of 20-25 us, the
  // same number of probes.
  o.max_ack_delay = DurationNs::Zero();
  // Room for a small exchange; the ring doubles as the window grows, so a
  // peer that sends a few messages holds a few hundred bytes, not 12 KiB.
  o.initial_window_packets = 16;
  return o;
}

cc::CcOptions CongestionOptions(const PeerConfig& cfg) {
  cc::CcOptions o;
  o.algorithm = cfg.proto.cc == CcAlgorithm::kNone
                    ? cc::CcOptions::Algorithm::kNone
                    : cc::CcOptions::Algorithm::kSwift;
  o.mss = cfg.mss;
  o.initial_cwnd_bytes = cfg.proto.initial_cwnd_bytes;
  o.start_cwnd_bytes = cfg.proto.start_cwnd_bytes;
  // Go-back-N re-sends its whole window after a loss, so a smaller window
  // after any loss is what keeps the baseline from wasting most of a
  // collided link on repeats: every loss counts there, as in classic Swift.
  if (cfg.proto.mode == Mode::kGoBackN) o.loss_queueing_fraction = 0;
  o.min_cwnd_bytes = cfg.mss;
  o.max_cwnd_bytes = cfg.proto.max_cwnd_bytes;
  o.base_target = cfg.proto.cc_target_delay > DurationNs::Zero()
                      ? cfg.proto.cc_target_delay
                      : DurationNs::Micros(50);
  return o;
}

}  // namespace

PeerSender::PeerSender(PeerLink* link, uint64_t seed, TimeNs now)
    : link_(link),
      paths_(PathOptions(link->cfg()), seed),
      sent_(RtxOptions(link->cfg())),
      cc_(cc::MakeCongestionControl(CongestionOptions(link->cfg()))),
      last_ack_progress_(now),
      next_probe_(TimeNs::Infinite()) {
  // A random first session number: if this endpoint forgets the peer
  // (eviction) and meets it again, the peer's receive side must see a new
  // session, not a continuation of the old one.
  session_ = static_cast<uint32_t>(seed >> 32) | 1;
  session_base_ = sent_.next_psn();
  credit_limit_ = session_base_ + wire::kInitialCreditPackets;
}

PeerSender::~PeerSender() = default;

void PeerSender::ApplyResume(const Resume& r) {
  sent_.Reset(r.next_psn);
  session_ = r.session;
  session_base_ = r.next_psn;
  credit_limit_ = r.next_psn + wire::kInitialCreditPackets;
}

void PeerSender::Enqueue(OutMessage&& m, absl::FunctionRef<TimeNs()> now) {
  if (!sent_.HasUnacked() && queued_.empty() && inflight_count_ == 0) {
    // Idle → busy: the silence deadline counts from now.
    last_ack_progress_ = now();
  }
  queued_.push_back(std::move(m));
}

bool PeerSender::CanSendNew() const {
  if (sent_.packets_in_flight() > 0 &&
      sent_.bytes_in_flight() + cfg().mss + wire::kDataHeaderSize >
          cc_->cwnd_bytes()) {
    return false;
  }
  // Within one ack's reach of the lowest unacked PSN: behind a hole at the
  // receiver's cum, a packet past the reach could neither be acked nor
  // judged lost (only an RTO would move it). The receiver's datagrams are
  // taken to be as large as ours (the same MTU on both sides).
  if (sent_.next_psn() - sent_.lowest_unacked() >=
      static_cast<int32_t>(cfg().ack_reach)) {
    return false;
  }
  return sent_.next_psn() < credit_limit_;
}

uint32_t PeerSender::NewDatagramBudget(uint32_t bytes, uint32_t cap) const {
  // CanSendNew's three limits, each turned into a count of datagrams.
  const int32_t outstanding = sent_.next_psn() - sent_.lowest_unacked();
  const int64_t by_reach = int64_t{cfg().ack_reach} - outstanding;
  const int64_t by_credit = credit_limit_ - sent_.next_psn();
  int64_t n = std::min<int64_t>({int64_t{cap}, by_reach, by_credit});
  if (n <= 0) return 0;
  // The window: the j-th datagram (from 0) may go if nothing is in flight
  // before it, or if in-flight bytes + j * bytes + one more MSS fit.
  const uint64_t need = cfg().mss + wire::kDataHeaderSize;
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

bool PeerSender::HasNewData() const {
  return !queued_.empty() ||
         (!inflight_.empty() && inflight_.back().HasUnsent());
}

bool PeerSender::HasSendable() const {
  if (sent_.HasRetransmit()) return true;
  return HasNewData() && CanSendNew();
}

OutMessage* PeerSender::MessageForTag(uint64_t tag) {
  const uint32_t idx = MsgOf(tag) - inflight_base_;
  if (idx >= inflight_.size()) return nullptr;
  return &inflight_[idx];
}

void PeerSender::StartMessage(OutMessage& m) {
  m.msg_seq = next_msg_seq_++;
  if (m.stream != 0) {
    if (stream_next_seq_.size() <= m.stream)
      stream_next_seq_.resize(m.stream + 1u, 0);
    m.stream_seq = stream_next_seq_[m.stream]++;
  }
  m.next_offset = 0;
  m.frags_sent = 0;
  m.frags_acked = 0;
  if (m.hold == nullptr) m.hold = link_->host->AcquireHold();
  ++inflight_count_;
}

void PeerSender::CompleteMessage(OutMessage& m, TimeNs now) {
  m.done = true;
  --inflight_count_;
  ++messages_sent_;
  Completion c;
  c.type = CompletionType::kSendDone;
  c.peer = link_->addr;
  c.stream = m.stream;
  c.cookie = m.cookie;
  FinishSend(m, std::move(c));
}

void PeerSender::FinishSend(OutMessage& m, Completion&& c) {
  GiveBackBuffer(m, &c);
  std::vector<uint8_t> copy = std::move(m.owned);
  std::vector<uint8_t>().swap(m.owned);  // the copy leaves the message now
  m.data = nullptr;
  backend::TxHold* hold = m.hold;
  m.hold = nullptr;
  link_->host->CompleteSend(std::move(c), std::move(copy), hold);
}

void PeerSender::PopFinishedMessages() {
  while (!inflight_.empty() && inflight_.front().done) {
    inflight_.pop_front();
    ++inflight_base_;
  }
}

void PeerSender::FailMessage(OutMessage& m, FailureCause cause) {
  ++messages_failed_;
  Completion c;
  c.type = CompletionType::kSendFailed;
  c.cause = cause;
  c.peer = link_->addr;
  c.stream = m.stream;
  c.cookie = m.cookie;
  FinishSend(m, std::move(c));
}

void PeerSender::GiveBackBuffer(OutMessage& m, Completion* c) {
  if (!m.give_back) return;
  c->data = std::move(m.owned);
  m.give_back = false;
  m.data = nullptr;
}

void PeerSender::RestartSession(FailureCause cause, TimeNs now) {
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

void PeerSender::FailAll(FailureCause cause, TimeNs now) {
  RestartSession(cause, now);
  while (!queued_.empty()) {
    FailMessage(queued_.front(), cause);
    queued_.pop_front();
  }
}

bool PeerSender::OnNeedSync(TimeNs now, wire::Psn psn) {
  // Only about data of this session: a late or duplicated NEED_SYNC about
  // an earlier one would re-send this session's messages, which the
  // receiver may have delivered, in another.
  if (psn < session_base_ || psn >= sent_.next_psn()) return false;
  if (session_confirmed_) RestartSession(FailureCause::kNone, now);
  return true;
}

size_t PeerSender::WriteSync(absl::Span<uint8_t> out) const {
  wire::CtrlFrame c;
  c.type = wire::CtrlType::kSync;
  c.src_incarnation = link_->our_inc;
  c.dst_incarnation = link_->peer_inc;
  c.session = session_;
  c.value = session_base_.value();
  return wire::WriteCtrl(c, out);
}

size_t PeerSender::WriteProbe(absl::Span<uint8_t> out) {
  wire::CtrlFrame c;
  c.type = wire::CtrlType::kProbe;
  c.src_incarnation = link_->our_inc;
  c.dst_incarnation = link_->peer_inc;
  c.session = session_;
  probe_due_ = false;
  return wire::WriteCtrl(c, out);
}

wire::PathId PeerSender::DataPath(TimeNs now) {
  data_flow_ = 0;
  wire::Psn psn;
  uint64_t tag;
  uint32_t bytes;
  wire::PathId last;
  while (sent_.PeekRetransmit(&psn, &tag, &bytes, &last)) {
    const OutMessage* m = MessageForTag(tag);
    if (m != nullptr && !m->done) {
      // A re-send goes on a healthy path while there are several, not its
      // last: a packet already lost once must not become the probe of a
      // suspect path. With one healthy path left, that path would carry
      // every re-send, and if it is the one that died (an RTO with nothing
      // behind it never proves that) every re-send would die with it until
      // the peer is declared unreachable: then re-sends spread over every
      // usable path.
      return NextSprayPath(now, last,
                           /*healthy_only=*/paths_.healthy_paths() >= 2);
    }
    // Its message completed (WriteResend would skip it): dropped here, so
    // the path is chosen for what the datagram will really carry.
    sent_.PopRetransmit(&psn, &tag, &bytes, &last);
  }
  const OutMessage* next = NextNewCandidate();
  if (next != nullptr && next->flow != 0) return FlowPath(now, next->flow);
  return NextSprayPath(now, /*avoid=*/-1, /*healthy_only=*/false);
}

wire::PathId PeerSender::FlowPath(TimeNs now, uint32_t flow) {
  data_flow_ = flow;
  const int p = paths_.PickHinted(now, flow);
  if (p >= 0) return static_cast<wire::PathId>(p);
  return paths_.Pick(now, static_cast<int>(flow % paths_.size()));
}

size_t PeerSender::FinishPayload(const uint8_t* end,
                                 absl::Span<const uint8_t>* tail,
                                 backend::TxHold** hold) {
  // A large last payload leaves from the message's buffer (one user-space
  // copy fewer); a small one is cheaper to copy than to describe.
  if (tail != nullptr && LeavesTailUncopied(deferred_.len) &&
      deferred_.dst + deferred_.len == end) {
    *tail = absl::MakeConstSpan(deferred_.src, deferred_.len);
    if (hold != nullptr) *hold = deferred_.hold;
    const size_t left_out = deferred_.len;
    deferred_ = DeferredPayload();
    return left_out;
  }
  if (tail != nullptr) *tail = {};
  CopyDeferred();
  return 0;
}

}  // namespace braid::endpoint

// Peer: construction, incarnations, datagram assembly, timers, stats.
// Send-side logic is in peer_send.cc (data frames in peer_data_frames.cc),
// receive-side logic in peer_receive.cc.
#include "endpoint/peer.h"

#include <algorithm>

namespace braid::endpoint {
namespace {

multipath::PathSetOptions PathOptions(const PeerConfig& cfg) {
  multipath::PathSetOptions o;
  o.num_paths = cfg.proto.mode == Mode::kGoBackN
                    ? 1
                    : std::clamp<uint16_t>(cfg.proto.paths, 1, 256);
  o.entropy_space = cfg.entropy_count;
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
  return o;
}

cc::CcOptions CongestionOptions(const PeerConfig& cfg) {
  cc::CcOptions o;
  o.algorithm = cfg.proto.cc == CcAlgorithm::kNone
                    ? cc::CcOptions::Algorithm::kNone
                    : cc::CcOptions::Algorithm::kSwift;
  o.mss = cfg.mss;
  o.initial_cwnd_bytes = cfg.proto.initial_cwnd_bytes;
  o.min_cwnd_bytes = cfg.mss;
  o.max_cwnd_bytes = cfg.proto.max_cwnd_bytes;
  o.base_target = cfg.proto.cc_target_delay > DurationNs::Zero()
                      ? cfg.proto.cc_target_delay
                      : DurationNs::Micros(50);
  return o;
}

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
  return o;
}

// The PSN window the receiver tracks; credit never exceeds it.
constexpr uint32_t kWindowPackets = 1u << 16;

}  // namespace

Peer::Peer(const PeerConfig& cfg, const NetAddr& addr, uint64_t seed,
           PeerHost* host, TimeNs now)
    : cfg_(cfg),
      addr_(addr),
      host_(host),
      last_activity_(now),
      paths_(PathOptions(cfg), seed),
      sent_(RtxOptions(cfg)),
      cc_(cc::MakeCongestionControl(CongestionOptions(cfg))),
      last_ack_progress_(now),
      next_probe_(TimeNs::Infinite()),
      window_(kWindowPackets),
      acks_(AckOpts(cfg)),
      reassembler_(ReasmOptions(cfg, host)) {
  // A random first session number: if this endpoint forgets the peer
  // (eviction) and meets it again, the peer's receive side must see a new
  // session, not a continuation of the old one.
  session_ = static_cast<uint32_t>(seed >> 32) | 1;
  session_base_ = sent_.next_psn();
  credit_limit_ = session_base_ + wire::kInitialCreditPackets;
  granted_ = window_.cum() + wire::kInitialCreditPackets;
}

Peer::~Peer() = default;

bool Peer::CheckIncarnation(TimeNs now, uint64_t src_inc, bool may_announce,
                            DropStats* drops) {
  if (src_inc == peer_inc_) return true;
  if (peer_inc_ == 0) {
    peer_inc_ = src_inc;
    return true;
  }
  // Only a frame that announces a new life (a SYNC, which a restarted peer
  // sends before any data, or a STALE reply echoing our incarnation) may
  // replace the one we know; anything else with a strange incarnation is
  // stale, forged or corrupted, and must not tear down a working context.
  if (!may_announce) {
    ++drops->stale_incarnation;
    return false;
  }
  for (uint64_t r : retired_incs_) {
    if (r == src_inc) {
      ++drops->stale_incarnation;
      return false;
    }
  }
  // The peer restarted: everything we knew about it is void.
  retired_incs_[retired_next_++ % retired_incs_.size()] = peer_inc_;
  peer_inc_ = src_inc;
  ResetReceiveSide(0, window_.cum());
  rx_synced_ = false;
  retired_sessions_.fill(0);
  RestartSession(FailureCause::kPeerRestarted, now);
  return true;
}

bool Peer::WantsToSend(TimeNs now) const {
  if (AckWanted(now) || ack_copy_due_ || need_sync_reply_ || probe_due_) {
    return true;
  }
  return HasSendable();
}

size_t Peer::BuildDatagram(TimeNs now, absl::Span<uint8_t> out,
                           wire::Entropy* entropy, bool hold_acks,
                           absl::Span<const uint8_t>* tail) {
  size_t pos = 0;
  const bool sendable = HasSendable();
  // Held: an ack alone waits for the data the application is about to send
  // (it rides on it below) or for the caller's next turn.
  if (hold_acks && !sendable && !need_sync_reply_ && !probe_due_ &&
      !ack_copy_due_) {
    return 0;
  }
  wire::PathId path = 0;
  bool have_path = false;
  if (sendable) {
    int avoid = -1;
    wire::Psn psn;
    uint64_t tag;
    uint32_t bytes;
    wire::PathId last;
    const bool resend = sent_.PeekRetransmit(&psn, &tag, &bytes, &last);
    if (resend) avoid = last;
    // A re-send goes on a healthy path if there is one: a packet already
    // lost once must not become the probe of a suspect path.
    path = NextSprayPath(now, avoid, /*healthy_only=*/resend);
    have_path = true;
  }
  // Control first: SYNC must precede the data it announces.
  if (sendable && !session_confirmed_) {
    wire::CtrlFrame c;
    c.type = wire::CtrlType::kSync;
    c.src_incarnation = cfg_.local_incarnation;
    c.dst_incarnation = peer_inc_;
    c.session = session_;
    c.value = session_base_.value();
    pos += wire::WriteCtrl(c, out.subspan(pos));
  }
  if (need_sync_reply_) {
    wire::CtrlFrame c;
    c.type = wire::CtrlType::kNeedSync;
    c.src_incarnation = cfg_.local_incarnation;
    c.dst_incarnation = peer_inc_;
    pos += wire::WriteCtrl(c, out.subspan(pos));
    need_sync_reply_ = false;
  }
  if (probe_due_) {
    wire::CtrlFrame c;
    c.type = wire::CtrlType::kProbe;
    c.src_incarnation = cfg_.local_incarnation;
    c.dst_incarnation = peer_inc_;
    c.session = session_;
    pos += wire::WriteCtrl(c, out.subspan(pos));
    probe_due_ = false;
  }
  // An ack that is due goes now, in front of any data. One that is merely
  // pending rides behind the data if the data left room for a whole ack
  // (small messages, e.g. the reply of a ping-pong): the peer then needs no
  // ack-only datagram.
  const bool copy = ack_copy_due_;
  const bool ack_due = AckWanted(now) || copy;
  last_ack_urgent_ = false;
  size_t ack_bytes = 0;
  if (ack_due) ack_bytes = WriteAck(now, out.subspan(pos));
  pos += ack_bytes;
  ack_copy_due_ = false;
  if (sendable) pos += WriteDataFrames(now, out.subspan(pos), path);
  if (!ack_due && sendable && acks_.pending() &&
      out.size() - pos >= wire::AckFrameSize(wire::kMaxSackWords)) {
    CopyDeferred();  // the ack goes after the payload
    ack_bytes = WriteAck(now, out.subspan(pos));
    pos += ack_bytes;
  }
  // A large last payload leaves from the message's buffer (one user-space
  // copy fewer); a small one is cheaper to copy than to describe.
  if (tail != nullptr && LeavesTailUncopied(deferred_.len) &&
      deferred_.dst + deferred_.len == out.data() + pos) {
    *tail = absl::MakeConstSpan(deferred_.src, deferred_.len);
    pos -= deferred_.len;
    deferred_ = DeferredPayload();
  } else {
    if (tail != nullptr) *tail = {};
    CopyDeferred();
  }
  if (pos == 0) return 0;
  if (!have_path) path = paths_.Pick(now, copy ? ack_copy_avoid_ : -1);
  if (ack_bytes > 0 && pos == ack_bytes && last_ack_urgent_ && !copy &&
      cfg_.proto.duplicate_urgent_acks && paths_.size() > 1) {
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
  *entropy = paths_.entropy(path);
  last_activity_ = now;
  return pos;
}

void Peer::OnTimer(TimeNs now) {
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
                     now - oldest_unacked_since_ >= cfg_.proto.peer_timeout;
  if ((busy && now - last_ack_progress_ >= cfg_.proto.peer_timeout) || stuck) {
    // The peer answered nothing for peer_timeout: fail what it holds up.
    FailAll(FailureCause::kPeerUnreachable, now);
    return;
  }
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

TimeNs Peer::NextWake() const {
  return Min(TimerDeadline(), acks_.NextAckTime());
}

TimeNs Peer::TimerDeadline() const {
  TimeNs t = sent_.NextTimerTime();
  t = Min(t, paths_.NextTimerTime());
  t = Min(t, next_probe_);
  if (sent_.HasUnacked() || !queued_.empty()) {
    t = Min(t, last_ack_progress_ + cfg_.proto.peer_timeout);
  }
  t = Min(t, oldest_unacked_since_ + cfg_.proto.peer_timeout);
  if (credit_blocked_ && next_probe_.IsInfinite()) {
    // Arm the probe timer on the next OnTimer.
    t = Min(t, last_activity_ + sent_.rto());
  }
  return t;
}

bool Peer::Idle() const {
  return queued_.empty() && inflight_count_ == 0 && !sent_.HasUnacked() &&
         reassembler_.partial_messages() == 0 &&
         ordered_.held_messages() == 0 && !acks_.pending();
}

void Peer::OnReceiveSpaceFreed() {
  credit_squeezed = false;
  window_update_ = true;
}

void Peer::FillStats(PeerStats* s, bool with_paths) const {
  s->addr = addr_;
  s->peer_incarnation = peer_inc_;
  s->packets_sent = packets_sent_;
  s->bytes_sent = bytes_sent_;
  s->packets_received = packets_received_;
  s->bytes_received = bytes_received_;
  s->messages_sent = messages_sent_;
  s->messages_failed = messages_failed_;
  s->messages_received = messages_received_;
  const reorder::ReassemblerStats& rs = reassembler_.stats();
  s->messages_placed = rs.messages_placed;
  s->messages_refused = rs.messages_refused;
  const reorder::OrderedReleaseStats& os = ordered_.stats();
  s->ordered_refused = os.stale + os.duplicate + os.too_many_streams;
  s->bytes_placed = rs.bytes_placed;
  s->bytes_reassembled = rs.bytes_copied;
  s->acks_sent = acks_sent_;
  s->acks_received = acks_received_;
  s->ecn_marks_received = ecn_marks_received_;
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
  s->return_path_losses = return_path_losses_;
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

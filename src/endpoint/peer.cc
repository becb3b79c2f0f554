// Peer: the two halves joined — incarnations, control frames, and the
// datagram that carries control frames, an ack and data together.
#include "endpoint/peer.h"

namespace braid::endpoint {

void AccumulatePeerCounters(const PeerStats& s, PeerStats* acc) {
  acc->packets_sent += s.packets_sent;
  acc->bytes_sent += s.bytes_sent;
  acc->packets_received += s.packets_received;
  acc->bytes_received += s.bytes_received;
  acc->messages_sent += s.messages_sent;
  acc->messages_failed += s.messages_failed;
  acc->messages_received += s.messages_received;
  acc->messages_placed += s.messages_placed;
  acc->messages_refused += s.messages_refused;
  acc->ordered_refused += s.ordered_refused;
  acc->bytes_placed += s.bytes_placed;
  acc->bytes_reassembled += s.bytes_reassembled;
  acc->acks_sent += s.acks_sent;
  acc->acks_received += s.acks_received;
  acc->ecn_marks_received += s.ecn_marks_received;
  acc->ecn_echoes += s.ecn_echoes;
  acc->credit_blocked += s.credit_blocked;
  acc->penalties += s.penalties;
  acc->recycles += s.recycles;
  ReliabilityStats& r = acc->reliability;
  const ReliabilityStats& x = s.reliability;
  r.retransmits += x.retransmits;
  r.retransmits_path_gap += x.retransmits_path_gap;
  r.retransmits_time += x.retransmits_time;
  r.retransmits_rto += x.retransmits_rto;
  r.retransmits_tail_probe += x.retransmits_tail_probe;
  r.retransmits_nak += x.retransmits_nak;
  r.retransmits_refused += x.retransmits_refused;
  r.rtos += x.rtos;
  r.spurious_retransmits += x.spurious_retransmits;
  r.spurious_losses += x.spurious_losses;
  r.spurious_gap_losses += x.spurious_gap_losses;
  r.spurious_rtos += x.spurious_rtos;
  r.rto_reroutes += x.rto_reroutes;
}

const PeerConfig& DefaultPeerConfig() {
  static const PeerConfig kDefault;
  return kDefault;
}

Peer::Peer(const PeerConfig& cfg, const NetAddr& addr, uint64_t seed,
           uint64_t our_inc, PeerHost* host, TimeNs now)
    : link_{&cfg,
            addr,
            host,
            /*local=*/0,
            our_inc,
            /*peer_inc=*/0,
            /*peer_inc_confirmed=*/false,
            now},
      seed_(seed) {
  WakeSlow(now);
}

Peer::~Peer() = default;

void Peer::WakeSlow(TimeNs now) {
  sender_ = std::make_unique<PeerSender>(&link_, seed_, now);
  if (tx_resume_.session != 0) sender_->ApplyResume(tx_resume_);
  receiver_ = std::make_unique<PeerReceiver>(&link_);
  if (has_rx_resume_) receiver_->ApplyResume(rx_resume_);
  has_rx_resume_ = false;
  // The next sender's paths and entropies differ from this one's.
  seed_ = seed_ * 6364136223846793005ull + 1442695040888963407ull;
}

bool Peer::Sleep() {
  if (!awake()) return true;
  if (!sender_->Idle()) return false;
  if (!receiver_->TakeResume(&rx_resume_)) return false;
  has_rx_resume_ = true;
  tx_resume_ = sender_->TakeResume();
  PeerStats halves;
  receiver_->FillStats(&halves);
  sender_->FillStats(&halves, false);
  if (past_ == nullptr) past_ = std::make_unique<PeerStats>();
  AccumulatePeerCounters(halves, past_.get());
  sender_.reset();
  receiver_.reset();
  return true;
}

void Peer::ForgetReceiveSide(bool deliver_held) {
  if (awake()) {
    receiver_->OnPeerRestarted(deliver_held);
  } else {
    has_rx_resume_ = false;
  }
}

const ReliabilityStats& Peer::reliability() const {
  static const ReliabilityStats kNone;
  return awake() ? sender_->reliability() : kNone;
}

Peer::Claim Peer::CheckIncarnation(uint64_t src_inc, bool may_announce,
                                   bool names_us, DropStats* drops) {
  if (src_inc == link_.peer_inc) {
    if (names_us) {
      link_.peer_inc_confirmed = true;
      link_.contested = false;
    } else if (link_.contested) {
      // Two lives claim this address and neither has proven itself: the
      // one we heard first may be a forger's. Nothing from it counts until
      // one of them does.
      ++drops->contested_incarnation;
      return Claim::kContested;
    }
    return Claim::kKnown;
  }
  if (link_.peer_inc == 0) {
    // First contact costs no round trip: the first life we hear of is
    // taken on trust (only a later change of life must be proven).
    link_.peer_inc = src_inc;
    link_.peer_inc_confirmed = names_us;
    link_.contested = false;
    return Claim::kKnown;
  }
  if (names_us && !link_.peer_inc_confirmed && !IsRetired(src_inc)) {
    // The peer answers what we sent to its address, from another
    // incarnation than the one a dst-0 frame made us assume: that one was
    // a stranger's (or an earlier life's). Our session stands (it was sent
    // before or is re-sent as lost); what we received does not.
    ReplaceProvisional(src_inc);
    return Claim::kKnown;
  }
  if (IsRetired(src_inc)) {
    ++drops->stale_incarnation;
    return Claim::kStale;
  }
  if (!link_.peer_inc_confirmed) {
    // A second life speaks from the address of one we took on trust, and
    // neither has named us: either may be a forger's. Both are held until
    // one proves itself (the caller challenges both).
    link_.contested = true;
    return Claim::kRestart;
  }
  // Only a frame that announces a new life (a SYNC, which a restarted peer
  // sends before any data, or a STALE reply naming our incarnation) may
  // claim to replace the one we know; anything else with a strange
  // incarnation is stale, forged or corrupted, and must not tear down a
  // working context.
  if (!may_announce) {
    ++drops->stale_incarnation;
    return Claim::kStale;
  }
  return Claim::kRestart;
}

bool Peer::IsRetired(uint64_t inc) const {
  for (uint64_t r : retired_incs_) {
    if (r == inc) return true;
  }
  return false;
}

void Peer::Contest(uint64_t src) {
  if (link_.peer_inc != 0 && !link_.peer_inc_confirmed &&
      src != link_.peer_inc && !IsRetired(src)) {
    link_.contested = true;
  }
}

void Peer::ReplaceProvisional(uint64_t inc) {
  retired_incs_[retired_next_++ % retired_incs_.size()] = link_.peer_inc;
  link_.peer_inc = inc;
  link_.peer_inc_confirmed = true;
  link_.contested = false;
  ForgetReceiveSide(/*deliver_held=*/false);
}

Peer::Adopted Peer::AdoptIncarnation(TimeNs now, uint64_t inc) {
  if (inc == 0 || IsRetired(inc)) return Adopted::kNothing;
  link_.proven = true;
  if (inc == link_.peer_inc) {
    // The life we know proved itself (perhaps one we took on trust).
    link_.peer_inc_confirmed = true;
    link_.contested = false;
    return Adopted::kNothing;
  }
  if (link_.peer_inc == 0) {
    link_.peer_inc = inc;
    link_.peer_inc_confirmed = true;
    return Adopted::kFirst;
  }
  if (!link_.peer_inc_confirmed) {
    // The life we knew was taken on trust and never named us: whoever it
    // was never answered our send session, and the proven life takes that
    // session over (what reached it with dst = 0 is known to it, PSN by
    // PSN, so nothing goes twice; what it dropped as addressed to the
    // other life is re-sent as lost). Failing it instead would let a
    // forger that races first contact fail our sends.
    ReplaceProvisional(inc);
    return Adopted::kReplacedProvisional;
  }
  // The peer restarted: everything we knew about it is void.
  retired_incs_[retired_next_++ % retired_incs_.size()] = link_.peer_inc;
  link_.peer_inc = inc;
  ForgetReceiveSide(/*deliver_held=*/true);
  // What was in flight may have been delivered by the life before: it
  // fails rather than goes again to the new one.
  if (awake()) sender_->RestartSession(FailureCause::kPeerRestarted, now);
  return Adopted::kRestarted;
}

void Peer::OnData(TimeNs now, const wire::DataHeader& h, const uint8_t* payload,
                  bool ce, DropStats* drops, TimeNs arrival) {
  Wake(now);
  receiver_->OnData(now, h, payload, ce, drops, arrival);
  // A re-send of data we had acked: the ack-only datagram that covered it
  // was lost, on a return path only our sender can judge.
  wire::PathId path;
  if (receiver_->TakeReturnLoss(!sender_->HasUnacked(), &path)) {
    sender_->OnReturnLoss(path, now);
  }
}

void Peer::OnCtrl(TimeNs now, const wire::CtrlFrame& c, DropStats* drops) {
  link_.last_activity = now;
  if (c.type == wire::CtrlType::kSync || c.type == wire::CtrlType::kProbe) {
    Wake(now);
  } else if (!awake()) {
    // NEED_SYNC: a sleeping sender has nothing unacknowledged, and its next
    // session is announced anyway. The rest is the core's.
    return;
  }
  switch (c.type) {
    case wire::CtrlType::kSync:
      receiver_->OnSync(c);
      return;
    case wire::CtrlType::kProbe:
      receiver_->OnProbe(c);
      return;
    case wire::CtrlType::kNeedSync:
      // The peer evicted our idle session. What we sent since was dropped
      // unseen: resend it in a new session. (If the session was never
      // confirmed, our SYNCs are already on their way.)
      if (!sender_->OnNeedSync(now, wire::Psn(c.value))) {
        ++drops->stale_need_sync;
      }
      return;
    case wire::CtrlType::kStale:
      // Its claim (the peer's new incarnation) was challenged by the core
      // (CheckIncarnation); nothing more to do.
    case wire::CtrlType::kChallenge:
    case wire::CtrlType::kChallengeReply:
      // Answered and checked by the core (EndpointCore::OnChallengeFrame).
      return;
  }
}

bool Peer::WantsToSend(TimeNs now) const {
  if (!awake()) return false;
  if (receiver_->AckWanted(now) || receiver_->ack_copy_due() ||
      receiver_->need_sync_reply() || sender_->probe_due()) {
    return true;
  }
  return sender_->HasSendable();
}

size_t Peer::BuildDatagram(TimeNs now, absl::Span<uint8_t> out,
                           wire::Entropy* entropy, bool hold_acks,
                           absl::Span<const uint8_t>* tail,
                           backend::TxHold** hold) {
  if (!awake()) return 0;
  size_t pos = 0;
  const bool sendable = sender_->HasSendable();
  // Held: an ack alone waits for the data the application is about to send
  // (it rides on it below) or for the caller's next turn.
  if (hold_acks && !sendable && !receiver_->need_sync_reply() &&
      !sender_->probe_due() && !receiver_->ack_copy_due()) {
    return 0;
  }
  wire::PathId path = 0;
  if (sendable) path = sender_->DataPath(now);
  // Control first: SYNC must precede the data it announces.
  if (sendable && !sender_->session_confirmed()) {
    pos += sender_->WriteSync(out.subspan(pos));
  }
  if (receiver_->need_sync_reply()) {
    pos += receiver_->WriteNeedSync(out.subspan(pos));
  }
  if (sender_->probe_due()) pos += sender_->WriteProbe(out.subspan(pos));
  // An ack that is due goes now, in front of any data. One that is merely
  // pending rides behind the data if the data left room for a whole ack
  // (small messages, e.g. the reply of a ping-pong): the peer then needs no
  // ack-only datagram.
  const bool copy = receiver_->ack_copy_due();
  const bool ack_due = receiver_->AckWanted(now) || copy;
  size_t ack_bytes = receiver_->WriteDueAck(now, out.subspan(pos), ack_due);
  pos += ack_bytes;
  if (sendable) pos += sender_->WriteDataFrames(now, out.subspan(pos), path);
  if (!ack_due && sendable && receiver_->AckPending() &&
      out.size() - pos >= wire::AckFrameSize(wire::kMaxSackWords)) {
    sender_->CopyDeferred();  // the ack goes after the payload
    ack_bytes = receiver_->WriteAck(now, out.subspan(pos));
    pos += ack_bytes;
  }
  pos -= sender_->FinishPayload(out.data() + pos, tail, hold);
  if (pos == 0) return 0;
  if (!sendable) {
    path = sender_->PickPath(now, copy ? receiver_->ack_copy_avoid() : -1);
  }
  receiver_->OnDatagramBuilt(path, ack_bytes, pos == ack_bytes, copy,
                             sender_->path_count() > 1);
  *entropy = sender_->entropy(path);
  link_.last_activity = now;
  return pos;
}

size_t Peer::BuildFullDatagrams(TimeNs now, TxBatch* batch, size_t max,
                                absl::Span<const uint8_t> preamble,
                                bool uncopied) {
  if (!awake()) return 0;
  // Whatever BuildDatagram would put in front of the data is left to it.
  if (receiver_->HasFrontMatter(now)) return 0;
  return sender_->BuildFullDatagrams(now, batch, max, preamble, uncopied);
}

void Peer::FillStats(PeerStats* s, bool with_paths) const {
  s->addr = link_.addr;
  s->peer_incarnation = link_.peer_inc;
  s->proven = link_.proven;
  if (awake()) {
    receiver_->FillStats(s);
    sender_->FillStats(s, with_paths);
  }
  if (past_ != nullptr) AccumulatePeerCounters(*past_, s);
}

}  // namespace braid::endpoint

// SentPacketManager, part 1: sending, the retransmit queue, timers' entry
// point and accessors. Acks are in sent_packet_manager_ack.cc, loss
// detection in sent_packet_manager_loss.cc.
#include "retransmit/sent_packet_manager.h"

#include <algorithm>
#include <limits>

#include "wire/frames.h"

namespace braid::retransmit {

namespace {

uint32_t RoundUpPow2(uint32_t n) {
  uint32_t c = 16;
  while (c < n && c < (1u << 30)) c <<= 1;
  return c;
}

// Min-heap order on PSNs (wrap-aware; all queued PSNs lie in the window).
struct PsnGreater {
  bool operator()(wire::Psn a, wire::Psn b) const { return a > b; }
};

}  // namespace

SentPacketManager::SentPacketManager(const RetransmitOptions& opts)
    : opts_(opts),
      ring_(RoundUpPow2(opts.initial_window_packets)),
      mask_(static_cast<uint32_t>(ring_.size() - 1)),
      rtt_(opts.initial_rtt),
      response_(opts.initial_rtt),
      rto_floor_(opts.min_rto) {
  heap_.reserve(ring_.size());
  sack_memo_.reserve(wire::kMaxSackWords);  // no allocation per ack
  active_paths_.reserve(256);
  rto_lost_.reserve(256);
  touched_paths_.reserve(256);
  scratch_paths_.reserve(256);
}

void SentPacketManager::Reset(wire::Psn base) {
  for (Packet& p : ring_) p = Packet{};
  sack_memo_.clear();
  base_ = next_ = reach_ = base;
  tx_counter_ = 0;
  rack_sent_ = TimeNs::Zero();
  has_rack_ = false;
  last_progress_ = TimeNs::Zero();
  rto_undo_armed_ = false;
  rto_at_ = TimeNs::Infinite();
  rto_restart_ = TimeNs::Zero();
  acked_pre_rto_original_ = false;
  rto_lost_.clear();
  reo_extra_eighths_ = 0;
  gap_thresh_ = 1;
  gap_changed_ = TimeNs::Zero();
  net_dup_quiet_until_ = TimeNs::Zero();
  bytes_in_flight_ = 0;
  packets_in_flight_ = 0;
  lost_pending_ = 0;
  heap_.clear();
  for (PathState& ps : paths_) {
    ps.log.Clear();
    ps.rtt.Reset(opts_.initial_rtt);
    ps.has_hwm = ps.has_last = ps.has_barrier = ps.has_pre_hwm = false;
    ps.active = false;
    ps.touched = false;
  }
  active_paths_.clear();
  touched_paths_.clear();
  path_timers_.Clear();
  rtt_.Reset(opts_.initial_rtt);
  response_.Reset(opts_.initial_rtt);
  rto_floor_ = opts_.min_rto;
  backoff_ = 0;
  rtos_since_progress_ = 0;
  rto_deadline_ = TimeNs::Infinite();
  rto_memo_sent_ = TimeNs::Infinite();
  tlp_base_ = TimeNs::Infinite();
  tlp_armed_ = false;
  nak_active_ = false;
  refused_ = false;
  echo_active_ = false;
}

SentPacketManager::PathState& SentPacketManager::AddPaths(wire::PathId p) {
  while (paths_.size() <= p) paths_.emplace_back(opts_);
  return paths_[p];
}

void SentPacketManager::Grow() {
  std::vector<Packet> bigger(ring_.size() * 2);
  const uint32_t new_mask = static_cast<uint32_t>(bigger.size() - 1);
  for (wire::Psn p = base_; p != next_; ++p) {
    bigger[p.value() & new_mask] = ring_[p.value() & mask_];
  }
  ring_.swap(bigger);
  mask_ = new_mask;
  heap_.reserve(ring_.size());
}

bool SentPacketManager::BeginPathSends(PathState& ps, wire::PathSeq seq,
                                       uint32_t count) {
  if (ps.has_last && !(seq > ps.last_seq)) ++counters_.path_seq_regressions;
  ps.last_seq = seq + (count - 1);
  ps.has_last = true;
  return ps.log.unresolved() == 0;
}

void SentPacketManager::EndPathSends(PathState& ps, wire::PathId path,
                                     bool was_idle, TimeNs now) {
  if (!ps.active) {
    ps.active = true;
    active_paths_.push_back(path);
  }
  if (was_idle) {
    // The path was idle: the first of these transmissions is its front.
    // The time rule can apply only once something sent after it arrived.
    path_timers_.Park(path, static_cast<uint64_t>(now.ns()));
  }
  if (now != rto_memo_sent_ || path != rto_memo_path_) {
    rto_deadline_ = Min(rto_deadline_, now + PathRto(path));
    rto_memo_sent_ = now;
    rto_memo_path_ = path;
  }
}

void SentPacketManager::RecordTransmission(Packet& pkt, wire::Psn psn,
                                           wire::PathId path, wire::PathSeq seq,
                                           TimeNs now, uint8_t repairs) {
  PathState& ps = Path(path);
  const bool was_idle = BeginPathSends(ps, seq, 1);
  pkt.tx_index = ++tx_counter_;
  pkt.sent = now;
  pkt.seq = seq;
  pkt.path = path;
  if (pkt.tx_count < std::numeric_limits<uint16_t>::max()) ++pkt.tx_count;
  ps.log.Append(seq, psn, now, pkt.tx_index, repairs);
  EndPathSends(ps, path, was_idle, now);
}

void SentPacketManager::OnFirstSentRun(uint64_t first_tag, uint64_t tag_step,
                                       uint32_t bytes, wire::PathId path,
                                       wire::PathSeq seq, uint32_t count,
                                       TimeNs now) {
  if (count == 0) return;
  while (static_cast<uint32_t>(next_ - base_) + count > ring_.size()) Grow();
  // RecordTransmission's work, once per run where it can be: the packets
  // differ only in PSN, tag, path seq and send index.
  PathState& ps = Path(path);
  const bool was_idle = BeginPathSends(ps, seq, count);
  ps.log.AppendRun(seq, next_, count, now, tx_counter_ + 1);
  uint64_t tag = first_tag;
  for (uint32_t i = 0; i < count; ++i) {
    Packet& pkt = ring_[(next_.value() + i) & mask_];
    // Field by field, not `pkt = Packet{.tag = ...}`: that builds the
    // record on the stack with narrow stores and copies it with wide loads,
    // which stall on store forwarding (measured: 3-5 % less bulk goodput).
    pkt = Packet{};
    pkt.tag = tag;
    pkt.tx_index = tx_counter_ + 1 + i;
    pkt.sent = now;
    pkt.seq = seq + i;
    pkt.bytes = bytes;
    pkt.tx_count = 1;
    pkt.path = path;
    pkt.state = State::kInFlight;
    tag += tag_step;
  }
  tx_counter_ += count;
  EndPathSends(ps, path, was_idle, now);
  bytes_in_flight_ += uint64_t{bytes} * count;
  packets_in_flight_ += count;
  counters_.packets_sent += count;
  counters_.bytes_sent += uint64_t{bytes} * count;
  next_ = next_ + count;
  if (opts_.tail_probe) {
    tlp_base_ = now;
    tlp_armed_ = true;
    tlp_path_ = path;
  }
}

void SentPacketManager::OnRetransmitted(wire::Psn psn, wire::PathId path,
                                        wire::PathSeq seq, TimeNs now) {
  Packet* pkt = Get(psn);
  if (pkt == nullptr ||
      (pkt->state != State::kLost && pkt->state != State::kInFlight)) {
    ++counters_.bad_retransmit_calls;
    return;
  }
  ++counters_.retransmits;
  const LossCause repairs =
      pkt->state == State::kLost ? pkt->last_loss : LossCause::kTailProbe;
  if (pkt->state == State::kLost) {
    if (pkt->in_queue) {
      pkt->in_queue = false;
      --lost_pending_;
    }
    ++counters_.retransmits_by_cause[static_cast<int>(pkt->last_loss)];
    // Only a path-gap (or go-back-N NAK) loss proves the earlier copy is
    // gone. After a time, RTO or probe loss the earlier copy may still
    // arrive, so a cum/SACK ack of this packet says nothing about which
    // copy did (no gap inference from it).
    // (Once reordering inside a path has been seen, a gap loss proves no
    // more than the time rule does.)
    if ((pkt->last_loss != LossCause::kPathGap || gap_thresh_ > 1) &&
        pkt->last_loss != LossCause::kNak) {
      pkt->ambiguous = true;
    }
    // The copy declared lost is now superseded: if an ack echoes it later,
    // this re-send was spurious.
    TxRecord* old = paths_[pkt->path].log.Find(pkt->seq);
    if (old != nullptr && old->tx_index == pkt->tx_index) {
      old->superseded = true;
      old->superseded_on = path;
    }
    pkt->state = State::kInFlight;
    bytes_in_flight_ += pkt->bytes;
    ++packets_in_flight_;
  } else {
    // A probe of a packet still in flight: either copy may arrive first.
    ++counters_.retransmits_by_cause[static_cast<int>(LossCause::kTailProbe)];
    pkt->ambiguous = true;
  }
  RecordTransmission(*pkt, psn, path, seq, now, static_cast<uint8_t>(repairs));
  if (lost_pending_ == 0) heap_.clear();
}

void SentPacketManager::PushRetransmit(wire::Psn psn) {
  heap_.push_back(psn);
  std::push_heap(heap_.begin(), heap_.end(), PsnGreater());
}

void SentPacketManager::OnTimer(TimeNs now, SenderOutcome* outcome) {
  SenderOutcome& out = *outcome;
  out.Clear();
  rto_memo_sent_ = TimeNs::Infinite();
  ProcessPathTimers(now, /*after_ack=*/false, out);
  bool rto_fired = false;
  if (packets_in_flight_ > 0 && now >= rto_deadline_) {
    rto_fired = RtoScan(now, out);
  }
  if (!rto_fired) MaybeScheduleProbe(now, out);
  if (lost_pending_ == 0) heap_.clear();
}

bool SentPacketManager::PeekRetransmit(wire::Psn* psn, uint64_t* tag,
                                       uint32_t* bytes,
                                       wire::PathId* last_path) {
  while (!heap_.empty()) {
    const wire::Psn p = heap_.front();
    const Packet* pkt = Get(p);
    if (pkt == nullptr || pkt->state != State::kLost || !pkt->in_queue) {
      std::pop_heap(heap_.begin(), heap_.end(), PsnGreater());
      heap_.pop_back();  // stale: acked or re-sent meanwhile
      continue;
    }
    *psn = p;
    *tag = pkt->tag;
    *bytes = pkt->bytes;
    *last_path = pkt->path;
    return true;
  }
  return false;
}

bool SentPacketManager::PopRetransmit(wire::Psn* psn, uint64_t* tag,
                                      uint32_t* bytes,
                                      wire::PathId* last_path) {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), PsnGreater());
    const wire::Psn p = heap_.back();
    heap_.pop_back();
    Packet* pkt = Get(p);
    if (pkt == nullptr || pkt->state != State::kLost || !pkt->in_queue) {
      continue;  // stale: acked or re-sent meanwhile
    }
    pkt->in_queue = false;
    --lost_pending_;
    if (lost_pending_ == 0) heap_.clear();
    *psn = p;
    *tag = pkt->tag;
    *bytes = pkt->bytes;
    *last_path = pkt->path;
    return true;
  }
  return false;
}

TimeNs SentPacketManager::NextTimerTime() const {
  if (packets_in_flight_ == 0) return TimeNs::Infinite();
  TimeNs t = Min(path_timers_.NextTime(), rto_deadline_);
  if (opts_.tail_probe && tlp_armed_ && lost_pending_ == 0) {
    t = Min(t, tlp_base_ + ProbeTimeout());
  }
  return t;
}

DurationNs SentPacketManager::current_rto() const {
  DurationNs d = rto();
  for (int i = 0; i < backoff_ && d < opts_.max_rto; ++i) d = d * 2;
  return Min(d, opts_.max_rto);
}

DurationNs SentPacketManager::path_srtt(wire::PathId p) const {
  if (p < paths_.size() && paths_[p].rtt.has_sample()) {
    return paths_[p].rtt.srtt();
  }
  return rtt_.srtt();
}

void SentPacketManager::OnPathRerouted(wire::PathId p) {
  PathState& ps = Path(p);
  if (!ps.log.HasUnresolved()) return;
  // Seqs from here on are not ordered with the ones already in flight.
  ps.barrier = ps.has_last ? ps.last_seq + 1 : wire::PathSeq(0);
  ps.has_barrier = true;
  ps.has_pre_hwm = ps.has_hwm;
  ps.pre_hwm = ps.hwm;
}

}  // namespace braid::retransmit

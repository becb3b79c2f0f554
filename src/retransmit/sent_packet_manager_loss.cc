// SentPacketManager, part 2: loss detection (per-path gap, time, RTO, NAK)
// and the tail probe. Part 1 (sent_packet_manager.cc) holds sending, ack
// parsing, the retransmit queue and accessors.
#include <algorithm>

#include "retransmit/sent_packet_manager.h"

namespace braid::retransmit {

namespace {
constexpr int kMaxBackoff = 30;
constexpr int kReorderStepEighths = 4;
constexpr int kMaxReorderExtraEighths = 32;
constexpr int64_t kReorderDecaySrtts = 16;
constexpr int64_t kGapDecaySrtts = 64;
}  // namespace

TxRecord* SentPacketManager::LiveFront(PathState& ps) {
  while (ps.log.HasUnresolved()) {
    TxRecord& f = ps.log.Front();
    const Packet* pkt = Get(f.psn);
    if (pkt != nullptr && pkt->state == State::kInFlight &&
        pkt->tx_index == f.tx_index) {
      return &f;
    }
    ps.log.PopFront();  // acked, declared lost, or superseded
  }
  return nullptr;
}

void SentPacketManager::ProcessPath(wire::PathId path, TimeNs now,
                                    SenderOutcome& out) {
  PathState& ps = paths_[path];
  while (TxRecord* f = LiveFront(ps)) {
    Packet& pkt = ring_[f->psn.value() & mask_];
    // PSNs the receiver could not report in the latest ack are unknown.
    const bool reportable = f->psn < reach_;
    if (IsGapLost(ps, *f)) {
      if (!reportable) {
        path_timers_.ParkUntilNextAck(path);  // look again with its reach
        break;
      }
      DeclareLost(pkt, f->psn, LossCause::kPathGap, out);
      ps.log.PopFront();
      continue;
    }
    if (!has_rack_ || f->sent >= rack_sent_) {
      // Nothing sent strictly later is known to have arrived. Packets built
      // in one burst share a send time and never judge each other: the
      // backend may put them on the wire in another order (grouped by
      // source port), so their order tells nothing.
      path_timers_.Park(path, static_cast<uint64_t>(f->sent.ns()));
      break;
    }
    const TimeNs deadline = f->sent + ReorderWindow(path);
    if (now < deadline) {
      path_timers_.Schedule(path, deadline);
      break;
    }
    if (!reportable) {
      path_timers_.ParkUntilNextAck(path);
      break;
    }
    DeclareLost(pkt, f->psn, LossCause::kTime, out);
    ps.log.PopFront();
  }
  if (ps.has_barrier &&
      (!ps.log.HasUnresolved() || ps.log.Front().seq >= ps.barrier)) {
    ps.has_barrier = false;  // nothing from before the reroute is left
    ps.has_pre_hwm = false;
  }
}

void SentPacketManager::ProcessPathTimers(TimeNs now, bool after_ack,
                                          SenderOutcome& out) {
  wire::PathId p;
  if (after_ack) {
    for (wire::PathId t : touched_paths_) {
      paths_[t].touched = false;
      ProcessPath(t, now, out);
    }
    touched_paths_.clear();
    path_timers_.TakeAckParked(&scratch_paths_);
    for (wire::PathId t : scratch_paths_) ProcessPath(t, now, out);
    const uint64_t released =
        has_rack_ ? static_cast<uint64_t>(rack_sent_.ns()) : 0;
    while (path_timers_.PopReleased(released, &p)) ProcessPath(p, now, out);
  }
  while (path_timers_.PopDue(now, &p)) ProcessPath(p, now, out);
}

void SentPacketManager::RecomputeRtoDeadline() {
  rto_deadline_ = TimeNs::Infinite();
  rto_memo_sent_ = TimeNs::Infinite();
  for (size_t i = 0; i < active_paths_.size();) {
    const wire::PathId path = active_paths_[i];
    PathState& ps = paths_[path];
    if (const TxRecord* f = LiveFront(ps)) {
      rto_deadline_ = Min(rto_deadline_, RtoBase(f->sent) + PathRto(path));
      ++i;
    } else {
      ps.active = false;
      active_paths_[i] = active_paths_.back();
      active_paths_.pop_back();
    }
  }
}

bool SentPacketManager::RtoScan(TimeNs now, SenderOutcome& out) {
  bool expired = false;
  for (wire::PathId path : active_paths_) {
    const TxRecord* f = LiveFront(paths_[path]);
    if (f != nullptr && now >= RtoBase(f->sent) + PathRto(path)) {
      expired = true;
      break;
    }
  }
  if (expired) {
    ++counters_.rtos;
    rto_lost_.clear();
    if (opts_.go_back_n) {
      DeclareAllLost(base_, LossCause::kRto, out);
    } else {
      // Only the oldest live transmission of each expired path: after a
      // stall (of this host, the peer or the network) a whole window of
      // re-sends would mostly duplicate. What else was lost is found by the
      // time rule once a re-send is acknowledged, or by the next RTO.
      for (wire::PathId path : active_paths_) {
        PathState& ps = paths_[path];
        TxRecord* f = LiveFront(ps);
        if (f == nullptr || now < RtoBase(f->sent) + PathRto(path)) continue;
        DeclareLost(ring_[f->psn.value() & mask_], f->psn, LossCause::kRto,
                    out);
        rto_lost_.push_back(f->psn);
        ps.log.PopFront();
      }
    }
    if (backoff_ < kMaxBackoff && current_rto() < opts_.max_rto) ++backoff_;
    ++rtos_since_progress_;
    rto_undo_armed_ = !opts_.go_back_n;
    rto_at_ = now;
    rto_restart_ = now;
    tlp_armed_ = false;  // no probe until new data or an ack with progress
  }
  RecomputeRtoDeadline();
  return expired;
}

bool SentPacketManager::IsGapLost(const PathState& ps,
                                  const TxRecord& rec) const {
  // (hwm - seq: the wrap-aware distance, positive when hwm is later.)
  const int32_t thresh = static_cast<int32_t>(gap_thresh_);
  if (ps.has_barrier && rec.seq < ps.barrier) {
    return ps.has_pre_hwm && ps.pre_hwm - rec.seq >= thresh;
  }
  return ps.has_hwm && ps.hwm - rec.seq >= thresh;
}

void SentPacketManager::DeclareLost(Packet& pkt, wire::Psn psn, LossCause cause,
                                    SenderOutcome& out) {
  pkt.state = State::kLost;
  pkt.loss_disproved = false;
  bytes_in_flight_ -= pkt.bytes;
  --packets_in_flight_;
  pkt.last_loss = cause;
  pkt.in_queue = true;
  ++lost_pending_;
  PushRetransmit(psn);
  ++counters_.packets_lost;
  ++counters_.losses_by_cause[static_cast<int>(cause)];
  LostPacket& l = out.lost.emplace_back();
  l.psn = psn;
  l.tag = pkt.tag;
  l.bytes = pkt.bytes;
  l.path = pkt.path;
  l.seq = pkt.seq;
  l.cause = cause;
  l.overtaken = has_rack_ && rack_sent_ > pkt.sent;
}

void SentPacketManager::DeclareAllLost(wire::Psn from, LossCause cause,
                                       SenderOutcome& out) {
  for (wire::Psn p = wire::Max(from, base_); p < next_; ++p) {
    Packet& pkt = ring_[p.value() & mask_];
    if (pkt.state == State::kInFlight) DeclareLost(pkt, p, cause, out);
  }
}

void SentPacketManager::ProcessNak(wire::Psn cum, SenderOutcome& out) {
  const Packet* pkt = Get(cum);
  if (pkt == nullptr || pkt->state == State::kAcked) {
    ++counters_.naks_ignored;
    return;
  }
  // A NAK for the same hole after we re-sent it was most likely generated
  // before the re-send arrived: going back again would only duplicate.
  if (nak_active_ && nak_cum_ == cum && pkt->tx_index > nak_tx_mark_) {
    ++counters_.naks_ignored;
    return;
  }
  nak_active_ = true;
  nak_cum_ = cum;
  nak_tx_mark_ = tx_counter_;
  ++counters_.naks;
  DeclareAllLost(cum, LossCause::kNak, out);
}

size_t SentPacketManager::ResendRefused(SenderOutcome* outcome) {
  SenderOutcome& out = *outcome;
  out.Clear();
  size_t n = 0;
  for (wire::Psn p = base_; p < next_; ++p) {
    Packet& pkt = ring_[p.value() & mask_];
    if (pkt.state != State::kInFlight) continue;
    if (refused_ && pkt.tx_index > refused_tx_mark_) continue;
    DeclareLost(pkt, p, LossCause::kRefused, out);
    ++n;
  }
  refused_ = true;
  refused_tx_mark_ = tx_counter_;
  return n;
}

void SentPacketManager::MaybeScheduleProbe(TimeNs now, SenderOutcome& out) {
  if (!opts_.tail_probe || !tlp_armed_ || packets_in_flight_ == 0 ||
      lost_pending_ > 0) {
    return;
  }
  if (tlp_base_ + ProbeTimeout() > now) return;
  for (wire::Psn p = next_; p != base_;) {
    p = p - 1;
    Packet& pkt = ring_[p.value() & mask_];
    if (pkt.state == State::kInFlight) {
      tlp_armed_ = false;
      ++counters_.tail_probes;
      DeclareLost(pkt, p, LossCause::kTailProbe, out);
      return;
    }
  }
}

DurationNs SentPacketManager::ReorderWindow(wire::PathId p) const {
  if (p >= paths_.size() || !paths_[p].rtt.has_sample()) return rto();
  const int64_t tol = std::max(0, opts_.reorder_tolerance_eighths);
  // Queueing makes a path's delay vary; a window of a fixed fraction of
  // srtt alone fires spuriously while a path's queue grows. Allow for the
  // path's measured variation too.
  const int64_t eighths = 8 + tol + reo_extra_eighths_;
  return paths_[p].rtt.srtt() * eighths / 8 + paths_[p].rtt.rttvar() * 2 +
         opts_.min_reorder_window;
}

void SentPacketManager::OnSpuriousTimeLoss(TimeNs now) {
  ++counters_.spurious_time_losses;
  // Like RACK's reo_wnd steps: the host or network reorders more than the
  // window allows, so widen it (at most once per srtt, up to +4 srtt).
  if (reo_extra_eighths_ < kMaxReorderExtraEighths &&
      now >= reo_changed_ + rtt_.srtt()) {
    reo_extra_eighths_ = std::min(reo_extra_eighths_ + kReorderStepEighths,
                                  kMaxReorderExtraEighths);
    reo_changed_ = now;
  }
}

void SentPacketManager::OnSpuriousGapLoss(uint32_t displacement, TimeNs now) {
  ++counters_.spurious_gap_losses;
  // As TCP learns its reordering degree from D-SACKs: the path delivered
  // `displacement` later seqs before this one, so wait for one more.
  const uint32_t want =
      std::min<uint64_t>(uint64_t{displacement} + 1, opts_.max_gap_threshold);
  if (want > gap_thresh_) gap_thresh_ = want;
  gap_changed_ = now;
}

void SentPacketManager::DecayGapThreshold(TimeNs now) {
  if (gap_thresh_ > 1 && now >= gap_changed_ + rtt_.srtt() * kGapDecaySrtts) {
    gap_thresh_ = std::max<uint32_t>(1, gap_thresh_ / 2);
    gap_changed_ = now;
  }
}

void SentPacketManager::DecayReorderWindow(TimeNs now) {
  if (reo_extra_eighths_ > 0 &&
      now >= reo_changed_ + rtt_.srtt() * kReorderDecaySrtts) {
    --reo_extra_eighths_;
    reo_changed_ = now;
  }
}

DurationNs SentPacketManager::PathRto(wire::PathId p) const {
  DurationNs d = rto();
  if (p < paths_.size() && paths_[p].rtt.has_sample()) {
    d = Max(d, paths_[p].rtt.Rto(rto_floor_, opts_.max_rto));
  }
  for (int i = 0; i < backoff_ && d < opts_.max_rto; ++i) d = d * 2;
  return Min(d, opts_.max_rto);
}

DurationNs SentPacketManager::Pto() const {
  // Once the answer is half again as late as usual: a lost ping-pong packet
  // is re-sent after ~1.5 round trips instead of 2. Measured (loopback,
  // docs/performance.md, 3 alternating pinned rounds of 20,000 round
  // trips): 1 % loss p99 11.1-12.8 us instead of 11.5-13.5, spurious
  // probes without loss 42-256 instead of 39-62. srtt + 4 rttvar with a
  // 1.25 srtt floor fired up to 1,600 spurious probes.
  // But never below srtt + 4 rttvar once there are samples (QUIC's PTO
  // term): a receiver that blocks and is woken answers with a spread wider
  // than half its mean. Measured (loopback, 4 alternating pinned rounds
  // of 20,000 round trips, braid-perf --test lat): --block, no loss: 218-364
  // -> 20-47 spurious probes, p50 39-47 -> 25-29 us; busy-polling, no loss
  // 118-251 -> 91-254, 1 % loss p99 10.8-12.7 -> 10.2-12.5 us (unchanged).
  DurationNs base = response_.srtt() * 3 / 2;
  if (response_.has_sample()) {
    base = Max(base, response_.srtt() + response_.rttvar() * 4);
  }
  base = base + opts_.max_ack_delay;
  return pto_shift_ == 0 ? base : Min(base * (int64_t{1} << pto_shift_), rto());
}

DurationNs SentPacketManager::ProbeTimeout() const {
  // Never before the newest packet's own path could answer: over paths of
  // very different delay (a slow spine) the peer-wide response time is the
  // fast paths', and a probe for a packet on the slow one was spurious
  // every time (fabric, one spine +300 us, 64 B ping-pong: ~7 % of round
  // trips probed).
  DurationNs pto = Pto();
  if (tlp_path_ < paths_.size() && paths_[tlp_path_].rtt.has_sample()) {
    const RttEstimator& r = paths_[tlp_path_].rtt;
    pto = Max(pto, r.srtt() + r.rttvar() * 4 + opts_.max_ack_delay);
  }
  return pto;
}

void SentPacketManager::DecayPto(TimeNs now) {
  if (pto_shift_ > 0 && now >= pto_changed_ + response_.srtt() * 256) {
    --pto_shift_;
    pto_changed_ = now;
  }
}

}  // namespace braid::retransmit

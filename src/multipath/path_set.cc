#include "multipath/path_set.h"

#include <algorithm>
#include <cmath>

namespace braid::multipath {
namespace {

double Gain(double g, double fallback) {
  return (g > 0 && g <= 1.0) ? g : fallback;
}

PathSetOptions Sanitize(const PathSetOptions& in) {
  PathSetOptions o = in;
  o.num_paths = std::clamp<uint16_t>(o.num_paths, 1, 256);
  o.entropy_space = std::clamp<uint32_t>(o.entropy_space, 1, 65536);
  if (!(o.loss_weight >= 0)) o.loss_weight = 1.0;
  if (!(o.timeout_weight >= 0)) o.timeout_weight = 2.0;
  if (!(o.burst_threshold > 0)) o.burst_threshold = 3.0;
  o.loss_rate_gain = Gain(o.loss_rate_gain, 1.0 / 128);
  o.ecn_rate_gain = Gain(o.ecn_rate_gain, 1.0 / 32);
  if (!(o.loss_rate_threshold > 0)) o.loss_rate_threshold = 0.05;
  if (!(o.ecn_rate_threshold > 0)) o.ecn_rate_threshold = 0.5;
  if (!(o.relative_factor >= 0)) o.relative_factor = 2.0;
  o.penalty_time = std::max(o.penalty_time, DurationNs::Nanos(1));
  o.ecn_penalty_time = std::max(o.ecn_penalty_time, DurationNs::Nanos(1));
  o.max_penalty_time = std::max(o.max_penalty_time, o.penalty_time);
  o.recycle_after = std::max(o.recycle_after, 0);
  if (!(o.inflight_skip_factor >= 1.0)) o.inflight_skip_factor = 2.0;
  o.spray_choices = std::clamp<uint32_t>(o.spray_choices, 1, 8);
  return o;
}

}  // namespace

const PathStats PathSet::kNoStats{};

PathSet::PathSet(const PathSetOptions& opts, uint64_t seed)
    : opts_(Sanitize(opts)),
      rng_(seed),
      paths_(opts_.num_paths),
      loss_decay_(opts_.loss_rate_gain),
      ecn_decay_(opts_.ecn_rate_gain) {
  for (size_t i = 0; i < paths_.size(); ++i) {
    Path& path = paths_[i];
    if (opts_.entropy_space < paths_.size()) {
      path.stats.entropy = static_cast<wire::Entropy>(i % opts_.entropy_space);
      continue;
    }
    auto taken = [&](wire::Entropy e) {  // by paths [0, i)
      for (size_t j = 0; j < i; ++j) {
        if (paths_[j].stats.entropy == e) return true;
      }
      return false;
    };
    wire::Entropy e;
    do {
      e = static_cast<wire::Entropy>(rng_.Uniform(opts_.entropy_space));
    } while (taken(e));
    path.stats.entropy = e;
  }
  healthy_count_ = static_cast<uint32_t>(paths_.size());
}

bool PathSet::Usable(const Path& path) const {
  return path.stats.health == PathHealth::kHealthy ||
         (path.stats.health == PathHealth::kProbing && !path.probe_in_flight);
}

bool PathSet::OverInflightLimit(const Path& path) const {
  const uint32_t usable =
      std::max<uint32_t>(1, healthy_count_ + probing_count_);
  const double mean =
      static_cast<double>(total_in_flight_) / static_cast<double>(usable);
  return path.stats.in_flight >
         mean * opts_.inflight_skip_factor + opts_.inflight_skip_slack;
}

wire::PathId PathSet::Pick(TimeNs now, int avoid, bool healthy_only) {
  if (now >= next_timer_) OnTimer(now);
  if (paths_.size() == 1) return 0;
  int best = healthy_only ? PickUsable(avoid, true) : -1;
  if (best < 0) best = PickUsable(avoid, false);
  if (best >= 0) return static_cast<wire::PathId>(best);
  // Nothing usable.
  return LeastBad(avoid);
}

int PathSet::PickUsable(int avoid, bool healthy_only) {
  const size_t n = paths_.size();
  auto eligible = [&](const Path& path) {
    return healthy_only ? path.stats.health == PathHealth::kHealthy
                        : Usable(path);
  };
  if (opts_.spray_choices > 1) {
    // Of the next spray_choices usable paths in round-robin order, the
    // least loaded; the round goes on from the first of them, so every
    // usable path is compared in turn.
    int best = -1;
    size_t first = n;
    uint32_t seen = 0;
    for (size_t i = 0; i < n && seen < opts_.spray_choices; ++i) {
      const size_t p = (cursor_ + i) % n;
      const Path& path = paths_[p];
      if (static_cast<int>(p) == avoid || !eligible(path)) continue;
      if (first == n) first = p;
      ++seen;
      if (best < 0 || Load(path) < Load(paths_[best])) {
        best = static_cast<int>(p);
      }
    }
    if (best >= 0) {
      cursor_ = first + 1;
      return best;
    }
  }
  // Pass 1: round robin over usable paths within their in-flight share.
  for (size_t i = 0; i < n; ++i) {
    const size_t p = (cursor_ + i) % n;
    const Path& path = paths_[p];
    if (static_cast<int>(p) == avoid || !eligible(path) ||
        OverInflightLimit(path)) {
      continue;
    }
    cursor_ = p + 1;
    return static_cast<int>(p);
  }
  // Pass 2: the usable path (other than `avoid`) with least in flight;
  // pass 3: `avoid` itself if it is the only usable path.
  int best = -1;
  for (size_t p = 0; p < n; ++p) {
    if (static_cast<int>(p) == avoid || !eligible(paths_[p])) continue;
    if (best < 0 || paths_[p].stats.in_flight < paths_[best].stats.in_flight) {
      best = static_cast<int>(p);
    }
  }
  if (best < 0 && avoid >= 0 && static_cast<size_t>(avoid) < n &&
      eligible(paths_[avoid])) {
    best = avoid;
  }
  if (best >= 0) cursor_ = static_cast<size_t>(best) + 1;
  return best;
}

wire::PathId PathSet::LeastBad(int avoid) const {
  // Order: a probing path (its probe is out, the route may be fine) before a
  // penalised one; then the soonest penalty expiry; then least in flight.
  auto rank = [](const Path& p) {
    return p.stats.health == PathHealth::kProbing ? 0 : 1;
  };
  int best = -1;
  for (size_t p = 0; p < paths_.size(); ++p) {
    if (static_cast<int>(p) == avoid) continue;
    const Path& c = paths_[p];
    if (best < 0) {
      best = static_cast<int>(p);
      continue;
    }
    const Path& b = paths_[best];
    if (rank(c) != rank(b)) {
      if (rank(c) < rank(b)) best = static_cast<int>(p);
    } else if (c.penalty_until != b.penalty_until) {
      if (c.penalty_until < b.penalty_until) best = static_cast<int>(p);
    } else if (c.stats.in_flight < b.stats.in_flight) {
      best = static_cast<int>(p);
    }
  }
  return static_cast<wire::PathId>(best < 0 ? 0 : best);
}

wire::PathSeq PathSet::OnSentRun(wire::PathId p, uint32_t bytes, uint32_t count,
                                 TimeNs now) {
  if (p >= paths_.size()) return wire::PathSeq(0);
  Path& path = At(p);
  const wire::PathSeq seq = path.next_seq;
  path.next_seq = seq + count;
  path.stats.packets_sent += count;
  path.stats.bytes_sent += uint64_t{bytes} * count;
  path.stats.in_flight += count;
  total_in_flight_ += count;
  // Of a run on a probing path, the first packet is the probe.
  if (count > 0 && path.stats.health == PathHealth::kProbing &&
      !path.probe_in_flight) {
    path.probe_in_flight = true;
    path.probe_seq = seq;
    ++path.stats.probes_sent;
  }
  return seq;
}

bool PathSet::IsStale(const Path& path, wire::PathSeq seq) {
  return path.has_epoch && seq < path.epoch;
}

wire::PathSeq PathSet::NextFifoSeq(Path& path) {
  const wire::PathSeq seq = path.fifo_next;
  if (path.fifo_next != path.next_seq) ++path.fifo_next;
  return seq;
}

bool PathSet::TakeOutcome(Path& path, wire::PathSeq seq) {
  if (IsStale(path, seq)) return true;
  if (path.stats.in_flight > 0) {
    --path.stats.in_flight;
    --total_in_flight_;
  }
  return false;
}

void PathSet::OnAcked(wire::PathId p, uint32_t bytes, TimeNs now) {
  if (p >= paths_.size()) return;
  OnAcked(p, NextFifoSeq(At(p)), bytes, now);
}

void PathSet::OnAcked(wire::PathId p, wire::PathSeq seq, uint32_t bytes,
                      TimeNs now) {
  if (p >= paths_.size()) return;
  Path& path = At(p);
  ++path.stats.packets_acked;
  path.last_ack_stale = TakeOutcome(path, seq);
  if (path.last_ack_stale) return;
  MarkDelivered(path);
}

void PathSet::OnAckedRun(wire::PathId p, wire::PathSeq first_seq,
                         uint32_t count, uint32_t bytes, TimeNs now) {
  if (p >= paths_.size()) return;
  Path& path = At(p);
  // The common case at once: a healthy path, none of the run stale, each
  // packet holding an in-flight slot. Anything else, one by one.
  if (path.stats.health != PathHealth::kHealthy || IsStale(path, first_seq) ||
      path.stats.in_flight < count) {
    for (uint32_t i = 0; i < count; ++i) OnAcked(p, first_seq + i, bytes, now);
    return;
  }
  path.stats.packets_acked += count;
  path.stats.in_flight -= count;
  total_in_flight_ -= count;
  path.last_ack_stale = false;
  MarkDelivered(path, count);
}

void PathSet::OnLateArrival(wire::PathId p, wire::PathSeq seq, TimeNs now) {
  if (p >= paths_.size()) return;
  Path& path = At(p);
  path.last_ack_stale = IsStale(path, seq);
  if (path.last_ack_stale) return;
  MarkDelivered(path);
}

void PathSet::MarkDelivered(Path& path, uint32_t n) {
  path.badness = 0;
  path.lost_since_delivery = 0;
  // One decay step per delivery. (A clean path's rates are 0 and stay so:
  // skip the arithmetic.)
  if (path.loss_rate != 0) {
    SetLossRate(path, loss_decay_.Apply(path.loss_rate, n));
  }
  if (path.ecn_rate != 0) {
    SetEcnRate(path, ecn_decay_.Apply(path.ecn_rate, n));
  }
  switch (path.stats.health) {
    case PathHealth::kProbing:
      // The probe (or a packet sent after it) got through.
      path.probe_in_flight = false;
      SetHealth(path, PathHealth::kHealthy);
      // Start from the others' average: the old estimate described a route
      // that may have changed.
      SetLossRate(path, OthersMean(sum_loss_rate_, path.loss_rate));
      SetEcnRate(path, OthersMean(sum_ecn_rate_, path.ecn_rate));
      path.clean_acks = 0;
      break;
    case PathHealth::kHealthy:
      path.clean_acks += n;
      if (path.clean_acks >= opts_.forgive_after_acks) {
        path.consecutive_penalties = 0;
      }
      break;
    case PathHealth::kPenalised:
      break;
  }
}

void PathSet::OnRttSample(wire::PathId p, DurationNs rtt) {
  if (p >= paths_.size() || rtt <= DurationNs::Zero()) return;
  Path& path = At(p);
  if (path.last_ack_stale) return;
  PathStats& s = path.stats;
  s.srtt = s.srtt == DurationNs::Zero() ? rtt : (s.srtt * 7 + rtt) / 8;
  if (s.min_rtt == DurationNs::Zero() || rtt < s.min_rtt) s.min_rtt = rtt;
  ++path.rtt_samples;
  if (++samples_since_median_ >= 16 || median_srtt_ == DurationNs::Zero()) {
    RecomputeMedianSrtt();
  }
}

PathEvent PathSet::OnRttSample(wire::PathId p, DurationNs rtt, TimeNs now) {
  OnRttSample(p, rtt);
  if (p >= paths_.size() || opts_.delay_factor <= 0) return PathEvent::kNone;
  Path& path = At(p);
  if (path.last_ack_stale || path.stats.health != PathHealth::kHealthy ||
      !DelayHotSpot(path)) {
    return PathEvent::kNone;
  }
  ++path.stats.delay_penalties;
  return Penalise(p, now, opts_.ecn_penalty_time);
}

void PathSet::RecomputeMedianSrtt() {
  samples_since_median_ = 0;
  DurationNs v[256];
  size_t n = 0;
  for (const Path& q : paths_) {
    if (q.stats.health == PathHealth::kHealthy &&
        q.rtt_samples >= opts_.delay_min_samples && n < 256) {
      v[n++] = q.stats.srtt;
    }
  }
  if (n == 0) {
    median_srtt_ = DurationNs::Zero();
    return;
  }
  std::nth_element(v, v + n / 2, v + n);
  median_srtt_ = v[n / 2];
}

bool PathSet::DelayRuleApplies() const {
  return paths_.size() >= 3 && median_srtt_ != DurationNs::Zero() &&
         healthy_count_ * 2 > paths_.size();
}

bool PathSet::AboveDelayThreshold(DurationNs d) const {
  return static_cast<double>(d.ns()) >
             static_cast<double>(median_srtt_.ns()) * opts_.delay_factor &&
         d > median_srtt_ + opts_.delay_margin;
}

bool PathSet::DelayHotSpot(const Path& path) const {
  return DelayRuleApplies() && path.rtt_samples >= opts_.delay_min_samples &&
         AboveDelayThreshold(path.stats.srtt);
}

bool PathSet::SteeredAway(wire::PathId p) const {
  if (p >= paths_.size() || paths_.size() < 3 ||
      healthy_count_ * 2 <= paths_.size()) {
    return false;
  }
  const Path& path = At(p);
  return path.stats.health != PathHealth::kHealthy || DelayHotSpot(path);
}

bool PathSet::HotSample(wire::PathId p, DurationNs rtt) const {
  return p < paths_.size() && opts_.delay_factor > 0 && DelayRuleApplies() &&
         AboveDelayThreshold(rtt);
}

PathEvent PathSet::OnLoss(wire::PathId p, TimeNs now) {
  if (p >= paths_.size()) return PathEvent::kNone;
  return OnLoss(p, NextFifoSeq(At(p)), now);
}

PathEvent PathSet::OnLoss(wire::PathId p, wire::PathSeq seq, TimeNs now) {
  if (p >= paths_.size()) return PathEvent::kNone;
  Path& path = At(p);
  ++path.stats.packets_lost;
  if (TakeOutcome(path, seq)) return PathEvent::kNone;
  ++path.lost_since_delivery;
  // A burst is losses of consecutive transmissions. One ack can reveal
  // several losses of a path at once, after the deliveries it reports were
  // counted (which clear the burst): losses with a delivered transmission
  // between them (a gap in seq) do not add up, or random loss of 1 % would
  // "burst" in every few hundred 44-datagram runs.
  if (path.badness > 0 && path.last_loss_valid &&
      seq != path.last_loss_seq + 1) {
    path.badness = 0;
  }
  path.last_loss_seq = seq;
  path.last_loss_valid = true;
  path.badness += opts_.loss_weight;
  return AfterLossOutcome(p, now);
}

PathEvent PathSet::OnReturnLoss(wire::PathId p, TimeNs now) {
  if (p >= paths_.size() || paths_.size() < 2) return PathEvent::kNone;
  if (Explore(p) == PathEvent::kRecycled) return PathEvent::kRecycled;
  return Penalise(p, now, opts_.penalty_time);
}

PathEvent PathSet::Explore(wire::PathId p) {
  if (p >= paths_.size() || paths_.size() < 2) return PathEvent::kNone;
  wire::Entropy fresh;
  if (!DrawFreshEntropy(p, &fresh)) return PathEvent::kNone;
  Recycle(p, fresh);
  return PathEvent::kRecycled;
}

PathEvent PathSet::OnLossFoundLate(wire::PathId p, TimeNs now) {
  if (p >= paths_.size()) return PathEvent::kNone;
  Path& path = At(p);
  ++path.stats.packets_lost;
  path.last_loss_valid = false;  // no seq: the next loss adds up
  ++path.lost_since_delivery;
  path.badness += opts_.loss_weight;
  return AfterLossOutcome(p, now);
}

PathEvent PathSet::OnLossFoundLate(wire::PathId p, wire::PathSeq seq,
                                   TimeNs now) {
  if (p >= paths_.size()) return PathEvent::kNone;
  Path& path = At(p);
  if (path.stats.health == PathHealth::kProbing && !path.probe_in_flight &&
      seq == path.probe_seq && !IsStale(path, seq)) {
    path.probe_in_flight = true;  // judged as the probe it was
  }
  return OnLossFoundLate(p, now);
}

void PathSet::OnDiscarded(wire::PathId p) {
  if (p >= paths_.size()) return;
  OnDiscarded(p, NextFifoSeq(At(p)));
}

void PathSet::OnDiscarded(wire::PathId p, wire::PathSeq seq) {
  if (p >= paths_.size()) return;
  Path& path = At(p);
  if (TakeOutcome(path, seq)) return;
  if (path.stats.health == PathHealth::kProbing && path.probe_in_flight &&
      seq == path.probe_seq) {
    path.probe_in_flight = false;  // its fate is unknown: probe again
  }
}

PathEvent PathSet::OnTimeout(wire::PathId p, TimeNs now) {
  if (p >= paths_.size()) return PathEvent::kNone;
  return OnTimeout(p, NextFifoSeq(At(p)), now);
}

PathEvent PathSet::OnTimeout(wire::PathId p, wire::PathSeq seq, TimeNs now) {
  if (p >= paths_.size()) return PathEvent::kNone;
  Path& path = At(p);
  ++path.stats.timeouts;
  if (TakeOutcome(path, seq)) return PathEvent::kNone;
  ++path.lost_since_delivery;
  path.last_loss_valid = false;  // an RTO gives up on the path's front
  path.badness += opts_.timeout_weight;
  return AfterLossOutcome(p, now);
}

PathEvent PathSet::AfterLossOutcome(wire::PathId p, TimeNs now) {
  Path& path = At(p);
  SetLossRate(path, path.loss_rate * (1.0 - opts_.loss_rate_gain) +
                        opts_.loss_rate_gain);
  if (paths_.size() == 1) return PathEvent::kNone;
  switch (path.stats.health) {
    case PathHealth::kProbing:
      if (!path.probe_in_flight) return PathEvent::kNone;
      return Penalise(p, now, opts_.penalty_time);  // the probe failed
    case PathHealth::kHealthy: {
      const bool burst = path.badness >= opts_.burst_threshold;
      const bool rate =
          path.loss_rate > opts_.loss_rate_threshold &&
          path.loss_rate > opts_.relative_factor *
                               OthersMean(sum_loss_rate_, path.loss_rate);
      if (burst || rate) return Penalise(p, now, opts_.penalty_time);
      return PathEvent::kNone;
    }
    case PathHealth::kPenalised:
      return PathEvent::kNone;
  }
  return PathEvent::kNone;
}

PathEvent PathSet::OnEcn(wire::PathId p, TimeNs now) {
  if (p >= paths_.size()) return PathEvent::kNone;
  Path& path = At(p);
  ++path.stats.ecn_marks;
  if (path.last_ack_stale) return PathEvent::kNone;
  SetEcnRate(path, std::min(1.0, path.ecn_rate + opts_.ecn_rate_gain));
  if (paths_.size() == 1 || path.stats.health != PathHealth::kHealthy) {
    return PathEvent::kNone;
  }
  if (path.ecn_rate >= opts_.ecn_rate_threshold &&
      path.ecn_rate >=
          opts_.relative_factor * OthersMean(sum_ecn_rate_, path.ecn_rate)) {
    return Penalise(p, now, opts_.ecn_penalty_time);
  }
  return PathEvent::kNone;
}

PathEvent PathSet::Penalise(wire::PathId p, TimeNs now, DurationNs base) {
  Path& path = At(p);
  ++path.stats.penalties;
  ++total_penalties_;
  ++path.consecutive_penalties;
  path.probe_in_flight = false;
  path.clean_acks = 0;
  path.badness = 0;
  wire::Entropy fresh;
  if (opts_.recycle_after > 0 &&
      path.consecutive_penalties >=
          static_cast<uint32_t>(opts_.recycle_after) &&
      DrawFreshEntropy(p, &fresh)) {
    Recycle(p, fresh);
    return PathEvent::kRecycled;
  }
  // No fresh entropy to move to (every value of the space is in use, e.g.
  // as many paths as source ports): the route cannot change, so the path
  // stays penalised, with the doubled penalty time, until it is probed.
  DurationNs d = base;
  for (uint32_t i = 1;
       i < path.consecutive_penalties && d < opts_.max_penalty_time; ++i) {
    d = d * 2;
  }
  d = Min(d, opts_.max_penalty_time);
  SetHealth(path, PathHealth::kPenalised);
  path.penalty_until = now + d;
  next_timer_ = Min(next_timer_, path.penalty_until);
  return PathEvent::kPenalised;
}

void PathSet::Recycle(wire::PathId p, wire::Entropy fresh) {
  Path& path = At(p);
  const bool was_penalised = path.stats.health == PathHealth::kPenalised;
  path.stats.entropy = fresh;
  ++path.stats.recycles;
  ++total_recycles_;
  path.consecutive_penalties = 0;
  path.stats.srtt = DurationNs::Zero();
  path.stats.min_rtt = DurationNs::Zero();
  path.rtt_samples = 0;
  SetLossRate(path, OthersMean(sum_loss_rate_, path.loss_rate));
  SetEcnRate(path, OthersMean(sum_ecn_rate_, path.ecn_rate));
  ToProbing(path);
  if (was_penalised) RecomputeTimer();
}

void PathSet::ToProbing(Path& path) {
  SetHealth(path, PathHealth::kProbing);
  // What is in flight now is stale: its outcomes neither fail the probe nor
  // hold its slot (nor, if an outcome never comes, keep the path busy).
  path.epoch = path.next_seq;
  path.has_epoch = true;
  total_in_flight_ -= path.stats.in_flight;
  path.stats.in_flight = 0;
  path.probe_in_flight = false;
  path.badness = 0;
  path.lost_since_delivery = 0;
  path.penalty_until = TimeNs::Zero();
}

void PathSet::SetHealth(Path& path, PathHealth h) {
  auto count = [this](PathHealth x, int delta) {
    if (x == PathHealth::kHealthy) healthy_count_ += delta;
    if (x == PathHealth::kProbing) probing_count_ += delta;
  };
  count(path.stats.health, -1);
  count(h, +1);
  path.stats.health = h;
}

double PathSet::OthersMean(double sum, double mine) const {
  if (paths_.size() <= 1) return mine;
  return std::max(0.0, sum - mine) / static_cast<double>(paths_.size() - 1);
}

void PathSet::SetLossRate(Path& path, double v) {
  sum_loss_rate_ += v - path.loss_rate;
  path.loss_rate = v;
}

void PathSet::SetEcnRate(Path& path, double v) {
  sum_ecn_rate_ += v - path.ecn_rate;
  path.ecn_rate = v;
}

bool PathSet::EntropyInUse(wire::Entropy e, size_t ignore) const {
  for (size_t j = 0; j < paths_.size(); ++j) {
    if (j != ignore && paths_[j].stats.entropy == e) return true;
  }
  return false;
}

bool PathSet::DrawFreshEntropy(wire::PathId p, wire::Entropy* out) {
  const wire::Entropy old = At(p).stats.entropy;
  const uint32_t space = opts_.entropy_space;
  auto fresh = [&](wire::Entropy e) { return e != old && !EntropyInUse(e, p); };
  // Rejection sampling is fast while the space is mostly free...
  for (int tries = 0; tries < 64; ++tries) {
    const auto e = static_cast<wire::Entropy>(rng_.Uniform(space));
    if (fresh(e)) {
      *out = e;
      return true;
    }
  }
  // ...otherwise scan from a random start.
  const uint32_t start = static_cast<uint32_t>(rng_.Uniform(space));
  for (uint32_t i = 0; i < space; ++i) {
    const auto e = static_cast<wire::Entropy>((start + i) % space);
    if (fresh(e)) {
      *out = e;
      return true;
    }
  }
  return false;  // no other value exists
}

void PathSet::OnTimer(TimeNs now) {
  if (now < next_timer_) return;
  for (Path& path : paths_) {
    if (path.stats.health == PathHealth::kPenalised &&
        path.penalty_until <= now) {
      ToProbing(path);
    }
  }
  RecomputeTimer();
}

void PathSet::RecomputeTimer() {
  next_timer_ = TimeNs::Infinite();
  for (const Path& path : paths_) {
    if (path.stats.health == PathHealth::kPenalised) {
      next_timer_ = Min(next_timer_, path.penalty_until);
    }
  }
}

void PathSet::Reset() {
  for (Path& path : paths_) {
    path.next_seq = wire::PathSeq(0);
    path.stats.in_flight = 0;
    path.fifo_next = wire::PathSeq(0);
    path.has_epoch = false;
    path.probe_in_flight = false;
    path.last_ack_stale = false;
    path.badness = 0;
  }
  total_in_flight_ = 0;
  cursor_ = 0;
}

}  // namespace braid::multipath

#include "cc/swift.h"

#include <algorithm>
#include <cmath>

namespace braid::cc {

Swift::Swift(const CcOptions& opts) : opts_(SanitizeCcOptions(opts)) {
  const double lo = opts_.fs_min_cwnd_packets;
  const double hi = opts_.fs_max_cwnd_packets;
  if (opts_.fs_range > DurationNs::Zero() && lo > 0 && hi > lo) {
    fs_alpha_ = static_cast<double>(opts_.fs_range.ns()) /
                (1.0 / std::sqrt(lo) - 1.0 / std::sqrt(hi));
    fs_beta_ = fs_alpha_ / std::sqrt(hi);
  }
  Reset();
}

void Swift::Reset() {
  cwnd_ = static_cast<double>(opts_.initial_cwnd_bytes);
  starting_ = opts_.start_cwnd_bytes > 0 &&
              opts_.start_cwnd_bytes < opts_.initial_cwnd_bytes;
  if (starting_) cwnd_ = static_cast<double>(opts_.start_cwnd_bytes);
  Clamp();
  srtt_ = DurationNs::Zero();
  min_rtt_ = DurationNs::Zero();
  decreased_once_ = false;
  last_decrease_ = TimeNs::Zero();
  alpha_ = opts_.dctcp_initial_alpha;
  ecn_window_started_ = false;
  ecn_window_acked_ = ecn_window_ce_ = 0;
  ClearLossWindow(TimeNs::Zero());
  consecutive_rtos_ = 0;
  cwnd_before_rto_ = -1;
  queueing_sample_ = false;
  ce_seen_ = false;
  last_ce_ = TimeNs::Zero();
}

uint64_t Swift::cwnd_bytes() const { return static_cast<uint64_t>(cwnd_); }

DurationNs Swift::RttRef() const {
  return srtt_ > DurationNs::Zero() ? srtt_ : opts_.default_rtt;
}

DurationNs Swift::target_delay() const {
  double fs = 0;
  if (fs_alpha_ > 0) {
    const double pkts = std::max(cwnd_ / opts_.mss, 1e-3);
    fs = std::clamp(fs_alpha_ / std::sqrt(pkts) - fs_beta_, 0.0,
                    static_cast<double>(opts_.fs_range.ns()));
  }
  return min_rtt_ + opts_.base_target + DurationNs(static_cast<int64_t>(fs));
}

bool Swift::QueueingSignal(TimeNs now) const {
  if (opts_.loss_queueing_fraction <= 0) return true;  // every loss counts
  if (ce_seen_ && now - last_ce_ <= RttRef() * 2) return true;
  return queueing_sample_;
}

bool Swift::CanDecrease(TimeNs now) const {
  return !decreased_once_ || now - last_decrease_ >= RttRef();
}

void Swift::Decrease(TimeNs now, double cut) {
  starting_ = false;
  cut = std::clamp(cut, 0.0, opts_.max_mdf);
  cwnd_ *= 1.0 - cut;
  Clamp();
  decreased_once_ = true;
  last_decrease_ = now;
}

void Swift::Clamp() {
  cwnd_ = std::clamp(cwnd_, static_cast<double>(opts_.min_cwnd_bytes),
                     static_cast<double>(opts_.max_cwnd_bytes));
}

void Swift::ClearLossWindow(TimeNs now) {
  loss_window_start_ = now;
  cur_acked_ = cur_lost_ = prev_acked_ = prev_lost_ = 0;
}

void Swift::AdvanceLossWindow(TimeNs now) {
  if (now - loss_window_start_ < RttRef()) return;
  if (cur_acked_ + cur_lost_ < opts_.loss_min_sample_packets) return;
  prev_acked_ = cur_acked_;
  prev_lost_ = cur_lost_;
  cur_acked_ = cur_lost_ = 0;
  loss_window_start_ = now;
}

void Swift::OnAck(const AckEvent& e) {
  ++stats_.ack_events;
  if (e.packets_acked > 0 || e.bytes_acked > 0) consecutive_rtos_ = 0;

  // RTT bookkeeping: trust the caller's estimates, fall back to our own.
  if (e.srtt > DurationNs::Zero()) {
    srtt_ = e.srtt;
  } else if (e.rtt > DurationNs::Zero()) {
    srtt_ = srtt_ == DurationNs::Zero() ? e.rtt : (srtt_ * 7 + e.rtt) / 8;
  }
  if (e.min_rtt > DurationNs::Zero()) {
    min_rtt_ = e.min_rtt;
  } else if (e.rtt > DurationNs::Zero() &&
             (min_rtt_ == DurationNs::Zero() || e.rtt < min_rtt_)) {
    min_rtt_ = e.rtt;
  }

  AdvanceLossWindow(e.now);
  cur_acked_ += e.packets_acked;

  // ECN: DCTCP alpha per srtt window; any CE in this batch asks for a cut.
  double ecn_cut = 0;
  const uint32_t ce =
      opts_.ecn_enabled ? std::min(e.ce_packets, e.packets_acked) : 0;
  if (opts_.ecn_enabled) {
    if (!ecn_window_started_) {
      ecn_window_started_ = true;
      ecn_window_end_ = e.now + RttRef();
    }
    ecn_window_acked_ += e.packets_acked;
    ecn_window_ce_ += ce;
    if (e.now >= ecn_window_end_) {
      if (ecn_window_acked_ > 0) {
        const double f = static_cast<double>(ecn_window_ce_) /
                         static_cast<double>(ecn_window_acked_);
        alpha_ = (1.0 - opts_.dctcp_g) * alpha_ + opts_.dctcp_g * f;
      }
      ecn_window_acked_ = ecn_window_ce_ = 0;
      ecn_window_end_ = e.now + RttRef();
    }
    if (ce > 0) ecn_cut = alpha_ / 2;
  }

  if (ce > 0) {
    ce_seen_ = true;
    last_ce_ = e.now;
    starting_ = false;
  }

  // Delay.
  double delay_cut = 0;
  if (e.rtt > DurationNs::Zero()) {
    const DurationNs target = target_delay();
    const double allowance = static_cast<double>((target - min_rtt_).ns());
    queueing_sample_ = static_cast<double>((e.rtt - min_rtt_).ns()) >=
                       opts_.loss_queueing_fraction * allowance;
    if (e.rtt >= target) {
      starting_ = false;
      delay_cut = opts_.beta * static_cast<double>((e.rtt - target).ns()) /
                  static_cast<double>(e.rtt.ns());
    } else if (ce == 0 && e.bytes_acked > 0 && !starting_) {
      cwnd_ += opts_.additive_increase_packets * opts_.mss *
               static_cast<double>(e.bytes_acked) / cwnd_;
      Clamp();
      ++stats_.additive_increases;
    }
  }
  // Start: every byte acked without a queueing signal grows the window by
  // itself, with or without an RTT sample in this ack (acks of re-sends and
  // samples kept from congestion control carry none).
  if (starting_ && ce == 0 && e.bytes_acked > 0) {
    const double cap = static_cast<double>(opts_.initial_cwnd_bytes);
    cwnd_ = std::min(cwnd_ + static_cast<double>(e.bytes_acked), cap);
    starting_ = cwnd_ < cap;
    ++stats_.additive_increases;
  }

  const double cut = std::max(delay_cut, ecn_cut);
  if (cut > 0 && CanDecrease(e.now)) {
    if (delay_cut >= ecn_cut) {
      ++stats_.delay_decreases;
    } else {
      ++stats_.ecn_decreases;
    }
    Decrease(e.now, cut);
  }
}

void Swift::OnRto(const LossEvent& e) {
  ++stats_.rto_events;
  if (!QueueingSignal(e.now)) {
    // The path went silent with the RTT at its base: a loss burst or a dead
    // path, not a queue. Retransmission repairs it; the window stays.
    ++stats_.rtos_without_queueing;
    return;
  }
  if (consecutive_rtos_ == 0) cwnd_before_rto_ = cwnd_;
  ++consecutive_rtos_;
  if (consecutive_rtos_ >= opts_.rto_collapse_after) {
    cwnd_ = static_cast<double>(opts_.min_cwnd_bytes);
    ++stats_.rto_collapses;
  } else {
    cwnd_ = std::min(cwnd_ * (1.0 - opts_.max_mdf),
                     static_cast<double>(opts_.initial_cwnd_bytes));
  }
  Clamp();
  decreased_once_ = true;
  last_decrease_ = e.now;
  ClearLossWindow(e.now);
}

void Swift::OnLoss(const LossEvent& e) {
  ++stats_.loss_events;
  if (e.rto) {
    OnRto(e);
    return;
  }
  AdvanceLossWindow(e.now);
  if (!QueueingSignal(e.now)) {
    // Not counted towards the loss fraction either: a later queue must not
    // be blamed for losses that happened without one.
    ++stats_.losses_without_queueing;
    ++stats_.losses_tolerated;
    return;
  }
  cur_lost_ += e.packets_lost;
  const uint64_t total = cur_acked_ + cur_lost_ + prev_acked_ + prev_lost_;
  const uint64_t lost = cur_lost_ + prev_lost_;
  if (total >= opts_.loss_min_sample_packets && total > 0) {
    const double frac = static_cast<double>(lost) / static_cast<double>(total);
    if (frac > opts_.loss_threshold && CanDecrease(e.now)) {
      ++stats_.loss_decreases;
      Decrease(e.now, opts_.loss_beta * frac);
      ClearLossWindow(e.now);
      return;
    }
  }
  ++stats_.losses_tolerated;
}

void Swift::OnSpuriousRto() {
  if (cwnd_before_rto_ < 0) return;
  cwnd_ = std::max(cwnd_, cwnd_before_rto_);
  cwnd_before_rto_ = -1;
  consecutive_rtos_ = 0;
  Clamp();
  ++stats_.rto_undos;
}

}  // namespace braid::cc

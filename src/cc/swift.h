// Swift-style delay-based congestion control (Kumar et al., SIGCOMM 2020),
// extended with DCTCP-style ECN and a loss-rate rule suited to sprayed
// multipath traffic.
//
// Start: from min(start_cwnd, initial_cwnd), cwnd += bytes_acked (doubling
//   per RTT) up to initial_cwnd until an RTT sample >= target or a CE mark
//   (acks without a sample grow it too).
// Per ACK batch with an RTT sample:
//   target = min_rtt + base_target + flow_scaling(cwnd)
//   rtt <  target and no CE: cwnd += ai * mss * bytes_acked / cwnd
//                            (ai packets per RTT)
//   rtt >= target:           cut_delay = min(max_mdf, beta*(rtt-target)/rtt)
// ECN: alpha = EWMA (gain g) of the CE fraction per srtt window; a batch with
//   CE asks for cut_ecn = alpha / 2.
// The larger requested cut is applied, at most once per srtt.
// Loss is congestion only with a queueing signal (the newest RTT sample
//   well above min_rtt, or CE within two srtt; see loss_queueing_fraction).
//   Without one, a loss or RTO leaves the window alone. With one: the loss
//   is tolerated unless the fraction lost over the last ~two srtt windows
//   exceeds loss_threshold (then cut = min(max_mdf, loss_beta * fraction),
//   once per srtt); RTO: cwnd = min(cwnd*(1-max_mdf), initial), and the
//   rto_collapse_after-th consecutive such RTO sets cwnd = min_cwnd.
#ifndef BRAID_CC_SWIFT_H_
#define BRAID_CC_SWIFT_H_

#include "cc/congestion_control.h"

namespace braid::cc {

class Swift final : public CongestionControl {
 public:
  // `opts` is sanitised (SanitizeCcOptions) before use.
  explicit Swift(const CcOptions& opts);

  void OnAck(const AckEvent& e) override;
  void OnLoss(const LossEvent& e) override;
  // Restores the window from before the latest RTO (once per RTO).
  void OnSpuriousRto() override;
  uint64_t cwnd_bytes() const override;
  absl::string_view name() const override { return "swift"; }
  void Reset() override;
  const CcStats& stats() const override { return stats_; }

  // The current DCTCP estimate of the CE-marked fraction, in [0, 1].
  double alpha() const { return alpha_; }
  // The delay target for the current window and min RTT.
  DurationNs target_delay() const;
  // True if the queue shows in the newest evidence at `now`: the newest RTT
  // sample reached min_rtt + loss_queueing_fraction * (target - min_rtt),
  // or CE marks arrived within the last two srtt. Losses count as
  // congestion only then.
  bool QueueingSignal(TimeNs now) const;
  // The options in use (after sanitising).
  const CcOptions& options() const { return opts_; }

 private:
  // RTT used for "once per RTT" gates and windows.
  DurationNs RttRef() const;
  bool CanDecrease(TimeNs now) const;
  void Decrease(TimeNs now, double cut);
  void Clamp();
  // Rolls the loss observation window when it spans an RTT and enough samples.
  void AdvanceLossWindow(TimeNs now);
  void ClearLossWindow(TimeNs now);
  void OnRto(const LossEvent& e);

  CcOptions opts_;
  double fs_alpha_ = 0;  // flow-scaling coefficients (ns * sqrt(packets))
  double fs_beta_ = 0;   // (ns)

  double cwnd_ = 0;        // bytes, fractional to keep small increases
  bool starting_ = false;  // doubling towards initial_cwnd (see options)
  DurationNs srtt_;
  DurationNs min_rtt_;
  bool decreased_once_ = false;
  // Window before the latest RTO cut, for OnSpuriousRto; < 0 if none.
  double cwnd_before_rto_ = -1;
  TimeNs last_decrease_;

  double alpha_ = 1.0;
  bool ecn_window_started_ = false;
  TimeNs ecn_window_end_;
  uint64_t ecn_window_acked_ = 0;
  uint64_t ecn_window_ce_ = 0;

  TimeNs loss_window_start_;
  uint64_t cur_acked_ = 0, cur_lost_ = 0;
  uint64_t prev_acked_ = 0, prev_lost_ = 0;

  // The newest RTT sample showed queueing (see QueueingSignal).
  bool queueing_sample_ = false;
  bool ce_seen_ = false;
  TimeNs last_ce_;

  uint32_t consecutive_rtos_ = 0;
  CcStats stats_;
};

}  // namespace braid::cc

#endif  // BRAID_CC_SWIFT_H_

// "none": a window fixed at max_cwnd_bytes, for A/B comparisons and for
// measuring what the path can carry without congestion control.
#ifndef BRAID_CC_NO_CONGESTION_CONTROL_H_
#define BRAID_CC_NO_CONGESTION_CONTROL_H_

#include "cc/congestion_control.h"

namespace braid::cc {

class NoCongestionControl final : public CongestionControl {
 public:
  // `opts` is sanitised; only max_cwnd_bytes matters.
  explicit NoCongestionControl(const CcOptions& opts);

  // Counts the event; the window never changes.
  void OnAck(const AckEvent& e) override;
  // Counts the event; the window never changes.
  void OnLoss(const LossEvent& e) override;
  uint64_t cwnd_bytes() const override { return cwnd_; }
  absl::string_view name() const override { return "none"; }
  void Reset() override {}
  const CcStats& stats() const override { return stats_; }

 private:
  uint64_t cwnd_;
  CcStats stats_;
};

}  // namespace braid::cc

#endif  // BRAID_CC_NO_CONGESTION_CONTROL_H_

#include "cc/no_congestion_control.h"

namespace braid::cc {

NoCongestionControl::NoCongestionControl(const CcOptions& opts)
    : cwnd_(SanitizeCcOptions(opts).max_cwnd_bytes) {}

void NoCongestionControl::OnAck(const AckEvent& e) { ++stats_.ack_events; }

void NoCongestionControl::OnLoss(const LossEvent& e) {
  ++stats_.loss_events;
  ++stats_.losses_tolerated;
  if (e.rto) ++stats_.rto_events;
}

}  // namespace braid::cc

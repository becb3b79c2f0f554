#include "cc/congestion_control.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cc/no_congestion_control.h"
#include "cc/swift.h"

namespace braid::cc {
namespace {

double ClampGain(double g, double fallback) {
  return (g > 0 && g <= 1.0) ? g : fallback;
}

}  // namespace

CcOptions SanitizeCcOptions(const CcOptions& in) {
  CcOptions o = in;
  o.mss = std::max<uint32_t>(o.mss, 64);
  if (o.min_cwnd_bytes == 0) o.min_cwnd_bytes = o.mss;
  o.max_cwnd_bytes = std::max(o.max_cwnd_bytes, o.min_cwnd_bytes);
  o.initial_cwnd_bytes =
      std::clamp(o.initial_cwnd_bytes, o.min_cwnd_bytes, o.max_cwnd_bytes);
  if (o.start_cwnd_bytes > 0) {
    o.start_cwnd_bytes =
        std::clamp(o.start_cwnd_bytes, o.min_cwnd_bytes, o.initial_cwnd_bytes);
  }
  o.base_target = std::max(o.base_target, DurationNs::Zero());
  o.fs_range = std::max(o.fs_range, DurationNs::Zero());
  if (!(o.additive_increase_packets >= 0)) o.additive_increase_packets = 1.0;
  if (!(o.beta >= 0)) o.beta = 0.8;
  if (!(o.max_mdf > 0 && o.max_mdf < 1.0)) o.max_mdf = 0.5;
  o.dctcp_g = ClampGain(o.dctcp_g, 1.0 / 16);
  if (!(o.dctcp_initial_alpha >= 0 && o.dctcp_initial_alpha <= 1.0)) {
    o.dctcp_initial_alpha = 1.0;
  }
  if (!(o.loss_threshold >= 0 && o.loss_threshold < 1.0)) {
    o.loss_threshold = 0.05;
  }
  if (!(o.loss_beta >= 0)) o.loss_beta = 1.0;
  if (!(o.loss_queueing_fraction >= 0 && o.loss_queueing_fraction <= 1.0)) {
    o.loss_queueing_fraction = 0.5;
  }
  o.rto_collapse_after = std::max<uint32_t>(o.rto_collapse_after, 1);
  if (o.default_rtt <= DurationNs::Zero())
    o.default_rtt = DurationNs::Micros(20);
  return o;
}

std::unique_ptr<CongestionControl> MakeCongestionControl(
    const CcOptions& opts) {
  switch (opts.algorithm) {
    case CcOptions::Algorithm::kNone:
      return std::make_unique<NoCongestionControl>(opts);
    case CcOptions::Algorithm::kSwift:
      break;
  }
  return std::make_unique<Swift>(opts);
}

absl::StatusOr<CcOptions::Algorithm> ParseAlgorithm(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "swift") return CcOptions::Algorithm::kSwift;
  if (lower == "none") return CcOptions::Algorithm::kNone;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown congestion control \"", name, "\" (want swift|none)"));
}

absl::string_view AlgorithmName(CcOptions::Algorithm a) {
  switch (a) {
    case CcOptions::Algorithm::kSwift:
      return "swift";
    case CcOptions::Algorithm::kNone:
      return "none";
  }
  return "unknown";
}

}  // namespace braid::cc

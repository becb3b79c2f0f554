#include "endpoint/options_check.h"

#include "absl/strings/str_cat.h"
#include "braid/completion.h"

namespace braid {

absl::StatusOr<Mode> ParseMode(absl::string_view s) {
  if (s == "spray") return Mode::kSpray;
  if (s == "gbn") return Mode::kGoBackN;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown mode '", s, "' (expected spray or gbn)"));
}

absl::StatusOr<CcAlgorithm> ParseCc(absl::string_view s) {
  if (s == "swift") return CcAlgorithm::kSwift;
  if (s == "none") return CcAlgorithm::kNone;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown congestion control '", s, "' (expected swift or none)"));
}

const char* ModeName(Mode m) { return m == Mode::kSpray ? "spray" : "gbn"; }
const char* CcName(CcAlgorithm c) {
  return c == CcAlgorithm::kSwift ? "swift" : "none";
}

const char* FailureCauseName(FailureCause c) {
  switch (c) {
    case FailureCause::kNone:
      return "none";
    case FailureCause::kPeerUnreachable:
      return "peer_unreachable";
    case FailureCause::kPeerRestarted:
      return "peer_restarted";
    case FailureCause::kClosed:
      return "closed";
    case FailureCause::kPeerEvicted:
      return "peer_evicted";
  }
  return "unknown";
}

namespace endpoint {
namespace {

absl::Status Bad(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

}  // namespace

absl::Status CheckProtocolOptions(const ProtocolOptions& p) {
  if (p.paths < 1 || p.paths > 256) return Bad("paths", "must be in 1..256");
  if (p.spray_run > 1024) return Bad("spray_run", "must be at most 1024");
  if (p.spray_choices < 1 || p.spray_choices > 8) {
    return Bad("spray_choices", "must be in 1..8");
  }
  if (p.max_message_bytes > (1u << 30)) {
    return Bad("max_message_bytes", "must be at most 1 GiB");
  }
  if (p.max_peers < 1 || p.max_peers > (1u << 24)) {
    return Bad("max_peers", "must be in 1..16777216");
  }
  if (p.max_reassembly_bytes < (1u << 20) ||
      p.max_reassembly_bytes < 2 * uint64_t{p.max_message_bytes}) {
    return Bad("max_reassembly_bytes",
               absl::StrCat("must be at least 1 MiB and at least twice "
                            "max_message_bytes (",
                            2 * uint64_t{p.max_message_bytes},
                            "): a peer that has proven nothing may fill half "
                            "of it, and must still fit the largest message"));
  }
  if (p.max_pending_sends < 1)
    return Bad("max_pending_sends", "must be at least 1");
  if (p.receive_budget_bytes < 65536) {
    return Bad("receive_budget_bytes", "must be at least 64 KiB");
  }
  if (p.peer_timeout <= DurationNs::Zero()) {
    return Bad("peer_timeout", "must be positive");
  }
  if (p.receive_queue_bytes < 65536) {
    return Bad("receive_queue_bytes", "must be at least 64 KiB");
  }
  if (p.min_rto <= DurationNs::Zero() || p.max_rto < p.min_rto ||
      p.max_rto.IsInfinite()) {
    return Bad("min_rto/max_rto", "need 0 < min_rto <= max_rto, finite");
  }
  if (p.min_rto > p.peer_timeout) {
    return Bad("min_rto", "must not exceed peer_timeout (no RTO would fire)");
  }
  if (p.initial_rtt <= DurationNs::Zero() || p.initial_rtt.IsInfinite()) {
    return Bad("initial_rtt", "must be positive and finite");
  }
  if (p.ack_delay < DurationNs::Zero() || p.ack_delay.IsInfinite()) {
    return Bad("ack_delay", "must be >= 0 and finite");
  }
  if (p.cc_target_delay < DurationNs::Zero() ||
      p.cc_target_delay.IsInfinite()) {
    return Bad("cc_target_delay", "must be >= 0 (0: the default) and finite");
  }
  if (p.ack_every_packets < 1)
    return Bad("ack_every_packets", "must be at least 1");
  if (p.initial_cwnd_bytes < 1 || p.max_cwnd_bytes < p.initial_cwnd_bytes) {
    return Bad("initial_cwnd_bytes/max_cwnd_bytes",
               "need 0 < initial_cwnd_bytes <= max_cwnd_bytes");
  }
  if (p.start_cwnd_bytes > p.initial_cwnd_bytes) {
    return Bad("start_cwnd_bytes",
               "need start_cwnd_bytes <= initial_cwnd_bytes");
  }
  return absl::OkStatus();
}

absl::Status CheckEndpointOptions(const EndpointOptions& o) {
  if (absl::Status s = CheckProtocolOptions(o.protocol); !s.ok()) return s;
  if (o.mtu < 576 || o.mtu > 65535) return Bad("mtu", "must be in 576..65535");
  if (o.udp.rx_timestamps != RxTimestamps::kAuto &&
      o.udp.rx_timestamps != RxTimestamps::kAlways &&
      o.udp.rx_timestamps != RxTimestamps::kNever) {
    return Bad("udp.rx_timestamps", "must be kAuto, kAlways or kNever");
  }
  if (o.udp.rx_timestamps_poll_gap < DurationNs::Zero()) {
    return Bad("udp.rx_timestamps_poll_gap", "must not be negative");
  }
  if (o.udp.rx_timestamps_linger < DurationNs::Zero()) {
    return Bad("udp.rx_timestamps_linger", "must not be negative");
  }
  if (o.udp.entropy_sockets > 256) {
    return Bad("udp.entropy_sockets", "must be 0 (twice the paths) .. 256");
  }
  if (o.udp.sndbuf_bytes <= 0) return Bad("udp.sndbuf_bytes", "must be > 0");
  if (o.udp.rcvbuf_bytes <= 0) return Bad("udp.rcvbuf_bytes", "must be > 0");
  return absl::OkStatus();
}

absl::Status CheckImpairments(const TestImpairments& i) {
  auto prob = [](double p) { return p >= 0 && p <= 1; };
  if (!prob(i.drop) || !prob(i.duplicate) || !prob(i.reorder) ||
      !prob(i.corrupt)) {
    return Bad("impairments", "probabilities must be in [0, 1]");
  }
  return absl::OkStatus();
}

}  // namespace endpoint
}  // namespace braid

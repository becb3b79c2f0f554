// Text and JSON renderings of the stats structs. Each struct is flattened to
// (name, value) pairs once, then printed either way, so the two never drift.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "braid/stats.h"

namespace braid {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

void AddReliability(const ReliabilityStats& r, Fields* f) {
  f->push_back({"retransmits", absl::StrCat(r.retransmits)});
  f->push_back({"retransmits_path_gap", absl::StrCat(r.retransmits_path_gap)});
  f->push_back({"retransmits_time", absl::StrCat(r.retransmits_time)});
  f->push_back({"retransmits_rto", absl::StrCat(r.retransmits_rto)});
  f->push_back(
      {"retransmits_tail_probe", absl::StrCat(r.retransmits_tail_probe)});
  f->push_back({"retransmits_nak", absl::StrCat(r.retransmits_nak)});
  f->push_back({"retransmits_refused", absl::StrCat(r.retransmits_refused)});
  f->push_back({"rtos", absl::StrCat(r.rtos)});
  f->push_back({"spurious_retransmits", absl::StrCat(r.spurious_retransmits)});
  f->push_back({"spurious_losses", absl::StrCat(r.spurious_losses)});
  f->push_back({"spurious_gap_losses", absl::StrCat(r.spurious_gap_losses)});
  f->push_back({"spurious_rtos", absl::StrCat(r.spurious_rtos)});
  f->push_back({"rto_reroutes", absl::StrCat(r.rto_reroutes)});
}

void AddFrames(const FrameStats& d, Fields* f) {
  const std::pair<const char*, uint64_t> v[] = {
      {"frame_rx_short", d.rx_short},
      {"frame_rx_ether_type", d.rx_ether_type},
      {"frame_rx_wrong_mac", d.rx_wrong_mac},
      {"frame_rx_bad_ip_header", d.rx_bad_ip_header},
      {"frame_rx_ip_options", d.rx_ip_options},
      {"frame_rx_fragment", d.rx_fragment},
      {"frame_rx_wrong_ip", d.rx_wrong_ip},
      {"frame_rx_not_udp", d.rx_not_udp},
      {"frame_rx_bad_length", d.rx_bad_length},
      {"frame_rx_bad_ip_checksum", d.rx_bad_ip_checksum},
      {"frame_rx_bad_udp_checksum", d.rx_bad_udp_checksum},
      {"frame_rx_wrong_port", d.rx_wrong_port},
      {"frame_rx_multi_segment", d.rx_multi_segment},
      {"neighbor_requests_sent", d.neighbor_requests_sent},
      {"neighbor_replies_sent", d.neighbor_replies_sent},
      {"neighbor_learnt", d.neighbor_learnt},
      {"neighbor_ignored", d.neighbor_ignored},
      {"tx_no_neighbor", d.tx_no_neighbor},
      {"tx_no_mbuf", d.tx_no_mbuf},
      {"tx_copied_bytes", d.tx_copied_bytes},
      {"tx_zero_copy_frames", d.tx_zero_copy_frames},
  };
  for (const auto& [k, n] : v) f->push_back({k, absl::StrCat(n)});
}

void AddUd(const UdStats& d, Fields* f) {
  const std::pair<const char*, uint64_t> v[] = {
      {"ud_tx_zero_copy", d.tx_zero_copy},
      {"ud_tx_copied", d.tx_copied},
      {"ud_tx_copied_bytes", d.tx_copied_bytes},
      {"ud_ah_created", d.ah_created},
      {"ud_ah_failures", d.ah_failures},
      {"ud_ah_flushes", d.ah_flushes},
      {"ud_sq_full", d.sq_full},
      {"ud_post_errors", d.post_errors},
      {"ud_tx_wc_errors", d.tx_wc_errors},
      {"ud_rx_wc_errors", d.rx_wc_errors},
      {"ud_rx_bad_grh", d.rx_bad_grh},
      {"ud_qp_recoveries", d.qp_recoveries},
      {"ud_device_failed", d.device_failed},
  };
  for (const auto& [k, n] : v) f->push_back({k, absl::StrCat(n)});
}

void AddDrops(const DropStats& d, Fields* f) {
  const std::pair<const char*, uint64_t> v[] = {
      {"drop_truncated", d.truncated},
      {"drop_bad_version", d.bad_version},
      {"drop_bad_type", d.bad_type},
      {"drop_bad_flags", d.bad_flags},
      {"drop_reserved_nonzero", d.reserved_nonzero},
      {"drop_zero_incarnation", d.zero_incarnation},
      {"drop_fragment_bounds", d.fragment_bounds},
      {"drop_empty_fragment", d.empty_fragment},
      {"drop_sack_too_long", d.sack_too_long},
      {"drop_bad_ctrl_type", d.bad_ctrl_type},
      {"drop_bad_preamble", d.bad_preamble},
      {"drop_bad_placement", d.bad_placement},
      {"drop_inconsistent_fragment", d.inconsistent_fragment},
      {"drop_invalid_ack", d.invalid_ack},
      {"drop_stale_incarnation", d.stale_incarnation},
      {"drop_stale_need_sync", d.stale_need_sync},
      {"drop_contested_incarnation", d.contested_incarnation},
      {"drop_beyond_window", d.beyond_window},
      {"drop_duplicates", d.duplicates},
      {"drop_no_peer_slot", d.no_peer_slot},
      {"drop_no_memory", d.no_memory},
      {"drop_reassembly_full", d.reassembly_full},
      {"drop_evicted_peer", d.evicted_peer},
      {"drop_unsynced", d.unsynced},
      {"drop_out_of_order_discarded", d.out_of_order_discarded},
      {"drop_unproven_claim", d.unproven_claim},
      {"drop_bad_challenge_reply", d.bad_challenge_reply},
      {"drop_ctrl_reply_overflow", d.ctrl_reply_overflow},
      {"drop_first_contact_challenged", d.first_contact_challenged},
      {"drop_auth_failed", d.auth_failed},
      {"drop_auth_no_key", d.auth_no_key},
      {"drop_auth_mismatch", d.auth_mismatch},
      {"malformed_total", d.malformed()},
  };
  for (const auto& [k, n] : v) f->push_back({k, absl::StrCat(n)});
}

Fields Flatten(const EndpointStats& s) {
  Fields f;
  f.push_back({"incarnation", absl::StrFormat("\"%016x\"", s.incarnation)});
  const std::pair<const char*, uint64_t> v[] = {
      {"datagrams_sent", s.datagrams_sent},
      {"datagrams_received", s.datagrams_received},
      {"packets_sent", s.packets_sent},
      {"packets_received", s.packets_received},
      {"bytes_sent", s.bytes_sent},
      {"bytes_received", s.bytes_received},
      {"messages_sent", s.messages_sent},
      {"messages_failed", s.messages_failed},
      {"messages_received", s.messages_received},
      {"messages_placed", s.messages_placed},
      {"messages_refused", s.messages_refused},
      {"ordered_refused", s.ordered_refused},
      {"bytes_placed", s.bytes_placed},
      {"bytes_reassembled", s.bytes_reassembled},
      {"acks_sent", s.acks_sent},
      {"acks_received", s.acks_received},
      {"ecn_marks_received", s.ecn_marks_received},
      {"peers", s.peers},
      {"peers_created", s.peers_created},
      {"peers_evicted", s.peers_evicted},
      {"peers_evicted_idle", s.peers_evicted_idle},
      {"peers_evicted_unproven", s.peers_evicted_unproven},
      {"peers_evicted_memory", s.peers_evicted_memory},
      {"peers_asleep", s.peers_asleep},
      {"peers_slept", s.peers_slept},
      {"reassembly_bytes", s.reassembly_bytes},
      {"reassembly_peak_bytes", s.reassembly_peak_bytes},
      {"reassembly_max_bytes", s.reassembly_max_bytes},
      {"peer_restarts", s.peer_restarts},
      {"provisional_replaced", s.provisional_replaced},
      {"challenges_sent", s.challenges_sent},
      {"challenges_answered", s.challenges_answered},
      {"seal_failures", s.seal_failures},
      {"key_derivations_refused", s.key_derivations_refused},
      {"tx_peer_visits", s.tx_peer_visits},
      {"path_penalties", s.penalties},
      {"path_recycles", s.recycles},
      {"tx_syscalls", s.tx_syscalls},
      {"rx_syscalls", s.rx_syscalls},
      {"tx_backpressure", s.tx_backpressure},
      {"timer_syscalls", s.timer_syscalls},
      {"wait_syscalls", s.wait_syscalls},
      {"gso_sends", s.gso_sends},
      {"gso_segments", s.gso_segments},
      {"rx_timestamps", s.rx_timestamps},
      {"rx_timestamp_switches", s.rx_timestamp_switches},
      {"connected_sockets", s.connected_sockets},
      {"tx_icmp_errors", s.tx_icmp_errors},
      {"rx_backend_drops", s.rx_backend_drops},
      {"rx_over_mtu", s.rx_over_mtu},
      {"impair_dropped", s.impair_dropped},
      {"impair_corrupted", s.impair_corrupted},
      {"impair_duplicated", s.impair_duplicated},
      {"impair_reordered", s.impair_reordered},
  };
  for (const auto& [k, n] : v) f.push_back({k, absl::StrCat(n)});
  AddReliability(s.reliability, &f);
  AddDrops(s.drops, &f);
  AddFrames(s.frames, &f);
  AddUd(s.ud, &f);
  return f;
}

Fields Flatten(const PeerStats& s) {
  Fields f;
  f.push_back({"peer", absl::StrCat("\"", s.addr.ToString(), "\"")});
  f.push_back(
      {"peer_incarnation", absl::StrFormat("\"%016x\"", s.peer_incarnation)});
  f.push_back({"proven", s.proven ? "true" : "false"});
  const std::pair<const char*, uint64_t> v[] = {
      {"packets_sent", s.packets_sent},
      {"bytes_sent", s.bytes_sent},
      {"packets_received", s.packets_received},
      {"bytes_received", s.bytes_received},
      {"messages_sent", s.messages_sent},
      {"messages_failed", s.messages_failed},
      {"messages_received", s.messages_received},
      {"messages_placed", s.messages_placed},
      {"messages_refused", s.messages_refused},
      {"ordered_refused", s.ordered_refused},
      {"bytes_placed", s.bytes_placed},
      {"bytes_reassembled", s.bytes_reassembled},
      {"acks_sent", s.acks_sent},
      {"acks_received", s.acks_received},
      {"ecn_marks_received", s.ecn_marks_received},
      {"ecn_echoes", s.ecn_echoes},
      {"cwnd_bytes", s.cwnd_bytes},
      {"bytes_in_flight", s.bytes_in_flight},
      {"gap_threshold", s.gap_threshold},
      {"credit_blocked", s.credit_blocked},
      {"healthy_paths", s.healthy_paths},
      {"path_penalties", s.penalties},
      {"path_recycles", s.recycles},
      {"steered_signals", s.steered_signals},
      {"slow_return_samples", s.slow_return_samples},
      {"return_path_losses", s.return_path_losses},
  };
  for (const auto& [k, n] : v) f.push_back({k, absl::StrCat(n)});
  f.push_back({"srtt_us", absl::StrFormat("%.2f", s.srtt.us())});
  f.push_back({"min_rtt_us", absl::StrFormat("%.2f", s.min_rtt.us())});
  f.push_back({"rto_us", absl::StrFormat("%.2f", s.rto.us())});
  AddReliability(s.reliability, &f);
  return f;
}

std::string Table(const Fields& f) {
  std::string out;
  for (const auto& [k, v] : f)
    absl::StrAppendFormat(&out, "  %-30s %s\n", k, v);
  return out;
}

std::string Json(const Fields& f, const std::string& extra = "") {
  std::string out = "{";
  for (size_t i = 0; i < f.size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", "\"", f[i].first, "\":", f[i].second);
  }
  absl::StrAppend(&out, extra, "}");
  return out;
}

std::string PathsJson(const std::vector<PathStats>& paths) {
  if (paths.empty()) return "";
  std::string out = ",\"paths\":[";
  for (size_t i = 0; i < paths.size(); ++i) {
    const PathStats& p = paths[i];
    absl::StrAppendFormat(
        &out,
        "%s{\"entropy\":%u,\"health\":\"%s\",\"packets_sent\":%u,"
        "\"bytes_sent\":%u,\"packets_acked\":%u,\"packets_lost\":%u,"
        "\"ecn_marks\":%u,\"timeouts\":%u,\"penalties\":%u,\"recycles\":%u,"
        "\"srtt_us\":%.2f,\"min_rtt_us\":%.2f}",
        i ? "," : "", p.entropy, p.health, p.packets_sent, p.bytes_sent,
        p.packets_acked, p.packets_lost, p.ecn_marks, p.timeouts, p.penalties,
        p.recycles, p.srtt.us(), p.min_rtt.us());
  }
  return out + "]";
}

}  // namespace

std::string FormatStatsTable(const EndpointStats& s) {
  return Table(Flatten(s));
}
std::string FormatStatsJson(const EndpointStats& s) { return Json(Flatten(s)); }

std::string FormatPeerStatsTable(const PeerStats& s) {
  std::string out = Table(Flatten(s));
  if (!s.paths.empty()) {
    absl::StrAppendFormat(&out, "  %-5s %-7s %-10s %10s %10s %8s %6s %7s %9s\n",
                          "path", "entropy", "health", "sent", "acked", "lost",
                          "ecn", "recycl", "srtt_us");
    for (size_t i = 0; i < s.paths.size(); ++i) {
      const PathStats& p = s.paths[i];
      absl::StrAppendFormat(
          &out, "  %-5d %-7u %-10s %10u %10u %8u %6u %7u %9.1f\n", i, p.entropy,
          p.health, p.packets_sent, p.packets_acked, p.packets_lost,
          p.ecn_marks, p.recycles, p.srtt.us());
    }
  }
  return out;
}

std::string FormatPeerStatsJson(const PeerStats& s) {
  return Json(Flatten(s), PathsJson(s.paths));
}

}  // namespace braid

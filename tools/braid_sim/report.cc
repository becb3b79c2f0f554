#include "tools/braid_sim/report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/common/json_writer.h"

namespace braid::simtool {

std::string FormatSpeed(const ScenarioResult& r) {
  const double pkts = static_cast<double>(r.sim_packets);
  return absl::StrFormat(
      "wall %.3f s, cpu %.3f s, %u events: %.0f sim packets/s of wall "
      "time, %.0f per cpu second",
      r.wall_seconds, r.cpu_seconds, r.sim_events,
      r.wall_seconds > 0 ? pkts / r.wall_seconds : 0.0,
      r.cpu_seconds > 0 ? pkts / r.cpu_seconds : 0.0);
}

// Packets per top switch: each count for up to 8 switches, else the range.
std::string TopPackets(const std::vector<uint64_t>& v) {
  if (v.size() <= 8) return absl::StrJoin(v, "/");
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return absl::StrCat(*lo, "..", *hi, " over ", v.size());
}

std::string FormatTable(const SimFlags& flags, const Runs& runs) {
  std::string o = absl::StrCat("braid-sim ", flags.command_line, "\n");
  absl::StrAppendFormat(
      &o, "%-6s %8s %8s %7s %4s %5s %5s %9s %9s %9s %9s %8s %7s %5s %s\n",
      "mode", "sent", "deliv", "failed", "dup", "badb", "lost", "gbps",
      "mct_p50", "mct_p99", "p999(us)", "retx", "spur", "rtos",
      flags.config.topology_kind == TopologyKind::kFatTree ? "core packets"
                                                           : "spine packets");
  for (const auto& [name, r] : runs) {
    absl::StrAppendFormat(
        &o,
        "%-6s %8u %8u %7u %4u %5u %5u %9.2f %9.1f %9.1f %9.1f %8u %7u %5u %s\n",
        name, r.messages_sent, r.messages_delivered, r.messages_failed,
        r.duplicates_delivered, r.byte_mismatches, r.lost_without_error,
        r.goodput_gbps, r.mct_p50.us(), r.mct_p99.us(), r.mct_p999.us(),
        r.retransmits, r.spurious_retransmits, r.rtos,
        TopPackets(r.spine_packets));
  }
  for (const auto& [name, r] : runs) {
    absl::StrAppendFormat(
        &o,
        "%s: sim_time %.3f ms, %u sim packets, link drops %u (queue full %u, "
        "max queue %u KiB), path penalties %u, "
        "recycles %u, retx gap/time %u/%u%s%s%s%s\n",
        name, r.sim_time.ms(), r.sim_packets, r.link_drops, r.queue_drops,
        r.max_queue_bytes / 1024, r.path_penalties, r.path_recycles,
        r.retransmits_path_gap, r.retransmits_time,
        r.failure_causes.empty() ? "" : ", failures: ",
        absl::StrJoin(r.failure_causes, ","), r.timed_out ? ", TIMED OUT" : "",
        r.setup_error.empty() ? "" : ", COULD NOT START: " + r.setup_error);
    if (flags.wall) absl::StrAppendFormat(&o, "%s: %s\n", name, FormatSpeed(r));
    if (!r.Clean()) absl::StrAppendFormat(&o, "%s: INVARIANT VIOLATED\n", name);
  }
  if (runs.size() == 2 && runs[1].second.goodput_gbps > 0 &&
      runs[0].second.mct_p99.ns() > 0) {
    const ScenarioResult& a = runs[0].second;
    const ScenarioResult& b = runs[1].second;
    absl::StrAppendFormat(
        &o, "%s/%s: goodput x%.2f, p99 completion time x%.3f\n", runs[0].first,
        runs[1].first, a.goodput_gbps / b.goodput_gbps,
        static_cast<double>(a.mct_p99.ns()) /
            static_cast<double>(std::max<int64_t>(1, b.mct_p99.ns())));
  }
  return o;
}

std::string FormatJson(const SimFlags& flags, const Runs& runs) {
  using tools::Fixed;
  tools::Json out;
  out["command"] = flags.command_line;
  out["seed"] = flags.config.seed;
  tools::Json& list = out["runs"] = tools::Json::array();
  for (const auto& [name, r] : runs) {
    tools::Json j;
    j["mode"] = name;
    j["messages_sent"] = r.messages_sent;
    j["messages_delivered"] = r.messages_delivered;
    j["messages_failed"] = r.messages_failed;
    j["messages_gone_with_restart"] = r.messages_gone_with_restart;
    j["duplicates_delivered"] = r.duplicates_delivered;
    j["byte_mismatches"] = r.byte_mismatches;
    j["order_violations"] = r.order_violations;
    j["lost_without_error"] = r.lost_without_error;
    j["pending_at_limit"] = r.pending_at_limit;
    j["goodput_gbps"] = Fixed(r.goodput_gbps, 4);
    j["mct_p50_us"] = Fixed(r.mct_p50.us(), 3);
    j["mct_p99_us"] = Fixed(r.mct_p99.us(), 3);
    j["mct_p999_us"] = Fixed(r.mct_p999.us(), 3);
    j["retransmits"] = r.retransmits;
    j["retransmits_path_gap"] = r.retransmits_path_gap;
    j["retransmits_time"] = r.retransmits_time;
    j["spurious_retransmits"] = r.spurious_retransmits;
    j["rtos"] = r.rtos;
    j["path_penalties"] = r.path_penalties;
    j["path_recycles"] = r.path_recycles;
    j["link_drops"] = r.link_drops;
    j["queue_drops"] = r.queue_drops;
    j["max_queue_kib"] = r.max_queue_bytes / 1024;
    j["spine_packets"] = r.spine_packets;
    j["sim_time_ms"] = Fixed(r.sim_time.ms(), 6);
    j["sim_packets"] = r.sim_packets;
    j["timed_out"] = r.timed_out;
    j["clean"] = r.Clean();
    if (!r.setup_error.empty()) j["setup_error"] = r.setup_error;
    if (flags.timeline) {
      const DurationNs bin = flags.config.goodput_bin;
      j["timeline_bin_us"] = bin.us();
      tools::Json& t = j["timeline_gbps"] = tools::Json::array();
      for (uint64_t bytes : r.timeline) {
        t.push_back(Fixed(
            static_cast<double>(bytes) * 8 / static_cast<double>(bin.ns()), 3));
      }
    }
    if (flags.wall) {
      j["wall_s"] = Fixed(r.wall_seconds, 4);
      j["cpu_s"] = Fixed(r.cpu_seconds, 4);
    }
    list.push_back(std::move(j));
  }
  return tools::JsonLine(out);
}

std::string FormatDemoTable(const Runs& runs, int impaired_spine) {
  std::string o = absl::StrFormat(
      "impaired spine %d (the one go-back-N uses most when clean): 1%% loss "
      "both ways / blackholed from 200 us / 1/4 rate with ECN at 64 KiB\n",
      impaired_spine);
  absl::StrAppendFormat(&o, "%-17s %9s %10s %10s %8s %7s %6s %-24s %s\n", "run",
                        "gbps", "mct_p50us", "mct_p99us", "retx", "failed",
                        "clean", "spine packets", "spray/gbn ratio");
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& [name, r] = runs[i];
    std::string ratio;
    if (i % 2 == 0 && i + 1 < runs.size() &&
        runs[i + 1].second.goodput_gbps > 0) {
      const ScenarioResult& g = runs[i + 1].second;
      ratio = absl::StrFormat("goodput x%.2f", r.goodput_gbps / g.goodput_gbps);
      if (r.messages_failed == 0 && g.messages_failed == 0) {
        absl::StrAppendFormat(
            &ratio, ", p99 x%.2f",
            static_cast<double>(r.mct_p99.ns()) /
                static_cast<double>(std::max<int64_t>(1, g.mct_p99.ns())));
      } else {
        absl::StrAppendFormat(&ratio, ", failed %u vs %u", r.messages_failed,
                              g.messages_failed);
      }
    }
    absl::StrAppendFormat(
        &o, "%-17s %9.2f %10.1f %10.1f %8u %7u %6s %-24s %s\n", name,
        r.goodput_gbps, r.mct_p50.us(), r.mct_p99.us(), r.retransmits,
        r.messages_failed, r.Clean() ? "yes" : "NO",
        absl::StrJoin(r.spine_packets, "/"), ratio);
  }
  return o;
}

}  // namespace braid::simtool

#include "tools/braid_sim/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace braid::simtool {
namespace {

std::string Escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o.push_back('\\');
    o.push_back(ch);
  }
  return o;
}

}  // namespace

std::string FormatTable(const SimFlags& flags, const Runs& runs) {
  std::string o = absl::StrCat("braid-sim ", flags.command_line, "\n");
  absl::StrAppendFormat(
      &o, "%-6s %8s %8s %7s %4s %5s %5s %9s %9s %9s %9s %8s %7s %5s %s\n",
      "mode", "sent", "deliv", "failed", "dup", "badb", "lost", "gbps",
      "mct_p50", "mct_p99", "p999(us)", "retx", "spur", "rtos",
      "spine packets");
  for (const auto& [name, r] : runs) {
    absl::StrAppendFormat(
        &o,
        "%-6s %8u %8u %7u %4u %5u %5u %9.2f %9.1f %9.1f %9.1f %8u %7u %5u %s\n",
        name, r.messages_sent, r.messages_delivered, r.messages_failed,
        r.duplicates_delivered, r.byte_mismatches, r.lost_without_error,
        r.goodput_gbps, r.mct_p50.us(), r.mct_p99.us(), r.mct_p999.us(),
        r.retransmits, r.spurious_retransmits, r.rtos,
        absl::StrJoin(r.spine_packets, "/"));
  }
  for (const auto& [name, r] : runs) {
    absl::StrAppendFormat(
        &o,
        "%s: sim_time %.3f ms, %u sim packets, link drops %u, path penalties "
        "%u, "
        "recycles %u, retx gap/time %u/%u%s%s%s\n",
        name, r.sim_time.ms(), r.sim_packets, r.link_drops, r.path_penalties,
        r.path_recycles, r.retransmits_path_gap, r.retransmits_time,
        r.failure_causes.empty() ? "" : ", failures: ",
        absl::StrJoin(r.failure_causes, ","), r.timed_out ? ", TIMED OUT" : "");
    if (flags.wall)
      absl::StrAppendFormat(&o, "%s: wall %.3f s\n", name, r.wall_seconds);
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
  std::string o =
      absl::StrCat("{\"command\":\"", Escape(flags.command_line),
                   "\",\"seed\":", flags.config.seed, ",\"runs\":[");
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& [name, r] = runs[i];
    absl::StrAppendFormat(
        &o,
        "%s{\"mode\":\"%s\",\"messages_sent\":%u,\"messages_delivered\":%u,"
        "\"messages_failed\":%u,\"messages_gone_with_restart\":%u,"
        "\"duplicates_delivered\":%u,\"byte_mismatches\":%u,"
        "\"order_violations\":%u,\"lost_without_error\":%u,\"goodput_gbps\":%."
        "4f,"
        "\"mct_p50_us\":%.3f,\"mct_p99_us\":%.3f,\"mct_p999_us\":%.3f,"
        "\"retransmits\":%u,\"retransmits_path_gap\":%u,\"retransmits_time\":%"
        "u,"
        "\"spurious_retransmits\":%u,\"rtos\":%u,\"path_penalties\":%u,"
        "\"path_recycles\":%u,\"link_drops\":%u,\"spine_packets\":[%s],"
        "\"sim_time_ms\":%.6f,\"sim_packets\":%u,\"timed_out\":%s,\"clean\":%s",
        i ? "," : "", name, r.messages_sent, r.messages_delivered,
        r.messages_failed, r.messages_gone_with_restart, r.duplicates_delivered,
        r.byte_mismatches, r.order_violations, r.lost_without_error,
        r.goodput_gbps, r.mct_p50.us(), r.mct_p99.us(), r.mct_p999.us(),
        r.retransmits, r.retransmits_path_gap, r.retransmits_time,
        r.spurious_retransmits, r.rtos, r.path_penalties, r.path_recycles,
        r.link_drops, absl::StrJoin(r.spine_packets, ","), r.sim_time.ms(),
        r.sim_packets, r.timed_out ? "true" : "false",
        r.Clean() ? "true" : "false");
    if (flags.wall)
      absl::StrAppendFormat(&o, ",\"wall_s\":%.4f", r.wall_seconds);
    o += "}";
  }
  return o + "]}\n";
}

std::string FormatDemoTable(const Runs& runs) {
  std::string o;
  absl::StrAppendFormat(&o, "%-17s %9s %10s %10s %8s %7s %6s %-24s %s\n", "run",
                        "gbps", "mct_p50us", "mct_p99us", "retx", "failed",
                        "clean", "spine packets", "ratio vs gbn");
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& [name, r] = runs[i];
    std::string ratio;
    if (i % 2 == 0 && i + 1 < runs.size() &&
        runs[i + 1].second.goodput_gbps > 0) {
      const ScenarioResult& g = runs[i + 1].second;
      ratio = absl::StrFormat(
          "goodput x%.2f, p99 x%.2f", r.goodput_gbps / g.goodput_gbps,
          static_cast<double>(r.mct_p99.ns()) /
              static_cast<double>(std::max<int64_t>(1, g.mct_p99.ns())));
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

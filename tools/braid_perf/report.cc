#include "tools/braid_perf/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace braid::perf {

bool RunResult::ok() const {
  return failure.empty() && !time_limit && send_failed == 0 &&
         client_bad == 0 && client_duplicates == 0 && have_server &&
         server.bad == 0 && server.duplicates == 0 && server.missing == 0;
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out;
}

namespace {

double PerDatagram(uint64_t calls, uint64_t datagrams) {
  return datagrams ? static_cast<double>(calls) / static_cast<double>(datagrams)
                   : 0;
}

std::string SideJson(const SideCounters& c, uint64_t messages) {
  return absl::StrFormat(
      "{\"datagrams_sent\":%d,\"datagrams_received\":%d,\"tx_syscalls\":%d,"
      "\"rx_syscalls\":%d,\"tx_syscalls_per_datagram\":%.4f,"
      "\"rx_syscalls_per_datagram\":%.4f,\"retransmits\":%d,"
      "\"allocations\":%d,\"allocations_per_message\":%.3f}",
      c.datagrams_sent, c.datagrams_received, c.tx_syscalls, c.rx_syscalls,
      PerDatagram(c.tx_syscalls, c.datagrams_sent),
      PerDatagram(c.rx_syscalls, c.datagrams_received), c.retransmits,
      c.allocations,
      messages
          ? static_cast<double>(c.allocations) / static_cast<double>(messages)
          : 0.0);
}

}  // namespace

std::string RowJson(const RunResult& r) {
  SideCounters server;
  server.datagrams_sent = r.server.datagrams_sent;
  server.datagrams_received = r.server.datagrams_received;
  server.tx_syscalls = r.server.tx_syscalls;
  server.rx_syscalls = r.server.rx_syscalls;
  server.retransmits = r.server.retransmits;
  server.allocations = r.server.allocations;
  return absl::StrFormat(
      "{\"test\":\"%s\",\"size\":%d,\"window\":%d,\"iters\":%d,"
      "\"seconds\":%.6f,\"gbps\":%.4f,\"msg_per_s\":%.1f,"
      "\"server_gbps\":%.4f,\"lat_min_us\":%.3f,\"lat_mean_us\":%.3f,"
      "\"lat_p50_us\":%.3f,\"lat_p99_us\":%.3f,\"lat_p999_us\":%.3f,"
      "\"lat_max_us\":%.3f,\"retransmits\":%d,\"ok\":%s,"
      "\"errors\":{\"send_failed\":%d,\"client_bad\":%d,"
      "\"client_duplicates\":%d,\"server_bad\":%d,\"server_duplicates\":%d,"
      "\"server_missing\":%d,\"server_foreign\":%d,\"first_bad\":\"%s\","
      "\"time_limit\":%s,\"failure\":\"%s\"},"
      "\"server_received\":%d,\"client\":%s,\"server\":%s}",
      TestName(r.test), r.size, r.window, r.iters, r.seconds, r.gbps,
      r.msg_per_s, r.server_gbps, r.min_us, r.mean_us, r.p50_us, r.p99_us,
      r.p999_us, r.max_us, r.retransmits, r.ok() ? "true" : "false",
      r.send_failed, r.client_bad, r.client_duplicates, r.server.bad,
      r.server.duplicates, r.server.missing, r.server.foreign,
      VerdictName(static_cast<Verdict>(r.server.first_bad)),
      r.time_limit ? "true" : "false", JsonEscape(r.failure), r.server.received,
      SideJson(r.client, r.iters), SideJson(server, r.server.received));
}

std::string FormatTable(const std::vector<RunResult>& rows) {
  std::string out = absl::StrFormat("%-4s %9s %10s %9s %12s %9s %9s %9s %8s\n",
                                    "test", "size", "iters", "Gbit/s", "msg/s",
                                    "p50 us", "p99 us", "p999 us", "retrans");
  for (const RunResult& r : rows) {
    absl::StrAppendFormat(
        &out, "%-4s %9d %10d %9.3f %12.0f %9.2f %9.2f %9.2f %8d\n",
        TestName(r.test), r.size, r.iters, r.gbps, r.msg_per_s, r.p50_us,
        r.p99_us, r.p999_us, r.retransmits);
  }
  for (const RunResult& r : rows) {
    if (r.ok()) continue;
    absl::StrAppendFormat(
        &out,
        "FAILED size %d: %s (send failures %d, bad %d/%d, duplicates %d/%d, "
        "missing %d%s)\n",
        r.size,
        !r.failure.empty() ? r.failure
        : r.time_limit     ? "time limit exceeded before the run finished"
                           : "verification",
        r.send_failed, r.client_bad, r.server.bad, r.client_duplicates,
        r.server.duplicates, r.server.missing,
        r.time_limit && !r.failure.empty() ? ", time limit exceeded" : "");
  }
  return out;
}

std::string FormatJson(const PerfFlags& f, const std::vector<RunResult>& rows,
                       const std::string& stats_json) {
  const EndpointOptions& e = f.endpoint;
  bool ok = !rows.empty();
  std::string results;
  for (const RunResult& r : rows) {
    ok = ok && r.ok();
    if (!results.empty()) results += ",";
    results += RowJson(r);
  }
  std::string out = absl::StrFormat(
      "{\"tool\":\"braid-perf\",\"command\":\"%s\",\"test\":\"%s\","
      "\"config\":{\"mode\":\"%s\",\"cc\":\"%s\",\"paths\":%d,\"mtu\":%d,"
      "\"gso\":%s,\"gro\":%s,\"poll\":\"%s\",\"verify\":%s,\"loss\":%g,"
      "\"dup\":%g,\"reorder\":%g,\"corrupt\":%g,\"seed\":%d},"
      "\"results\":[%s],\"ok\":%s",
      JsonEscape(f.command_line), TestName(f.test), ModeName(e.protocol.mode),
      CcName(e.protocol.cc), e.protocol.paths, e.mtu,
      e.udp.gso ? "true" : "false", e.udp.gro ? "true" : "false",
      f.block ? "block" : "busy", f.verify ? "true" : "false", f.impair.drop,
      f.impair.duplicate, f.impair.reorder, f.impair.corrupt, f.seed, results,
      ok ? "true" : "false");
  if (!stats_json.empty()) absl::StrAppend(&out, ",\"stats\":", stats_json);
  out += "}\n";
  return out;
}

}  // namespace braid::perf

#include "tools/braid_perf/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/common/json_writer.h"

namespace braid::perf {

bool RunResult::ok() const {
  return failure.empty() && !time_limit && send_failed == 0 &&
         client_bad == 0 && client_duplicates == 0 && have_server &&
         server.bad == 0 && server.duplicates == 0 && server.missing == 0;
}

namespace {

double PerDatagram(uint64_t calls, uint64_t datagrams) {
  return datagrams ? static_cast<double>(calls) / static_cast<double>(datagrams)
                   : 0;
}

tools::Json SideJson(const SideCounters& c, uint64_t messages) {
  using tools::Fixed;
  tools::Json j;
  j["datagrams_sent"] = c.datagrams_sent;
  j["datagrams_received"] = c.datagrams_received;
  j["tx_syscalls"] = c.tx_syscalls;
  j["rx_syscalls"] = c.rx_syscalls;
  j["tx_syscalls_per_datagram"] =
      Fixed(PerDatagram(c.tx_syscalls, c.datagrams_sent), 4);
  j["rx_syscalls_per_datagram"] =
      Fixed(PerDatagram(c.rx_syscalls, c.datagrams_received), 4);
  j["retransmits"] = c.retransmits;
  j["allocations"] = c.allocations;
  j["allocations_per_message"] = Fixed(
      messages
          ? static_cast<double>(c.allocations) / static_cast<double>(messages)
          : 0.0,
      3);
  return j;
}

}  // namespace

tools::Json RowJson(const RunResult& r) {
  using tools::Fixed;
  SideCounters server;
  server.datagrams_sent = r.server.datagrams_sent;
  server.datagrams_received = r.server.datagrams_received;
  server.tx_syscalls = r.server.tx_syscalls;
  server.rx_syscalls = r.server.rx_syscalls;
  server.retransmits = r.server.retransmits;
  server.allocations = r.server.allocations;
  tools::Json j;
  j["test"] = TestName(r.test);
  j["size"] = r.size;
  j["window"] = r.window;
  j["iters"] = r.iters;
  j["seconds"] = Fixed(r.seconds, 6);
  j["gbps"] = Fixed(r.gbps, 4);
  j["msg_per_s"] = Fixed(r.msg_per_s, 1);
  j["server_gbps"] = Fixed(r.server_gbps, 4);
  j["lat_min_us"] = Fixed(r.min_us, 3);
  j["lat_mean_us"] = Fixed(r.mean_us, 3);
  j["lat_p50_us"] = Fixed(r.p50_us, 3);
  j["lat_p99_us"] = Fixed(r.p99_us, 3);
  j["lat_p999_us"] = Fixed(r.p999_us, 3);
  j["lat_max_us"] = Fixed(r.max_us, 3);
  j["retransmits"] = r.retransmits;
  j["ok"] = r.ok();
  tools::Json& e = j["errors"];
  e["send_failed"] = r.send_failed;
  e["client_bad"] = r.client_bad;
  e["client_duplicates"] = r.client_duplicates;
  e["server_bad"] = r.server.bad;
  e["server_duplicates"] = r.server.duplicates;
  e["server_missing"] = r.server.missing;
  e["server_foreign"] = r.server.foreign;
  e["first_bad"] = VerdictName(static_cast<Verdict>(r.server.first_bad));
  e["time_limit"] = r.time_limit;
  e["failure"] = r.failure;
  j["server_received"] = r.server.received;
  j["client"] = SideJson(r.client, r.iters);
  j["server"] = SideJson(server, r.server.received);
  return j;
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
  tools::Json out;
  out["tool"] = "braid-perf";
  out["command"] = f.command_line;
  out["test"] = TestName(f.test);
  tools::Json& c = out["config"];
  c["backend"] = BackendName(e.backend);
  c["mode"] = ModeName(e.protocol.mode);
  c["cc"] = CcName(e.protocol.cc);
  c["paths"] = e.protocol.paths;
  c["mtu"] = e.mtu;
  c["gso"] = e.udp.gso;
  c["gro"] = e.udp.gro;
  c["poll"] = f.block ? "block" : "busy";
  c["verify"] = f.verify;
  c["loss"] = tools::Significant(f.impair.drop);
  c["dup"] = tools::Significant(f.impair.duplicate);
  c["reorder"] = tools::Significant(f.impair.reorder);
  c["corrupt"] = tools::Significant(f.impair.corrupt);
  c["seed"] = f.seed;
  bool ok = !rows.empty();
  tools::Json& results = out["results"] = tools::Json::array();
  for (const RunResult& r : rows) {
    ok = ok && r.ok();
    results.push_back(RowJson(r));
  }
  out["ok"] = ok;
  if (!stats_json.empty()) out["stats"] = tools::ParseJson(stats_json);
  return tools::JsonLine(out);
}

std::string FormatServerRunJson(uint32_t run, const HelloMsg& hello,
                                const ResultMsg& res, bool ok) {
  tools::Json j;
  j["tool"] = "braid-perf";
  j["role"] = "server";
  j["run"] = run;
  j["test"] = TestName(hello.test);
  j["size"] = hello.size;
  j["received"] = res.received;
  j["bad"] = res.bad;
  j["duplicates"] = res.duplicates;
  j["missing"] = res.missing;
  j["ok"] = ok;
  return tools::JsonLine(j);
}

}  // namespace braid::perf

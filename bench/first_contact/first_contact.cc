// braid-first-contact: how long a new peer takes to get its first message
// through to a braid-perf server (bench/flood_ab.sh measures it during a
// flood of forged first contacts). Each try opens a fresh endpoint on a new
// port (a new peer address), sends the server one braid-perf Hello, and
// busy-polls: `ack_ms` is Send to kSendDone (the server's endpoint acked
// it: it made room for us and took the message), `answer_ms` Send to the
// server's answer (Busy while it serves another client, else HelloAck,
// which is followed by a Bye). A try that gets no ack within --timeout-ms
// fails. Prints one JSON line per try and a summary line.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "braid/endpoint.h"
#include "tools/braid_perf/control.h"
#include "tools/braid_perf/payload.h"
#include "tools/common/flag_parser.h"

namespace braid::bench {
namespace {

struct Flags {
  NetAddr to;
  std::string bind_ip = "0.0.0.0";
  uint32_t tries = 10;
  uint32_t timeout_ms = 3000;
  uint32_t gap_ms = 100;  // between tries
};

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Try {
  double ack_ms = -1;     // -1: none
  double answer_ms = -1;  // -1: none
  std::string error;
};

// One new peer: open, send a Hello, wait for its ack and the answer.
Try OneTry(const Flags& f, uint32_t run) {
  Try t;
  EndpointOptions o;
  o.bind = absl::StrCat(f.bind_ip, ":0");
  absl::StatusOr<std::unique_ptr<Endpoint>> ep = Endpoint::Open(o);
  if (!ep.ok()) {
    t.error = absl::StrCat("open: ", ep.status().message());
    return t;
  }
  const std::vector<uint8_t> hello =
      perf::EncodeHello(run, {perf::Test::kLat, 64, true});
  const int64_t t0 = NowNs();
  const absl::Status s = (*ep)->Send(f.to, hello, {.cookie = 1});
  if (!s.ok()) {
    t.error = absl::StrCat("send: ", s.message());
    return t;
  }
  const int64_t deadline = t0 + int64_t{f.timeout_ms} * 1'000'000;
  std::vector<Completion> comps;
  bool bye = false;
  while (NowNs() < deadline && (t.ack_ms < 0 || t.answer_ms < 0)) {
    comps.clear();
    (*ep)->Poll(&comps);
    for (const Completion& c : comps) {
      const double ms = static_cast<double>(NowNs() - t0) / 1e6;
      if (c.type == CompletionType::kSendDone && c.cookie == 1) t.ack_ms = ms;
      if (c.type == CompletionType::kSendFailed && c.cookie == 1) {
        t.error = FailureCauseName(c.cause);
        return t;
      }
      perf::Header h;
      if (c.type == CompletionType::kRecv && ReadHeader(c.data, &h) &&
          h.run == run && t.answer_ms < 0) {
        t.answer_ms = ms;
        bye = h.kind == perf::Kind::kHelloAck;
      }
    }
  }
  if (t.ack_ms < 0) t.error = "no ack within the timeout";
  if (bye) {  // the server took us for a client: end that run at once
    (void)(*ep)->Send(f.to, perf::EncodeBye(run), {.cookie = 2});
    const int64_t end = NowNs() + 200'000'000;
    while (NowNs() < end) {
      comps.clear();
      (*ep)->Poll(&comps);
    }
  }
  return t;
}

absl::Status Parse(int argc, char** argv, Flags* f, bool* have_to) {
  tools::FlagParser p;
  p.Value({"--to"}, [&](absl::string_view flag, absl::string_view v) {
    absl::StatusOr<NetAddr> a = NetAddr::Parse(v);
    if (!a.ok()) return tools::FlagError(flag, a.status().message());
    f->to = *a;
    *have_to = true;
    return absl::OkStatus();
  });
  p.Value({"--bind-ip"}, [&](absl::string_view, absl::string_view v) {
    f->bind_ip = std::string(v);
    return absl::OkStatus();
  });
  p.Int<uint32_t>({"--tries"}, 1, 100000, &f->tries);
  p.Int<uint32_t>({"--timeout-ms"}, 1, 600000, &f->timeout_ms);
  p.Int<uint32_t>({"--gap-ms"}, 0, 60000, &f->gap_ms);
  absl::Status s = p.Parse(argc, argv);
  if (s.ok() && p.help()) return absl::InvalidArgumentError("help");
  if (s.ok() && !*have_to) return tools::FlagError("--to", "required");
  return s;
}

int Main(int argc, char** argv) {
  Flags f;
  bool have_to = false;
  const absl::Status s = Parse(argc, argv, &f, &have_to);
  if (!s.ok()) {
    if (s.message() == "help") {
      std::puts(
          "usage: braid-first-contact --to IP:PORT [--bind-ip IP] "
          "[--tries N] [--timeout-ms T] [--gap-ms G]");
      return 0;
    }
    return tools::ReportBadFlags("braid-first-contact", s);
  }
  std::vector<double> acks;
  uint32_t failed = 0;
  for (uint32_t i = 0; i < f.tries; ++i) {
    const Try t = OneTry(f, 2 * (i + 1) + 1);
    std::printf(
        "{\"try\":%u,\"ack_ms\":%.3f,\"answer_ms\":%.3f,\"error\":\"%s\"}\n", i,
        t.ack_ms, t.answer_ms, t.error.c_str());
    if (t.ack_ms >= 0) {
      acks.push_back(t.ack_ms);
    } else {
      ++failed;
    }
    const int64_t until = NowNs() + int64_t{f.gap_ms} * 1'000'000;
    while (NowNs() < until) {
    }
  }
  std::sort(acks.begin(), acks.end());
  const double p50 = acks.empty() ? -1 : acks[acks.size() / 2];
  const double max = acks.empty() ? -1 : acks.back();
  std::printf(
      "{\"summary\":true,\"tries\":%u,\"failed\":%u,\"ack_p50_ms\":%.3f,"
      "\"ack_max_ms\":%.3f}\n",
      f.tries, failed, p50, max);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) { return braid::bench::Main(argc, argv); }

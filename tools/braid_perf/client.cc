#include "tools/braid_perf/client.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/braid_perf/control.h"
#include "tools/braid_perf/histogram.h"
#include "tools/braid_perf/payload.h"
#include "tools/braid_perf/perf_endpoint.h"

namespace braid::perf {
namespace {

// Cookies of control sends; data sends use their slot index (< 2^32).
constexpr uint64_t kCtrlCookie = uint64_t{1} << 40;
// How long a run cut short spends on getting its Bye out.
constexpr double kByeGraceS = 0.1;
// Ping buffers (zero-copy sends): a ping's buffer is reused only after its
// send completed, so a late ACK seldom holds the next ping back.
constexpr uint64_t kPingSlots = 16;
// How long the client keeps re-sending Hello while the server is not up.
constexpr double kConnectSeconds = 10;

// --interval: the goodput of each interval of a bw / rate run, on stderr.
class IntervalReporter {
 public:
  // Reports every `seconds` (0: never) from t0; messages are `size` bytes.
  IntervalReporter(double seconds, int64_t t0, uint32_t size)
      : every_ns_(static_cast<int64_t>(seconds * 1e9)),
        t0_(t0),
        next_ns_(t0 + every_ns_),
        last_ns_(t0),
        size_(size) {}
  // Called with the time and the messages completed so far: prints a line
  // when an interval has ended.
  void At(int64_t now, uint64_t completed) {
    if (every_ns_ <= 0 || now < next_ns_) return;
    const uint64_t n = completed - last_completed_;
    const double secs = static_cast<double>(now - last_ns_) / 1e9;
    // mono_s: CLOCK_MONOTONIC at the interval's end, to line intervals
    // up with events outside the process.
    std::fprintf(stderr,
                 "{\"interval_s\":%.3f,\"mono_s\":%.6f,\"gbps\":%.4f,"
                 "\"messages\":%llu}\n",
                 static_cast<double>(now - t0_) / 1e9,
                 static_cast<double>(now) / 1e9,
                 static_cast<double>(n) * size_ * 8 / secs / 1e9,
                 static_cast<unsigned long long>(n));
    last_completed_ = completed;
    last_ns_ = now;
    while (next_ns_ <= now) next_ns_ += every_ns_;
  }

 private:
  int64_t every_ns_;
  int64_t t0_;
  int64_t next_ns_;
  int64_t last_ns_;
  uint64_t last_completed_ = 0;
  uint32_t size_;
};

class Client {
 public:
  Client(const PerfFlags& f, std::unique_ptr<PerfEndpoint> ep)
      : f_(f), ep_(std::move(ep)), deadline_(f.time_limit) {
    run_seed_ = static_cast<uint32_t>(NowNs() ^ (getpid() << 12));
  }

  int Run() {
    std::vector<RunResult> rows;
    bool fatal = false;
    for (uint32_t size : f_.sizes) {
      RunResult r = RunOne(size);
      rows.push_back(r);
      if (r.time_limit || !r.have_server) fatal = true;
      if (fatal) break;
    }
    if (!fatal) {
      SayBye(3);
    } else if (run_in_progress_) {
      // Cut short (time limit, or no Result): tell the server now, or it
      // learns only from 5 s of silence that this run is over.
      SayBye(kByeGraceS);
    }
    std::string stats_json;
    if (f_.stats && f_.json) {
      // {"endpoint":{...},"peers":[{...with paths...}]}
      stats_json = FormatStatsJson(ep_->ep().stats());
      std::string peers;
      for (const PeerStats& p : ep_->ep().peer_stats(/*with_paths=*/true)) {
        if (!peers.empty()) peers += ",";
        peers += FormatPeerStatsJson(p);
      }
      stats_json =
          "{\"endpoint\":" + stats_json + ",\"peers\":[" + peers + "]}";
    }
    if (f_.json) {
      std::fputs(FormatJson(f_, rows, stats_json).c_str(), stdout);
    } else {
      std::fputs(FormatTable(rows).c_str(), stdout);
      if (f_.stats) {
        std::fputs(FormatStatsTable(ep_->ep().stats()).c_str(), stdout);
        for (const PeerStats& p : ep_->ep().peer_stats(/*with_paths=*/true)) {
          std::fputs(FormatPeerStatsTable(p).c_str(), stdout);
        }
      }
    }
    std::fflush(stdout);
    bool ok = !rows.empty();
    for (const RunResult& r : rows) {
      if (r.time_limit) {
        std::fprintf(stderr, "braid-perf: time limit of %.0f s exceeded\n",
                     f_.time_limit);
        return kExitTimeLimit;
      }
      ok = ok && r.ok();
    }
    return ok ? kExitOk : kExitFailed;
  }

 private:
  // Polls once; control replies for run `run` are kept, send completions of
  // data slots are handed to `on_done`, pongs to `on_pong`.
  struct Inbox {
    std::optional<std::vector<uint8_t>> hello_ack, result;
    bool hello_failed = false;
    int hello_failures = 0;  // Hellos that ended in a send failure
    FailureCause hello_cause = FailureCause::kNone;  // the last one's cause
    bool done_failed = false;
  };

  // How long the client waits for the server application's answer (a pong,
  // the Result) once the server's endpoint has what it answers: twice the
  // peer timeout, the time the transport itself gives a silent peer.
  int64_t AnswerWaitNs() const {
    return 2 * std::max<int64_t>(f_.endpoint.protocol.peer_timeout.ns(),
                                 1000000000);
  }

  void Fail(RunResult* r, const std::string& why) {
    if (r->failure.empty()) r->failure = why;
  }

  // Sends a control message, retrying while the send queue is full.
  bool SendCtrl(absl::Span<const uint8_t> m, uint64_t cookie, RunResult* r) {
    for (;;) {
      const absl::Status s = ep_->ep().Send(f_.server, m, {.cookie = cookie});
      if (s.ok()) return true;
      if (!absl::IsResourceExhausted(s) || deadline_.Passed()) {
        Fail(r, absl::StrCat("send: ", s.message()));
        return false;
      }
      Pump(r, nullptr);
    }
  }

  // One Step; routes the completions. `run` state in `box`.
  void Pump(RunResult* r, Inbox* box) {
    ep_->ep().Recycle(&comps_);
    ep_->Step(&comps_);
    // One clock reading stamps the whole batch: it was taken right after
    // the batch was reaped, and a reading costs as much as braid's own work
    // on a small message (~25 ns of a ~100-300 ns budget in a VM).
    // (The latency test times its own round trips.)
    if (test_ != Test::kLat && !comps_.empty()) done_ns_ = NowNs();
    for (Completion& c : comps_) Route(c, r, box);
  }

  void Route(Completion& c, RunResult* r, Inbox* box) {
    if (c.type == CompletionType::kSendFailed) {
      if (c.cookie == kCtrlCookie + 1 && box) {  // Hello: server not up yet
        box->hello_failed = true;
        ++box->hello_failures;
        box->hello_cause = c.cause;
        return;
      }
      ++r->send_failed;
      Fail(r, absl::StrCat("send to ", c.peer.ToString(),
                           " failed: ", FailureCauseName(c.cause)));
      return;
    }
    if (c.type == CompletionType::kSendDone) {
      if (c.cookie < kCtrlCookie) OnSendDone(c.cookie, r);
      return;
    }
    Header h;
    if (c.peer != f_.server || !ReadHeader(c.data, &h) || h.run != run_) {
      return;  // not ours (or a previous run's straggler)
    }
    if (h.kind == Kind::kPong) {
      OnPong(c, h, r);
    } else if (h.kind == Kind::kHelloAck && box) {
      box->hello_ack = std::move(c.data);
    } else if (h.kind == Kind::kResult && box) {
      box->result = std::move(c.data);
    } else if (h.kind == Kind::kBusy) {
      Fail(r, absl::StrCat("server ", f_.server.ToString(),
                           " is busy with another client's run"));
    } else if (h.kind != Kind::kHelloAck && h.kind != Kind::kResult) {
      ++r->client_bad;  // this run's message of a kind the server never sends
    }
  }

  // --- bw / rate ---------------------------------------------------------
  static constexpr uint32_t kSendsPerStamp = 8;
  struct Slot {
    std::vector<uint8_t> buf;
    int64_t sent_ns = 0;
    bool busy = false;
  };

  void OnSendDone(uint64_t slot, RunResult* r) {
    if (slot >= slots_.size() || !slots_[slot].busy) return;
    Slot& s = slots_[slot];
    s.busy = false;
    const int64_t now = done_ns_;
    if (test_ != Test::kLat) {
      hist_.Add(now - s.sent_ns);
      last_done_ns_ = now;
      ++completed_;
    }
    free_.push_back(static_cast<uint32_t>(slot));
    (void)r;
  }

  void BodyStream(uint32_t size, RunResult* r) {
    const uint32_t w = WindowForSize(f_, size);
    r->window = w;
    const uint64_t iters = f_.seconds > 0 ? UINT64_MAX : ItersForSize(f_, size);
    slots_.assign(w, Slot{});
    free_.clear();
    for (uint32_t i = 0; i < w; ++i) {
      slots_[i].buf.resize(size);
      pattern_->FillAll(absl::MakeSpan(slots_[i].buf),
                        Header{Kind::kData, run_, 0});
      free_.push_back(w - 1 - i);
    }
    uint64_t issued = 0;
    const int64_t t0 = NowNs();
    const int64_t stop_ns = f_.seconds > 0
                                ? t0 + static_cast<int64_t>(f_.seconds * 1e9)
                                : INT64_MAX;
    first_send_ns_ = t0;
    IntervalReporter intervals(f_.interval, t0, size);
    while (r->failure.empty()) {
      const int64_t now = NowNs();
      intervals.At(now, completed_);
      const bool more = issued < iters && now < stop_ns;
      if (!more && completed_ == issued) break;
      // Sends are stamped with a clock reading taken at most
      // kSendsPerStamp sends earlier (a send of a small message costs about
      // what a reading costs): within ~1-2 us of the truth, against
      // completion latencies of tens to hundreds of microseconds at these
      // windows.
      int64_t stamp = now;
      uint32_t since_stamp = 0;
      while (more && issued < iters && !free_.empty()) {
        const uint32_t k = free_.back();
        Slot& s = slots_[k];
        Pattern::Restamp(absl::MakeSpan(s.buf),
                         Header{Kind::kData, run_, issued});
        if (++since_stamp == kSendsPerStamp) {
          stamp = NowNs();
          since_stamp = 0;
        }
        s.sent_ns = stamp;
        const absl::Status st =
            ep_->ep().SendZeroCopy(f_.server, s.buf, {.cookie = k});
        if (absl::IsResourceExhausted(st)) break;
        if (!st.ok()) {
          Fail(r, absl::StrCat("send: ", st.message()));
          break;
        }
        s.busy = true;
        free_.pop_back();
        ++issued;
      }
      Pump(r, nullptr);
      if (deadline_.Passed()) {
        r->time_limit = true;
        return;
      }
    }
  }

  // --- lat ---------------------------------------------------------------
  void OnPong(Completion& c, const Header& h, RunResult* r) {
    if (test_ != Test::kLat) return;
    Header vh;
    const Verdict v = pattern_->Verify(c.data, size_, Kind::kPong, f_.verify,
                                       &vh, [this] { ep_->Progress(); });
    if (v != Verdict::kOk) {
      if (r->client_bad++ == 0) {
        std::fprintf(stderr, "braid-perf: pong failed verification: %s\n",
                     VerdictName(v));
      }
      return;
    }
    if (h.id != ping_id_ || pong_seen_) {
      if (r->client_duplicates++ == 0) {
        std::fprintf(stderr, "braid-perf: duplicate or stale pong id %llu\n",
                     static_cast<unsigned long long>(h.id));
      }
      return;
    }
    pong_seen_ = true;
  }

  void BodyLatency(uint32_t size, RunResult* r) {
    r->window = 1;
    const uint64_t iters = f_.seconds > 0 ? UINT64_MAX : ItersForSize(f_, size);
    const uint64_t warmup =
        f_.seconds > 0 ? 100 : std::min<uint64_t>(1000, iters / 10);
    slots_.assign(kPingSlots, Slot{});
    free_.clear();
    for (Slot& s : slots_) {
      s.buf.resize(size);
      pattern_->FillAll(absl::MakeSpan(s.buf), Header{Kind::kPing, run_, 0});
    }
    const int64_t t_start = NowNs();
    const int64_t stop_ns =
        f_.seconds > 0 ? t_start + static_cast<int64_t>(f_.seconds * 1e9)
                       : INT64_MAX;
    // With -D, iters is UINT64_MAX: the sum must not wrap.
    const uint64_t total =
        iters > UINT64_MAX - warmup ? UINT64_MAX : warmup + iters;
    for (uint64_t i = 0; i < total && r->failure.empty(); ++i) {
      if (i == warmup) first_send_ns_ = NowNs();
      if (i >= warmup && NowNs() >= stop_ns) break;
      Slot& s = slots_[i % kPingSlots];
      while (s.busy && r->failure.empty()) {  // its previous send not yet acked
        Pump(r, nullptr);
        if (deadline_.Passed()) {
          r->time_limit = true;
          return;
        }
      }
      Pattern::Restamp(absl::MakeSpan(s.buf), Header{Kind::kPing, run_, i});
      ping_id_ = i;
      pong_seen_ = false;
      const int64_t t0 = NowNs();
      const absl::Status st =
          ep_->ep().SendZeroCopy(f_.server, s.buf, {.cookie = i % kPingSlots});
      if (!st.ok()) {
        Fail(r, absl::StrCat("send: ", st.message()));
        break;
      }
      s.busy = true;
      ++pings_;
      int64_t acked_ns = 0;  // when the ping's send completed
      while (!pong_seen_ && r->failure.empty()) {
        Pump(r, nullptr);
        if (deadline_.Passed()) {
          r->time_limit = true;
          return;
        }
        // Once the server's endpoint has the ping, nothing of ours is in
        // flight: a server application that died (or stopped answering)
        // right after its endpoint acked would never be noticed.
        if (!s.busy && !pong_seen_) {
          const int64_t now = NowNs();
          if (acked_ns == 0) {
            acked_ns = now;
          } else if (now - acked_ns > AnswerWaitNs()) {
            Fail(r, absl::StrFormat(
                        "no pong for ping %u within %.1f s after the server "
                        "acknowledged it (the server stopped answering)",
                        static_cast<unsigned>(i), AnswerWaitNs() / 1e9));
          }
        }
      }
      const int64_t t1 = NowNs();
      if (i >= warmup) {
        hist_.Add((t1 - t0) / 2);
        ++completed_;
        last_done_ns_ = t1;
      }
    }
    // Let the last pings' send completions come in before Done.
    auto any_busy = [&] {
      for (const Slot& k : slots_) {
        if (k.busy) return true;
      }
      return false;
    };
    while (any_busy() && r->failure.empty()) {
      Pump(r, nullptr);
      if (deadline_.Passed()) {
        r->time_limit = true;
        return;
      }
    }
  }

  // --- one size ------------------------------------------------------------
  RunResult RunOne(uint32_t size) {
    RunResult r;
    r.test = f_.test;
    r.size = size;
    test_ = f_.test;
    size_ = size;
    // Odd and different for every size of a sweep (0 is never a run).
    run_ = (++run_seed_ << 1) | 1;
    completed_ = 0;
    pings_ = 0;
    last_done_ns_ = first_send_ns_ = 0;
    hist_.Clear();
    if (!pattern_ || pattern_->max_size() < size) {
      pattern_ = std::make_unique<Pattern>(size);
    }
    Inbox box;
    if (!Connect(size, &r, &box)) return r;
    run_in_progress_ = true;
    r.have_server = false;
    const SideCounters before = ep_->Snapshot();
    if (f_.test == Test::kLat) {
      BodyLatency(size, &r);
    } else {
      BodyStream(size, &r);
    }
    const SideCounters body = Delta(ep_->Snapshot(), before);
    if (r.time_limit) {
      Figures(size, body, &r);  // what completed before the limit
      return r;
    }
    // Done -> Result.
    const uint64_t sent = f_.test == Test::kLat ? pings_ : completed_;
    const std::vector<uint8_t> done =
        EncodeDone(run_, DoneMsg{sent, sent * size});
    if (SendCtrl(done, kCtrlCookie + 2, &r)) {
      // An unacked Done fails at the endpoint's peer timeout; an acked one
      // whose Result never comes (the server died after its endpoint took
      // Done) fails here.
      const int64_t done_ns = NowNs();
      while (!box.result && r.failure.empty()) {
        Pump(&r, &box);
        if (deadline_.Passed()) {
          r.time_limit = true;
          Figures(size, body, &r);
          return r;
        }
        if (NowNs() - done_ns > AnswerWaitNs()) {
          Fail(&r, absl::StrFormat("no Result from the server within %.1f s "
                                   "of Done (the server stopped answering)",
                                   AnswerWaitNs() / 1e9));
        }
      }
    }
    if (box.result) {
      run_in_progress_ = false;
      std::optional<ResultMsg> res = DecodeResult(*box.result);
      if (res) {
        r.server = *res;
        r.have_server = true;
      } else {
        Fail(&r, "malformed Result from the server");
      }
    }
    Figures(size, body, &r);
    return r;
  }

  // The client's figures of the run: iterations, goodput, latency.
  void Figures(uint32_t size, const SideCounters& body, RunResult* out) {
    RunResult& r = *out;
    r.client = body;
    r.iters = completed_;
    r.seconds = last_done_ns_ > first_send_ns_
                    ? static_cast<double>(last_done_ns_ - first_send_ns_) / 1e9
                    : 0;
    if (r.seconds > 0) {
      const double bytes = static_cast<double>(completed_) * size;
      r.gbps = bytes * 8 / r.seconds / 1e9;
      r.msg_per_s = static_cast<double>(completed_) / r.seconds;
    }
    if (r.server.recv_ns > 0) {
      r.server_gbps = static_cast<double>(r.server.bytes) * 8 /
                      static_cast<double>(r.server.recv_ns);
    }
    r.min_us = static_cast<double>(hist_.min()) / 1e3;
    r.max_us = static_cast<double>(hist_.max()) / 1e3;
    r.mean_us = hist_.mean() / 1e3;
    r.p50_us = hist_.Quantile(0.50) / 1e3;
    r.p99_us = hist_.Quantile(0.99) / 1e3;
    r.p999_us = hist_.Quantile(0.999) / 1e3;
    r.retransmits = body.retransmits + r.server.retransmits;
  }

  // Hello until HelloAck. The server may still be starting: a Hello that
  // fails (no answer within the peer timeout) is sent again, for up to
  // kConnectSeconds.
  bool Connect(uint32_t size, RunResult* r, Inbox* box) {
    const Deadline give_up(kConnectSeconds);
    const std::vector<uint8_t> hello =
        EncodeHello(run_, HelloMsg{f_.test, size, f_.verify});
    box->hello_failed = true;
    while (!box->hello_ack) {
      if (box->hello_failed) {
        box->hello_failed = false;
        if (!SendCtrl(hello, kCtrlCookie + 1, r)) return false;
      }
      Pump(r, box);
      if (!r->failure.empty()) return false;
      if (!warned_no_server_ && ep_->ep().stats().tx_icmp_errors > 0) {
        // Say so now rather than after kConnectSeconds of silence (the
        // server may yet start: keep trying).
        warned_no_server_ = true;
        std::fprintf(stderr,
                     "braid-perf: %s answers with ICMP errors (is a "
                     "braid-perf --server listening there?); retrying for "
                     "up to %.0f s\n",
                     f_.server.ToString().c_str(), kConnectSeconds);
      }
      if (deadline_.Passed()) {
        // Say why, too: a --time-limit below kConnectSeconds ends here.
        Fail(r, absl::StrCat("no answer from server ", f_.server.ToString(),
                             " yet", NoAnswerDetail(*box)));
        r->time_limit = true;
        return false;
      }
      if (give_up.Passed()) {
        Fail(r,
             absl::StrCat("no answer from server ", f_.server.ToString(),
                          " in ", kConnectSeconds, " s", NoAnswerDetail(*box)));
        return false;
      }
    }
    return true;
  }

  // What the Hellos met, for a failure that says why nobody answered.
  std::string NoAnswerDetail(const Inbox& box) const {
    if (box.hello_failures == 0) return "";
    std::string why =
        absl::StrCat(": ", box.hello_failures, " hello(s) failed (",
                     FailureCauseName(box.hello_cause), ")");
    if (ep_->ep().stats().tx_icmp_errors > 0) {
      absl::StrAppend(&why,
                      ", the host answered with ICMP errors (is a "
                      "braid-perf --server listening on that port?)");
    }
    return why;
  }

  // Sends a Bye and waits up to `wait_s` for its completion, so the server
  // hears it. The time limit ends the wait too, unless it had passed
  // already (a run it cut short still says Bye).
  // One attempt to send: after a finished run the send queue has room, and
  // a run cut short does not wait for it.
  void SayBye(double wait_s) {
    const std::vector<uint8_t> bye = EncodeBye(run_);
    if (!ep_->ep().Send(f_.server, bye, {.cookie = kCtrlCookie + 3}).ok()) {
      return;
    }
    const Deadline give_up(wait_s);
    const bool limit_counts = !deadline_.Passed();
    while (!give_up.Passed() && !(limit_counts && deadline_.Passed())) {
      ep_->ep().Recycle(&comps_);
      ep_->Step(&comps_);
      for (const Completion& c : comps_) {
        if (c.cookie == kCtrlCookie + 3 && c.type != CompletionType::kRecv) {
          return;
        }
      }
    }
  }

  const PerfFlags& f_;
  std::unique_ptr<PerfEndpoint> ep_;
  Deadline deadline_;
  std::unique_ptr<Pattern> pattern_;
  std::vector<Completion> comps_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  Histogram hist_;
  Test test_ = Test::kBw;
  uint32_t size_ = 0;
  uint32_t run_seed_ = 0;
  uint32_t run_ = 0;
  uint64_t completed_ = 0;
  uint64_t pings_ = 0;
  uint64_t ping_id_ = 0;
  bool pong_seen_ = false;
  bool run_in_progress_ = false;   // a server took the run; no Result yet
  bool warned_no_server_ = false;  // said that the server's host refuses
  int64_t first_send_ns_ = 0;
  int64_t last_done_ns_ = 0;
  int64_t done_ns_ = 0;  // when the completions being routed were reaped
};

}  // namespace

int RunClient(const PerfFlags& f) {
  absl::StatusOr<std::unique_ptr<PerfEndpoint>> ep = PerfEndpoint::Open(f);
  if (!ep.ok()) {
    std::fprintf(stderr, "braid-perf: cannot open endpoint on %s: %s\n",
                 f.endpoint.bind.c_str(),
                 std::string(ep.status().message()).c_str());
    return kExitFailed;
  }
  Client client(f, std::move(*ep));
  return client.Run();
}

}  // namespace braid::perf

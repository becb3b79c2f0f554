#include "tools/braid_perf/server.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "tools/braid_perf/control.h"
#include "tools/braid_perf/payload.h"
#include "tools/braid_perf/perf_endpoint.h"
#include "tools/braid_perf/report.h"

namespace braid::perf {
namespace {

// Set by SIGINT / SIGTERM (RunServer); Serve returns at its next step.
std::atomic<int> g_stop_signal{0};

constexpr uint64_t kResultCookie = 1;
constexpr uint64_t kOtherCookie = 2;
// After Done, how long the server waits for stragglers before declaring the
// remaining ids missing. Send completion at the client means the server's
// endpoint holds the message, so this is only a safety net.
constexpr int64_t kDoneGraceNs = 2'000'000'000;
// After Bye, keep polling this long so the Bye's ack reaches the client.
constexpr int64_t kByeLingerNs = 200'000'000;
// A run whose client has said nothing for this long may be taken over by
// another client's Hello (the first one crashed or gave up); before that,
// other clients are refused (Busy).
constexpr int64_t kRunSilenceNs = 5'000'000'000;
// How often a quiet run's server looks at its endpoint's receive counter.
constexpr int64_t kSilenceCheckNs = 100'000'000;
// Ids beyond this are not tracked (a guard for the seen-bitmap).
constexpr uint64_t kMaxId = uint64_t{1} << 34;

// One run in progress: what the server has verified so far.
struct Run {
  NetAddr client;
  uint32_t id = 0;
  HelloMsg hello;
  std::vector<uint64_t> seen;  // bitmap of message ids
  ResultMsg res;
  int64_t first_ns = 0, last_ns = 0;
  std::optional<DoneMsg> done;
  int64_t done_ns = 0;
  bool result_sent = false;
  SideCounters at_start;
  int64_t started_ns = 0;  // when its Hello came

  // When the client was last heard from: its Hello, its latest message
  // counted, its Done.
  int64_t LastHeardNs() const {
    return std::max({started_ns, last_ns, done_ns});
  }

  // Marks `id` seen; returns false if it was already.
  bool Mark(uint64_t msg_id) {
    const size_t word = msg_id / 64;
    if (word >= seen.size())
      seen.resize(std::max(word + 1, seen.size() * 2), 0);
    const uint64_t bit = uint64_t{1} << (msg_id % 64);
    if (seen[word] & bit) return false;
    seen[word] |= bit;
    return true;
  }
  uint64_t SeenBelow(uint64_t n) const {
    uint64_t c = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const size_t w = i / 64;
      if (w < seen.size() && (seen[w] >> (i % 64) & 1)) ++c;
    }
    return c;
  }
};

class Server {
 public:
  Server(const PerfFlags& f, std::unique_ptr<PerfEndpoint> ep)
      : f_(f), ep_(std::move(ep)), deadline_(f.persistent ? 0 : f.time_limit) {}

  // Prints the endpoint's counters (--stats) and each peer's to stderr;
  // with --json, the endpoint's also as one line {"server_stats":{...}} on
  // stdout (scripts read it there; a flooded server's peers are many).
  void PrintStats() {
    std::fprintf(stderr, "%s", FormatStatsTable(ep_->ep().stats()).c_str());
    for (const PeerStats& p : ep_->ep().peer_stats(/*with_paths=*/true)) {
      std::fprintf(stderr, "%s", FormatPeerStatsTable(p).c_str());
    }
    if (f_.json) {
      std::printf("{\"server_stats\":%s}\n",
                  FormatStatsJson(ep_->ep().stats()).c_str());
      std::fflush(stdout);
    }
  }

  // Runs until Bye (or the time limit); returns the exit code.
  int Serve() {
    std::vector<Completion> comps;
    for (;;) {
      // Received buffers go back to the endpoint for the next receives
      // (no allocation per message on the steady-state path).
      ep_->ep().Recycle(&comps);
      comps.swap(backlog_);
      ep_->Step(&comps);
      for (size_t i = 0; i < comps.size(); ++i) Handle(comps[i]);
      const int64_t now = NowNs();
      if (run_ && run_->done && !run_->result_sent &&
          (run_->res.received + run_->res.bad >= run_->done->sent ||
           now - run_->done_ns > kDoneGraceNs)) {
        SendResult();
      }
      if (bye_ns_ && now - bye_ns_ > kByeLingerNs) {
        if (!f_.persistent) return exit_code_;
        bye_ns_ = 0;
        deadline_ = Deadline(0);
      }
      if (run_ && !run_->result_sent && ClientWentSilent(now)) {
        // Neither a message nor a datagram from anyone for kRunSilenceNs:
        // the client died or gave up without its Bye (its endpoint would
        // at least be retransmitting otherwise).
        AbandonRun(
            absl::StrFormat("%s went silent (nothing received for "
                            "%.0f s)",
                            run_->client.ToString(), kRunSilenceNs / 1e9));
        if (!f_.persistent) return kExitFailed;
        continue;
      }
      if (const int sig = g_stop_signal.load(std::memory_order_relaxed)) {
        // The normal end of an idle --persistent server (a finished run's
        // result already sent); anything else was cut short.
        const bool mid_run = run_ && !run_->result_sent;
        std::fprintf(stderr, "braid-perf server: stopped by signal %d%s\n", sig,
                     mid_run ? " during a run" : "");
        return mid_run || !f_.persistent ? kExitFailed : exit_code_;
      }
      if (now >= deadline_.end_ns()) {  // deadline_.Passed(), one clock read
        if (f_.persistent) {
          // The client vanished (crashed, killed, or gave up at its own
          // time limit) without its Bye: drop its run and serve the next
          // client. Only a signal ends a --persistent server.
          AbandonRun(absl::StrFormat(
              "time limit of %.0f s exceeded%s", f_.time_limit,
              run_ ? " (client " + run_->client.ToString() + ")" : ""));
          continue;
        }
        std::fprintf(stderr,
                     "braid-perf server: time limit of %.0f s exceeded%s\n",
                     f_.time_limit, run_ ? " during a run" : " (no client)");
        return kExitTimeLimit;
      }
    }
  }

 private:
  // Drops the current run (if any) whose client left without its Bye,
  // saying why; a run that had not been answered with its Result makes the
  // exit code a failure. The server then waits for the next client.
  void AbandonRun(const std::string& why) {
    if (run_) {
      std::fprintf(stderr, "braid-perf server: run %u abandoned: %s\n",
                   run_->id, why.c_str());
      if (!run_->result_sent) exit_code_ = kExitFailed;
    } else {
      std::fprintf(stderr, "braid-perf server: %s\n", why.c_str());
    }
    run_.reset();
    bye_ns_ = 0;
    deadline_ = Deadline(0);
  }

  // True when the current run's client has sent no message for
  // kRunSilenceNs and the endpoint has received no datagram at all for as
  // long. Reads the endpoint's counters at most every kSilenceCheckNs.
  bool ClientWentSilent(int64_t now) {
    if (now - silence_checked_ns_ < kSilenceCheckNs) return false;
    silence_checked_ns_ = now;
    const uint64_t rx = ep_->Snapshot().datagrams_received;
    if (rx != rx_seen_) {
      rx_seen_ = rx;
      rx_changed_ns_ = now;
    }
    const int64_t quiet_since = std::max(run_->LastHeardNs(), rx_changed_ns_);
    return now - quiet_since >= kRunSilenceNs;
  }

  void Handle(Completion& c) {
    if (c.type == CompletionType::kSendFailed) {
      std::fprintf(stderr, "braid-perf server: send to %s failed: %s\n",
                   c.peer.ToString().c_str(), FailureCauseName(c.cause));
      if (c.cookie == kResultCookie) {
        exit_code_ = kExitFailed;
        run_.reset();
        if (!f_.persistent) bye_ns_ = NowNs() - kByeLingerNs;  // exit now
      }
      return;
    }
    if (c.type != CompletionType::kRecv) return;
    Header h;
    const absl::Span<const uint8_t> msg(c.data);
    if (!ReadHeader(msg, &h)) {
      OnBadMessage(c, Verdict::kBadMagic);
      return;
    }
    switch (h.kind) {
      case Kind::kHello:
        OnHello(c, h);
        return;
      case Kind::kData:
      case Kind::kPing:
        OnData(c, h);
        return;
      case Kind::kDone:
        if (run_ && c.peer == run_->client && h.run == run_->id) {
          std::optional<DoneMsg> d = DecodeDone(msg);
          if (d) {
            run_->done = *d;
            run_->done_ns = NowNs();
            return;
          }
        }
        break;
      case Kind::kBye:
        if (!run_ || c.peer == run_->client) {
          if (run_ && !run_->result_sent && h.run == run_->id) {
            // The client gave up on this run (its time limit, or it stopped
            // waiting for our Result): it is over, unfinished.
            AbandonRun(
                absl::StrFormat("%s ended it unfinished (Bye before "
                                "the Result)",
                                run_->client.ToString()));
          }
          bye_ns_ = NowNs();
          return;
        }
        break;
      default:
        if (run_ && c.peer == run_->client && h.run == run_->id) {
          OnBadMessage(c, Verdict::kBadKind);  // e.g. a corrupted kind byte
          return;
        }
        break;
    }
    if (run_) ++run_->res.foreign;
  }

  void OnHello(const Completion& c, const Header& h) {
    std::optional<HelloMsg> hello = DecodeHello(c.data);
    if (!hello) {
      if (run_) ++run_->res.foreign;
      return;
    }
    if (run_ && run_->id == h.run && run_->client == c.peer &&
        run_->res.received == 0) {
      // The client resent its Hello (the first was not provably delivered).
      SendCtrl(c.peer, EncodeHelloAck(h.run), kOtherCookie);
      return;
    }
    if (run_ && !run_->result_sent && c.peer != run_->client &&
        NowNs() - run_->LastHeardNs() < kRunSilenceNs) {
      // One run at a time: a second client is told so at once rather than
      // taking over the first one's run.
      std::fprintf(stderr,
                   "braid-perf server: refused a run from %s: busy with run %u "
                   "from %s\n",
                   c.peer.ToString().c_str(), run_->id,
                   run_->client.ToString().c_str());
      SendCtrl(c.peer, EncodeBusy(h.run), kOtherCookie);
      return;
    }
    if (run_ && !run_->result_sent) {
      std::fprintf(stderr,
                   "braid-perf server: run %u from %s abandoned by a new one\n",
                   run_->id, run_->client.ToString().c_str());
    }
    run_ = std::make_unique<Run>();
    run_->client = c.peer;
    run_->started_ns = NowNs();
    run_->id = h.run;
    run_->hello = *hello;
    run_->at_start = ep_->Snapshot();
    if (!pattern_ || pattern_->max_size() < hello->size) {
      pattern_ = std::make_unique<Pattern>(hello->size);
    }
    if (f_.persistent) deadline_ = Deadline(f_.time_limit);
    const std::vector<uint8_t> ack = EncodeHelloAck(h.run);
    SendCtrl(c.peer, ack, kOtherCookie);
  }

  void OnBadMessage(const Completion& c, Verdict v) {
    if (!run_ || c.peer != run_->client) {
      if (run_) ++run_->res.foreign;
      return;
    }
    if (run_->res.bad++ == 0) {
      run_->res.first_bad = static_cast<uint64_t>(v);
      std::fprintf(stderr,
                   "braid-perf server: run %u: message of %zu bytes failed "
                   "verification: %s\n",
                   run_->id, c.data.size(), VerdictName(v));
    }
  }

  void OnData(Completion& c, const Header& h) {
    if (!run_ || c.peer != run_->client || h.run != run_->id) {
      if (run_) ++run_->res.foreign;
      return;
    }
    const bool lat = run_->hello.test == Test::kLat;
    Header vh;
    const Verdict v = pattern_->Verify(
        c.data, run_->hello.size, lat ? Kind::kPing : Kind::kData,
        run_->hello.verify, &vh, [this] { ep_->Progress(); });
    if (v != Verdict::kOk || h.id >= kMaxId) {
      OnBadMessage(c, v == Verdict::kOk ? Verdict::kBadMagic : v);
      return;
    }
    const int64_t now = NowNs();
    if (!run_->Mark(h.id)) {
      if (run_->res.duplicates++ == 0) {
        std::fprintf(stderr, "braid-perf server: run %u: duplicate id %llu\n",
                     run_->id, static_cast<unsigned long long>(h.id));
      }
      return;
    }
    if (run_->res.received == 0) run_->first_ns = now;
    run_->last_ns = now;
    ++run_->res.received;
    run_->res.bytes += c.data.size();
    if (lat) {
      c.data[2] = static_cast<uint8_t>(Kind::kPong);
      SendCtrl(c.peer, c.data, kOtherCookie);
    }
  }

  void SendCtrl(const NetAddr& to, absl::Span<const uint8_t> m,
                uint64_t cookie) {
    for (;;) {
      const absl::Status s = ep_->ep().Send(to, m, {.cookie = cookie});
      if (s.ok()) return;
      if (!absl::IsResourceExhausted(s) || deadline_.Passed()) {
        std::fprintf(stderr, "braid-perf server: send: %s\n",
                     std::string(s.message()).c_str());
        exit_code_ = kExitFailed;
        return;
      }
      // Make room; what this brings in is handled by the main loop.
      ep_->Step(&backlog_);
    }
  }

  void SendResult() {
    Run& r = *run_;
    const uint64_t sent = r.done->sent;
    r.res.missing = sent - std::min(sent, r.SeenBelow(sent));
    r.res.recv_ns =
        r.res.received > 1 ? static_cast<uint64_t>(r.last_ns - r.first_ns) : 0;
    const SideCounters d = Delta(ep_->Snapshot(), r.at_start);
    r.res.datagrams_sent = d.datagrams_sent;
    r.res.datagrams_received = d.datagrams_received;
    r.res.tx_syscalls = d.tx_syscalls;
    r.res.rx_syscalls = d.rx_syscalls;
    r.res.retransmits = d.retransmits;
    r.res.allocations = d.allocations;
    const bool clean =
        r.res.bad == 0 && r.res.duplicates == 0 && r.res.missing == 0;
    if (!clean) exit_code_ = kExitFailed;
    if (!f_.json) {
      std::fprintf(stderr,
                   "braid-perf server: run %u %s size %u: %llu received, %llu "
                   "bad, %llu duplicates, %llu missing%s\n",
                   r.id, TestName(r.hello.test), r.hello.size,
                   static_cast<unsigned long long>(r.res.received),
                   static_cast<unsigned long long>(r.res.bad),
                   static_cast<unsigned long long>(r.res.duplicates),
                   static_cast<unsigned long long>(r.res.missing),
                   clean ? "" : "  FAILED");
    } else {
      std::fputs(FormatServerRunJson(r.id, r.hello, r.res, clean).c_str(),
                 stdout);
      std::fflush(stdout);
    }
    r.result_sent = true;
    const std::vector<uint8_t> m = EncodeResult(r.id, r.res);
    SendCtrl(r.client, m, kResultCookie);
  }

  const PerfFlags& f_;
  std::unique_ptr<PerfEndpoint> ep_;
  Deadline deadline_;
  std::unique_ptr<Run> run_;
  std::unique_ptr<Pattern> pattern_;
  std::vector<Completion> backlog_;  // polled while waiting to send
  int64_t bye_ns_ = 0;
  int exit_code_ = kExitOk;
  // ClientWentSilent's view of the endpoint's receive counter.
  int64_t silence_checked_ns_ = 0;
  uint64_t rx_seen_ = 0;
  int64_t rx_changed_ns_ = 0;
};

}  // namespace

int RunServer(const PerfFlags& f) {
  absl::StatusOr<std::unique_ptr<PerfEndpoint>> ep = PerfEndpoint::Open(f);
  if (!ep.ok()) {
    std::fprintf(stderr, "braid-perf server: cannot open endpoint on %s: %s\n",
                 f.endpoint.bind.c_str(),
                 std::string(ep.status().message()).c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "braid-perf server listening on %s\n",
               (*ep)->ep().local_address().ToString().c_str());
  std::fflush(stderr);
  Server server(f, std::move(*ep));
  // SIGINT / SIGTERM end the server between steps, so --stats still
  // prints (a --persistent server ends no other way).
  struct sigaction sa {};
  sa.sa_handler = [](int sig) { g_stop_signal.store(sig); };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const int rc = server.Serve();
  if (f.stats) server.PrintStats();
  return rc;
}

}  // namespace braid::perf

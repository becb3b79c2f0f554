// Integration tests across two processes on loopback: this test process and
// endpoint_peer_main (an echo peer), started with fork/exec, bounded by
// timeouts and killed by PID on any failure. Exactly-once, byte-exact and
// ordered delivery through the echo under loss/dup/reorder on both sides; a
// peer process that is killed; a peer process restarted on the same port.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "braid/endpoint.h"
#include "braid/testing/impairment.h"
#include "gtest/gtest.h"
#include "tests/endpoint/traffic.h"

#ifndef BRAID_PEER_BIN
#error "BRAID_PEER_BIN (path of endpoint_peer_main) must be defined"
#endif

namespace braid {
namespace {

using testing::FlowConfig;
using testing::FlowSender;
using testing::ReceiveChecker;
using Clock = std::chrono::steady_clock;

// A child process running endpoint_peer_main, with its stdout on a pipe.
// The destructor kills it (by PID) if it is still running.
class PeerProcess {
 public:
  PeerProcess() = default;
  ~PeerProcess() { Kill(); }
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  // Starts the peer with `flags`; returns false (and says why) on failure.
  bool Start(const std::vector<std::string>& flags, std::string* why) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      *why = "pipe failed";
      return false;
    }
    std::vector<std::string> args = {BRAID_PEER_BIN};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) {
      *why = "fork failed";
      close(fds[0]);
      close(fds[1]);
      return false;
    }
    if (pid_ == 0) {
      // Dies with the test process, even if that crashes.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
    return true;
  }

  // Reads one line of the peer's stdout, waiting at most `limit`.
  bool ReadLine(std::string* line, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        *line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      if (out_ < 0) return false;
      // Always look at least once (with a 0 timeout once the time is up).
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{out_, POLLIN, 0};
      const int r =
          ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
      if (r <= 0) {
        if (left.count() <= 0) return false;
        continue;
      }
      char tmp[256];
      const ssize_t n = read(out_, tmp, sizeof(tmp));
      if (n <= 0) return false;  // EOF: the peer exited
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }

  // Reads the "PORT n" line.
  bool ReadPort(uint16_t* port) {
    std::string line;
    if (!ReadLine(&line, std::chrono::seconds(20))) return false;
    absl::string_view v(line);
    if (!absl::ConsumePrefix(&v, "PORT ")) return false;
    uint32_t p = 0;
    if (!absl::SimpleAtoi(v, &p) || p == 0 || p > 65535) return false;
    *port = static_cast<uint16_t>(p);
    return true;
  }

  // Waits for the peer to exit by itself; returns its exit code, or -1 if it
  // is still running after `limit` (then it is killed) or died of a signal.
  int WaitExit(std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (pid_ > 0) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      if (Clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    Kill();
    return -1;
  }

  // SIGKILL by PID and reap. Safe to call twice.
  void Kill() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    if (out_ >= 0) {
      close(out_);
      out_ = -1;
    }
    buf_.clear();
  }

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buf_;
};

std::unique_ptr<Endpoint> OpenOrDie(const EndpointOptions& o = {}) {
  auto ep = Endpoint::Open(o);
  EXPECT_TRUE(ep.ok()) << ep.status();
  return ep.ok() ? std::move(*ep) : nullptr;
}

NetAddr Loopback(uint16_t port) { return NetAddr::Ipv4(0x7f000001, port); }

const std::vector<uint8_t> kQuit = {'q', 'u', 'i', 't'};

// Polls `ep` until `pred(completions)` or `limit`; returns the completions.
template <typename Pred>
std::vector<Completion> PollUntil(Endpoint& ep, Pred pred,
                                  std::chrono::seconds limit) {
  std::vector<Completion> got;
  const auto deadline = Clock::now() + limit;
  while (!pred(got) && Clock::now() < deadline) ep.Poll(&got);
  return got;
}

// Sends `msg` to `to` and waits for its echo and its send completion.
void EchoOnce(Endpoint& ep, const NetAddr& to,
              const std::vector<uint8_t>& msg) {
  ASSERT_TRUE(ep.Send(to, msg, {.cookie = 1}).ok());
  auto got = PollUntil(
      ep, [](const std::vector<Completion>& g) { return g.size() >= 2; },
      std::chrono::seconds(30));
  ASSERT_EQ(got.size(), 2u);
  for (const Completion& c : got) {
    if (c.type == CompletionType::kRecv) {
      EXPECT_EQ(c.data, msg);
      EXPECT_EQ(c.peer, to);
    } else {
      EXPECT_EQ(c.type, CompletionType::kSendDone) << FailureCauseName(c.cause);
    }
  }
}

TEST(EndpointTwoProcessTest,
     EchoAcrossProcessesIsExactlyOnceByteExactAndOrdered) {
  PeerProcess peer;
  std::string why;
  ASSERT_TRUE(peer.Start({"--drop=0.05", "--dup=0.05", "--reorder=0.05",
                          "--impair-seed=17", "--lifetime-ms=300000"},
                         &why))
      << why;
  uint16_t port = 0;
  ASSERT_TRUE(peer.ReadPort(&port)) << "peer did not start";
  const NetAddr to = Loopback(port);

  EndpointOptions o;
  auto opened = OpenEndpointForTesting(
      o, {.drop = 0.05, .duplicate = 0.05, .reorder = 0.05, .seed = 18});
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<Endpoint> ep = std::move(*opened);
  ASSERT_TRUE(ep);
  constexpr uint64_t kSeed = 2024;
  // The echo comes back on the stream it went out on, in the order the peer
  // received it: ordered flows stay ordered through two hops.
  auto sized = [](Rng& r) {
    return static_cast<uint32_t>(testing::kHeaderBytes) +
           testing::SkewedSize(r);
  };
  FlowConfig unordered{.flow = 1, .count = 2000, .seed = kSeed};
  FlowConfig ordered{
      .flow = 2, .stream = 4, .count = 1000, .seed = kSeed, .size = sized};
  FlowSender s1(unordered, ep.get(), to), s2(ordered, ep.get(), to);
  ReceiveChecker echoes(kSeed);
  echoes.ExpectFlow(1, 0, to);
  echoes.ExpectFlow(2, 4, to);
  const uint64_t total = unordered.count + ordered.count;
  std::vector<std::string> errors;
  std::vector<Completion> done;
  const auto deadline = Clock::now() + std::chrono::seconds(240);
  while ((!s1.finished() || !s2.finished() || echoes.received() < total) &&
         Clock::now() < deadline) {
    s1.Pump();
    s2.Pump();
    done.clear();
    ep->Poll(&done);
    testing::Dispatch(done, {&s1, &s2}, &echoes, &errors);
  }
  for (const std::string& e : errors) ADD_FAILURE() << e;
  for (const std::string& e : s1.errors()) ADD_FAILURE() << "sender: " << e;
  for (const std::string& e : s2.errors()) ADD_FAILURE() << "sender: " << e;
  for (const std::string& e : echoes.errors()) ADD_FAILURE() << "echo: " << e;
  EXPECT_EQ(s1.done(), unordered.count);
  EXPECT_EQ(s2.done(), ordered.count);
  EXPECT_EQ(echoes.received(), total);
  EXPECT_EQ(echoes.duplicates(), 0u);
  EXPECT_EQ(echoes.order_violations(), 0u);
  EXPECT_EQ(echoes.Missing(2, ordered.count), 0u);
  uint32_t tiny = 0;
  for (uint32_t n : s1.tiny_sent()) tiny += n;
  EXPECT_EQ(echoes.Missing(1, unordered.count), tiny);
  EXPECT_EQ(echoes.tiny_received(), s1.tiny_sent());
  EXPECT_GT(ep->stats().reliability.retransmits, 0u);

  // Orderly shutdown: the peer reports what it saw and exits 0.
  ASSERT_TRUE(ep->Send(to, kQuit, {.cookie = 99}).ok());
  std::string line;
  const auto quit_deadline = Clock::now() + std::chrono::seconds(30);
  bool got_done = false;
  while (!got_done && Clock::now() < quit_deadline) {
    done.clear();
    ep->Poll(&done);  // keep acking the peer's last echoes
    got_done = peer.ReadLine(&line, std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(got_done) << "peer did not finish";
  EXPECT_EQ(line, absl::StrCat("DONE received=", total, " echoed=", total,
                               " failed=0"));
  EXPECT_EQ(peer.WaitExit(std::chrono::seconds(10)), 0);
}

TEST(EndpointTwoProcessTest,
     KilledPeerProcessMakesSendsFailWithPeerUnreachable) {
  PeerProcess peer;
  std::string why;
  ASSERT_TRUE(peer.Start({}, &why)) << why;
  uint16_t port = 0;
  ASSERT_TRUE(peer.ReadPort(&port));
  EndpointOptions o;
  o.protocol.peer_timeout = DurationNs::Millis(300);
  auto ep = OpenOrDie(o);
  ASSERT_TRUE(ep);
  const NetAddr to = Loopback(port);
  EchoOnce(*ep, to, std::vector<uint8_t>(5000, 3));

  peer.Kill();
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        ep->Send(to, std::vector<uint8_t>(i * 40000, 1), {.cookie = 10 + i})
            .ok());
  }
  auto got = PollUntil(
      *ep, [](const std::vector<Completion>& g) { return g.size() >= 3; },
      std::chrono::seconds(30));
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  ASSERT_EQ(got.size(), 3u);
  std::set<uint64_t> cookies;
  for (const Completion& c : got) {
    EXPECT_EQ(c.type, CompletionType::kSendFailed);
    EXPECT_EQ(c.cause, FailureCause::kPeerUnreachable)
        << FailureCauseName(c.cause);
    cookies.insert(c.cookie);
  }
  EXPECT_EQ(cookies, (std::set<uint64_t>{10, 11, 12}));
  EXPECT_GE(elapsed, std::chrono::milliseconds(300));
  // Loose: catches a deadline that ignores the configured 300 ms (default
  // 2 s), not scheduling noise.
  EXPECT_LT(elapsed, std::chrono::milliseconds(1900));
}

TEST(EndpointTwoProcessTest,
     PeerRestartedOnSamePortFailsOldSendsAndServesNewOnes) {
  PeerProcess first;
  std::string why;
  ASSERT_TRUE(first.Start({}, &why)) << why;
  uint16_t port = 0;
  ASSERT_TRUE(first.ReadPort(&port));
  EndpointOptions o;
  // Long enough that the restart, not the silence, is what fails the sends.
  o.protocol.peer_timeout = DurationNs::Seconds(20);
  auto ep = OpenOrDie(o);
  ASSERT_TRUE(ep);
  const NetAddr to = Loopback(port);
  EchoOnce(*ep, to, std::vector<uint8_t>(3000, 7));

  first.Kill();
  constexpr int kOld = 5;
  for (int i = 0; i < kOld; ++i) {
    ASSERT_TRUE(ep->Send(to, std::vector<uint8_t>(1000 + i * 20000, 2),
                         {.cookie = 100u + i})
                    .ok());
  }
  std::vector<Completion> got;
  for (int i = 0; i < 50; ++i) ep->Poll(&got);
  EXPECT_TRUE(got.empty()) << "completed while the peer was dead";

  PeerProcess second;
  ASSERT_TRUE(second.Start({absl::StrCat("--bind=127.0.0.1:", port)}, &why))
      << why;
  uint16_t port2 = 0;
  ASSERT_TRUE(second.ReadPort(&port2))
      << "restart on port " << port << " failed";
  ASSERT_EQ(port2, port);

  // Each old send completes exactly once. Those in flight when the restart
  // was detected fail with kPeerRestarted (the first always is: it left at
  // once). Those still queued then (e.g. behind a congestion window cut by
  // the RTOs while the peer was dead) may flow to the new life: then they
  // are done, and their echo must come back intact.
  std::map<uint64_t, Completion> sends;
  std::vector<std::vector<uint8_t>> echoes;
  auto old_message = [](uint64_t cookie) {
    return std::vector<uint8_t>(1000 + (cookie - 100) * 20000, 2);
  };
  auto settled = [&] {
    if (sends.size() < kOld) return false;
    size_t delivered = 0;
    for (const auto& [cookie, c] : sends) {
      delivered += c.type == CompletionType::kSendDone;
    }
    return echoes.size() >= delivered;
  };
  const auto settle_deadline = Clock::now() + std::chrono::seconds(30);
  while (!settled() && Clock::now() < settle_deadline) {
    for (Completion& c : got) {
      if (c.type == CompletionType::kRecv) {
        echoes.push_back(std::move(c.data));
      } else {
        EXPECT_TRUE(sends.emplace(c.cookie, c).second)
            << "second completion for " << c.cookie;
      }
    }
    got.clear();
    ep->Poll(&got);
  }
  ASSERT_TRUE(settled()) << sends.size() << " of " << kOld
                         << " old sends completed, " << echoes.size()
                         << " echoes";
  size_t old_delivered = 0;
  for (uint64_t cookie = 100; cookie < 100 + kOld; ++cookie) {
    ASSERT_EQ(sends.count(cookie), 1u) << cookie;
    const Completion& c = sends[cookie];
    if (c.type == CompletionType::kSendDone) {
      ++old_delivered;
      bool echoed = false;
      for (const auto& e : echoes) echoed = echoed || e == old_message(cookie);
      EXPECT_TRUE(echoed) << "no intact echo of " << cookie;
    } else {
      EXPECT_EQ(c.type, CompletionType::kSendFailed);
      EXPECT_EQ(c.cause, FailureCause::kPeerRestarted)
          << FailureCauseName(c.cause);
    }
  }
  EXPECT_EQ(sends[100].type, CompletionType::kSendFailed);
  EXPECT_EQ(echoes.size(), old_delivered);
  EXPECT_EQ(ep->stats().peer_restarts, 1u);

  // The new life serves new sends.
  for (int i = 0; i < 20; ++i) {
    std::vector<uint8_t> m(i * 3001 + 1);
    for (size_t k = 0; k < m.size(); ++k)
      m[k] = static_cast<uint8_t>(i + k * 13);
    EchoOnce(*ep, to, m);
  }
  ASSERT_TRUE(ep->Send(to, kQuit).ok());
  std::string line;
  bool got_done = false;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  std::vector<Completion> sink;
  while (!got_done && Clock::now() < deadline) {
    ep->Poll(&sink);
    got_done = second.ReadLine(&line, std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(got_done);
  EXPECT_EQ(line, absl::StrCat("DONE received=", 20 + old_delivered,
                               " echoed=", 20 + old_delivered, " failed=0"));
  EXPECT_EQ(second.WaitExit(std::chrono::seconds(10)), 0);
}

}  // namespace
}  // namespace braid

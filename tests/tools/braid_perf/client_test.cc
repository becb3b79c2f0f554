// braid-perf's client against a server whose endpoint keeps acknowledging
// but whose application stops answering: the client must fail the run with
// the cause, within twice the peer timeout, not wait for --time-limit. The
// transport cannot see this (nothing of the client's is in flight), so the
// client's own answer wait is what ends the run.
#include "tools/braid_perf/client.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "tools/braid_perf/control.h"
#include "tools/braid_perf/flags.h"
#include "tools/braid_perf/payload.h"

namespace braid::perf {
namespace {

// A braid endpoint on its own thread that plays a braid-perf server: it
// accepts the run and echoes the first `pongs` pings, then ignores every
// message (its endpoint still acks them). It never sends a Result.
class MuteServer {
 public:
  explicit MuteServer(uint64_t pongs) : pongs_(pongs) {
    EndpointOptions o;
    o.bind = "127.0.0.1:0";
    ep_ = Endpoint::Open(o).value();
    thread_ = std::thread([this] { Serve(); });
  }
  ~MuteServer() {
    stop_ = true;
    thread_.join();
  }
  std::string address() const { return ep_->local_address().ToString(); }
  uint64_t pongs_sent() const { return sent_; }

 private:
  void Serve() {
    std::vector<Completion> done;
    while (!stop_) {
      ep_->Poll(&done);
      for (Completion& c : done) {
        Header h;
        if (c.type != CompletionType::kRecv || !ReadHeader(c.data, &h)) {
          continue;
        }
        if (h.kind == Kind::kHello) {
          (void)ep_->Send(c.peer, EncodeHelloAck(h.run), {});
        } else if (h.kind == Kind::kPing && sent_ < pongs_) {
          c.data[2] = static_cast<uint8_t>(Kind::kPong);  // as the server
          if (ep_->Send(c.peer, c.data, {}).ok()) ++sent_;
        }
      }
      ep_->Recycle(&done);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  const uint64_t pongs_;
  std::unique_ptr<Endpoint> ep_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sent_{0};
  std::thread thread_;
};

PerfFlags ClientFlags(const std::string& server, const char* iters) {
  std::vector<std::string> args = {
      "braid-perf", "--client", server,         "--test", "lat",
      "-n",         iters,      "--time-limit", "30",     "--block"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParsePerfFlags(static_cast<int>(argv.size()), argv.data()).value();
}

struct Outcome {
  int exit_code;
  double seconds;
  std::string out;  // the report, which names a run's failure
  std::string err;
};

Outcome RunAgainst(MuteServer& srv, const char* iters) {
  const PerfFlags f = ClientFlags(srv.address(), iters);
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = RunClient(f);
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::string out = testing::internal::GetCapturedStdout();
  return Outcome{rc, s, std::move(out), testing::internal::GetCapturedStderr()};
}

// The peer timeout is 2 s by default; the client waits twice that.
constexpr double kAnswerWaitS = 4.0;

TEST(ClientTest, AServerThatStopsAnsweringPingsFailsTheRunWithTheCause) {
  MuteServer srv(/*pongs=*/50);
  const Outcome o = RunAgainst(srv, "1000");
  EXPECT_EQ(o.exit_code, kExitFailed) << o.out << o.err;
  EXPECT_NE(o.out.find("server stopped answering"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("no pong for ping"), std::string::npos) << o.out;
  EXPECT_GE(srv.pongs_sent(), 50u);
  EXPECT_GE(o.seconds, kAnswerWaitS * 0.9);
  EXPECT_LT(o.seconds, kAnswerWaitS + 6);  // far below --time-limit 30
}

TEST(ClientTest, AServerThatNeverSendsItsResultFailsTheRunWithTheCause) {
  MuteServer srv(/*pongs=*/UINT64_MAX);  // every ping, but no Result
  const Outcome o = RunAgainst(srv, "200");
  EXPECT_EQ(o.exit_code, kExitFailed) << o.out << o.err;
  EXPECT_NE(o.out.find("no Result from the server"), std::string::npos)
      << o.out;
  EXPECT_GE(srv.pongs_sent(), 200u);
  EXPECT_LT(o.seconds, kAnswerWaitS + 6);
}

}  // namespace
}  // namespace braid::perf

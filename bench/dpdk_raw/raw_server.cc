#include "bench/dpdk_raw/raw_server.h"

#include <rte_ethdev.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <vector>

#include "bench/dpdk_raw/raw_control.h"
#include "bench/dpdk_raw/raw_frame.h"
#include "tools/common/json_writer.h"

namespace braid::dpdkraw {
namespace {

using tools::Fixed;
using tools::Json;

// How often the server looks at the link and the clock.
constexpr double kCheckInterval = 0.05;
// After answering the end of a run the server stops polling until the
// client has left (or this long): memif unmaps its rings when the peer
// disconnects, from another thread, so a burst polled just then could read
// freed memory, and a --once server closing at once could take the answer
// away before the client read it. It ends as soon as the link is down; the
// bound only matters for a client that hangs (a loaded machine can keep a
// client from leaving for more than a second or two).
constexpr double kLingerSeconds = 10;

struct RunStats {
  uint32_t run = 0;
  bool active = false;
  uint64_t frames = 0;
  uint64_t bytes = 0;  // UDP payload
  uint64_t first = 0;  // TSC of the first and last data frame
  uint64_t last = 0;
};

constexpr std::array<const char*, kDropReasons> kDropNames = {
    "none",    "short",      "not_ipv4",  "fragment",
    "not_udp", "bad_length", "not_bench", "trailing"};

class Server {
 public:
  Server(const Options& o, const Port& port)
      : o_(o), port_(port), self_{port.mac, kServerIp, kServerPort} {}

  // Serves until done; returns the exit code.
  int Serve();

 private:
  // Waits (not polling) until the client's link goes down, for at most
  // kLingerSeconds; with --once the server is done then.
  void Linger();
  // Handles one received frame; returns whether the server keeps `m`.
  bool Handle(rte_mbuf* m, uint64_t now);
  void Reply(const RxFrame& to, BenchHeader h) {
    (void)SendControl(port_, self_, to.src, h);
  }
  void OnEnd(const RxFrame& f);
  void OnLatEnd(const RxFrame& f);
  void PrintRun(const RunStats& s, const BenchHeader& end);
  Json Drops() const;

  const Options& o_;
  const Port& port_;
  const Endpoint self_;
  RunStats stats_;
  BenchHeader last_report_;
  bool have_report_ = false;
  uint32_t ping_run_ = 0;
  uint64_t pings_echoed_ = 0;
  uint32_t lat_ended_run_ = 0;
  bool have_lat_end_ = false;
  bool done_ = false;
  bool ended_ = false;  // a run just ended: wait for the client to leave
  std::array<uint64_t, kDropReasons> drops_{};
  std::vector<rte_mbuf*> echo_;
};

bool Server::Handle(rte_mbuf* m, uint64_t now) {
  RxFrame f;
  const Drop d = ParseFrame(m, &f);
  if (d != Drop::kNone) {
    ++drops_[static_cast<int>(d)];
    return false;
  }
  switch (f.h.type) {
    case kData:
      if (have_report_ && f.h.run == last_report_.run) break;  // straggler
      if (!stats_.active || f.h.run != stats_.run) {
        stats_ = RunStats{f.h.run, true};
      }
      if (stats_.frames == 0) stats_.first = now;
      stats_.last = now;
      ++stats_.frames;
      stats_.bytes += f.payload_bytes;
      break;
    case kPing:
      if (pings_echoed_ == 0 || f.h.run != ping_run_) {
        ping_run_ = f.h.run;
        pings_echoed_ = 0;
      }
      ++pings_echoed_;
      TurnAround(m);
      echo_.push_back(m);
      return true;
    case kStart: {
      stats_ = RunStats{f.h.run, true};
      BenchHeader ack;
      ack.type = kStartAck;
      ack.run = f.h.run;
      Reply(f, ack);
      break;
    }
    case kEnd:
      OnEnd(f);
      break;
    case kLatEnd:
      OnLatEnd(f);
      break;
    default:
      break;
  }
  return false;
}

void Server::OnEnd(const RxFrame& f) {
  if (have_report_ && f.h.run == last_report_.run) {
    Reply(f, last_report_);  // the client missed the report
    return;
  }
  if (!stats_.active || stats_.run != f.h.run) {
    stats_ = RunStats{f.h.run, false};  // nothing of this run arrived
  }
  BenchHeader rep;
  rep.type = kReport;
  rep.run = f.h.run;
  rep.a = stats_.frames;
  rep.b = stats_.bytes;
  rep.c = static_cast<uint64_t>(TscNs(stats_.last - stats_.first));
  Reply(f, rep);
  last_report_ = rep;
  have_report_ = true;
  PrintRun(stats_, f.h);
  stats_ = RunStats{};
  ended_ = true;
}

void Server::OnLatEnd(const RxFrame& f) {
  BenchHeader ack;
  ack.type = kLatEndAck;
  ack.run = f.h.run;
  Reply(f, ack);
  if (have_lat_end_ && f.h.run == lat_ended_run_) return;  // a repeat
  lat_ended_run_ = f.h.run;
  have_lat_end_ = true;
  const uint64_t echoed = f.h.run == ping_run_ ? pings_echoed_ : 0;
  if (o_.json) {
    Json j;
    j["role"] = "server";
    j["mode"] = "lat";
    j["run"] = f.h.run;
    j["echoed"] = echoed;
    j["pings"] = f.h.a;
    j["pongs"] = f.h.b;
    j["drops"] = Drops();
    std::fputs(tools::JsonLine(j).c_str(), stdout);
  } else {
    std::printf(
        "run %u (lat): echoed %llu pings; the client sent %llu and got %llu "
        "pongs\n",
        f.h.run, static_cast<unsigned long long>(echoed),
        static_cast<unsigned long long>(f.h.a),
        static_cast<unsigned long long>(f.h.b));
  }
  std::fflush(stdout);
  ended_ = true;
}

Json Server::Drops() const {
  Json j = Json::object();
  for (int i = 1; i < kDropReasons; ++i) j[kDropNames[i]] = drops_[i];
  return j;
}

void Server::PrintRun(const RunStats& s, const BenchHeader& end) {
  const double secs = TscNs(s.last - s.first) / 1e9;
  const double gbps =
      secs > 0 ? static_cast<double>(s.bytes) * 8 / secs / 1e9 : 0;
  const double pps = secs > 0 ? static_cast<double>(s.frames) / secs : 0;
  if (o_.json) {
    Json j;
    j["role"] = "server";
    j["mode"] = "bw";
    j["run"] = s.run;
    j["sent"] = end.a;
    j["received"] = s.frames;
    j["bytes"] = s.bytes;
    j["seconds"] = Fixed(secs, 6);
    j["gbps"] = Fixed(gbps, 4);
    j["pps"] = Fixed(pps, 0);
    j["drops"] = Drops();
    std::fputs(tools::JsonLine(j).c_str(), stdout);
  } else {
    std::printf(
        "run %u: received %llu of %llu frames, %llu payload bytes in %.3f s: "
        "%.3f Gbit/s, %.0f frames/s\n",
        s.run, static_cast<unsigned long long>(s.frames),
        static_cast<unsigned long long>(end.a),
        static_cast<unsigned long long>(s.bytes), secs, gbps, pps);
  }
  std::fflush(stdout);
}

void Server::Linger() {
  ended_ = false;
  done_ = o_.once;
  const uint64_t deadline = Tsc() + TscTicks(kLingerSeconds);
  while (LinkUp(port_) && Tsc() < deadline && !Stopping()) usleep(1000);
}

int Server::Serve() {
  const unsigned burst = static_cast<unsigned>(o_.burst);
  std::vector<rte_mbuf*> in(burst);
  std::vector<rte_mbuf*> drop(burst);
  echo_.reserve(burst);
  const uint64_t start = Tsc();
  const uint64_t end =
      o_.seconds > 0 ? start + TscTicks(o_.seconds) : UINT64_MAX;
  const uint64_t check_every = TscTicks(kCheckInterval);
  uint64_t next_check = start + check_every;
  if (!o_.json) {
    std::printf("dpdk-raw server on %s\n", port_.name.c_str());
    std::fflush(stdout);
  }
  uint64_t idle = 0;
  while (!done_ && !Stopping()) {
    const uint16_t n =
        rte_eth_rx_burst(port_.id, 0, in.data(), static_cast<uint16_t>(burst));
    if (n == 0) {
      // Idle: look at the clock and the link now and then only.
      if ((++idle & 1023) != 0) continue;
      const uint64_t now = Tsc();
      if (now < next_check) continue;
      next_check = now + check_every;
      if (now >= end) break;
      if (o_.once && !LinkUp(port_)) {
        std::fprintf(stderr,
                     "dpdk-raw: the peer on port %s left before the run "
                     "ended\n",
                     port_.name.c_str());
        return 1;
      }
      continue;
    }
    const uint64_t now = Tsc();
    unsigned ndrop = 0;
    for (uint16_t i = 0; i < n; ++i) {
      if (!Handle(in[i], now)) drop[ndrop++] = in[i];
    }
    rte_pktmbuf_free_bulk(drop.data(), ndrop);
    if (!echo_.empty()) {
      const uint16_t sent = rte_eth_tx_burst(
          port_.id, 0, echo_.data(), static_cast<uint16_t>(echo_.size()));
      rte_pktmbuf_free_bulk(echo_.data() + sent, echo_.size() - sent);
      echo_.clear();
    }
    if (ended_) Linger();
  }
  return 0;
}

}  // namespace

int RunServer(const Options& o, const Port& port) {
  Server server(o, port);
  return server.Serve();
}

}  // namespace braid::dpdkraw

#include "bench/dpdk_raw/raw_client.h"

#include <rte_ethdev.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/dpdk_raw/raw_control.h"
#include "bench/dpdk_raw/raw_frame.h"
#include "tools/braid_perf/histogram.h"
#include "tools/common/json_writer.h"

namespace braid::dpdkraw {
namespace {

using tools::Fixed;
using tools::Json;

// How long the client waits for the server to answer a start or an end.
constexpr double kStartTimeout = 5;
constexpr double kReportTimeout = 10;
constexpr double kRetryInterval = 0.2;
// lat: a ping without its pong for this long is lost (the run goes on).
constexpr double kPingTimeout = 1;
// lat: no pong at all this long after the start, or for this long after
// some came back: the server is gone.
constexpr double kFirstPongTimeout = 3;
constexpr double kSilenceTimeout = 5;
// Frames in the data and ping template pools.
constexpr unsigned kDataPoolMbufs = 4095;
constexpr unsigned kPingPoolMbufs = 1023;

uint32_t NewRunId() {
  return static_cast<uint32_t>(Tsc() ^ (static_cast<uint64_t>(getpid()) << 16));
}

Endpoint Self(const Port& port) { return {port.mac, kClientIp, kClientPort}; }

Endpoint ServerGuess() {
  Endpoint e{{}, kServerIp, kServerPort};
  std::memset(e.mac.addr_bytes, 0xff, RTE_ETHER_ADDR_LEN);  // broadcast
  return e;
}

// Starts run `run` with the server; learns its MAC into *server.
bool StartRun(const Port& port, uint32_t run, Endpoint* server) {
  BenchHeader start;
  start.type = kStart;
  start.run = run;
  RxFrame ack;
  if (!Exchange(port, Self(port), *server, start, kStartAck, kRetryInterval,
                kStartTimeout, &ack)) {
    std::fprintf(stderr,
                 "dpdk-raw: no answer from a dpdk-raw server on port %s "
                 "within %g s\n",
                 port.name.c_str(), kStartTimeout);
    return false;
  }
  server->mac = ack.src.mac;
  return true;
}

// A template pool (`name`, `n` frames) of frames from this client to
// `server` carrying a bench header of `type` and `run`, the rest of the
// payload `fill`; nullptr after saying why not.
rte_mempool* ClientFramePool(const Options& o, const Port& port,
                             const Endpoint& server, uint8_t type, uint32_t run,
                             const char* name, unsigned n, uint8_t fill) {
  const uint32_t frame_bytes = kHeadersBytes + o.size;
  std::vector<uint8_t> frame(frame_bytes);
  BenchHeader h;
  h.type = type;
  h.run = run;
  WriteFrame(frame.data(), Self(port), server, h, o.size, fill);
  absl::StatusOr<rte_mempool*> pool =
      MakeTemplatePool(name, n, frame.data(), frame_bytes);
  if (!pool.ok()) {
    std::fprintf(stderr, "dpdk-raw: %s\n",
                 std::string(pool.status().message()).c_str());
    return nullptr;
  }
  return *pool;
}

// The fields every client result starts with.
Json ResultHead(const Options& o, const Port& port) {
  Json j;
  j["tool"] = "dpdk-raw";
  j["mode"] = o.mode;
  j["port"] = port.name;
  j["size"] = o.size;
  j["frame_bytes"] = o.size + kHeadersBytes;
  return j;
}

struct BlastResult {
  uint64_t sent = 0;
  uint64_t short_bursts = 0;  // tx bursts the port took only part of
  uint64_t ticks = 0;
};

// Sends template frames of `pool` in bursts until o's limits are reached.
BlastResult Blast(const Options& o, const Port& port, rte_mempool* pool,
                  uint32_t frame_bytes) {
  const unsigned burst = static_cast<unsigned>(o.burst);
  std::vector<rte_mbuf*> pkts(burst);
  unsigned have = 0;
  BlastResult r;
  const uint64_t t0 = Tsc();
  const uint64_t deadline =
      o.seconds > 0 ? t0 + TscTicks(o.seconds) : UINT64_MAX;
  while ((o.count == 0 || r.sent < o.count) && !Stopping()) {
    if (Tsc() >= deadline) break;
    unsigned want = burst;
    if (o.count != 0)
      want = static_cast<unsigned>(std::min<uint64_t>(burst, o.count - r.sent));
    if (have < want) {
      have += TakeFrames(pool, frame_bytes, pkts.data() + have, want - have);
    }
    if (have == 0) continue;
    const uint16_t n =
        rte_eth_tx_burst(port.id, 0, pkts.data(), static_cast<uint16_t>(have));
    if (n < have) {
      ++r.short_bursts;
      std::memmove(pkts.data(), pkts.data() + n, (have - n) * sizeof(pkts[0]));
    }
    have -= n;
    r.sent += n;
  }
  r.ticks = Tsc() - t0;
  rte_pktmbuf_free_bulk(pkts.data(), have);
  return r;
}

void PrintBandwidth(const Options& o, const Port& port, const BlastResult& b,
                    const RxFrame* rep) {
  const double send_secs = TscNs(b.ticks) / 1e9;
  const double bits = 8.0 * o.size;
  const double send_pps =
      send_secs > 0 ? static_cast<double>(b.sent) / send_secs : 0;
  const double rx_secs = rep ? static_cast<double>(rep->h.c) / 1e9 : 0;
  const double pps =
      rep ? (rx_secs > 0 ? static_cast<double>(rep->h.a) / rx_secs : 0)
          : send_pps;
  const double gbps = pps * bits / 1e9;
  const double loss = rep && b.sent > 0 ? 1.0 - static_cast<double>(rep->h.a) /
                                                    static_cast<double>(b.sent)
                                        : 0;
  if (o.json) {
    Json j = ResultHead(o, port);
    j["burst"] = o.burst;
    j["counted_by"] = rep ? "receiver" : "sender";
    j["sent"] = b.sent;
    j["received"] = rep ? Json(rep->h.a) : Json();
    j["received_bytes"] = rep ? Json(rep->h.b) : Json();
    j["loss"] = Fixed(loss, 6);
    j["send_seconds"] = Fixed(send_secs, 6);
    j["recv_seconds"] = rep ? Json(Fixed(rx_secs, 6)) : Json();
    j["gbps"] = Fixed(gbps, 4);
    j["pps"] = Fixed(pps, 0);
    j["send_gbps"] = Fixed(send_pps * bits / 1e9, 4);
    j["send_pps"] = Fixed(send_pps, 0);
    j["short_bursts"] = b.short_bursts;
    std::fputs(tools::JsonLine(j).c_str(), stdout);
    return;
  }
  std::printf(
      "dpdk-raw bw on %s: size %u (frames of %u bytes), burst %d\n"
      "  sent      %llu frames in %.3f s (%.0f frames/s, %llu short bursts)\n",
      port.name.c_str(), o.size, o.size + kHeadersBytes, o.burst,
      static_cast<unsigned long long>(b.sent), send_secs, send_pps,
      static_cast<unsigned long long>(b.short_bursts));
  if (rep) {
    std::printf("  received  %llu frames (loss %.3f%%) in %.3f s\n",
                static_cast<unsigned long long>(rep->h.a), loss * 100, rx_secs);
  }
  std::printf("  goodput   %.3f Gbit/s, %.0f frames/s (%s-counted)\n", gbps,
              pps, rep ? "receiver" : "sender");
}

}  // namespace

absl::Status CheckFramesFit(const Options& o, const Port& port) {
  const uint32_t frame_bytes = kHeadersBytes + o.size;
  if (port.memif_bsize == 0 || frame_bytes <= port.memif_bsize) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "frames of ", frame_bytes, " bytes do not fit memif's buffers (bsize ",
      port.memif_bsize,
      ") and memif corrupts frames that span several: give both ends bsize=",
      frame_bytes, " or more in --vdev"));
}

int RunBandwidth(const Options& o, const Port& port) {
  const uint32_t run = NewRunId();
  Endpoint server = ServerGuess();
  const uint32_t frame_bytes = kHeadersBytes + o.size;
  if (!o.tx_only && !StartRun(port, run, &server)) return 1;
  rte_mempool* pool = ClientFramePool(o, port, server, kData, run, "data",
                                      kDataPoolMbufs, 0x5a);
  if (pool == nullptr) return 1;
  const BlastResult b = Blast(o, port, pool, frame_bytes);
  if (Stopping()) {
    std::fprintf(stderr, "dpdk-raw: interrupted\n");
    return 1;
  }
  if (o.tx_only) {
    PrintBandwidth(o, port, b, nullptr);
    return 0;
  }
  BenchHeader end;
  end.type = kEnd;
  end.run = run;
  end.a = b.sent;
  end.b = b.sent * o.size;
  RxFrame rep;
  if (!Exchange(port, Self(port), server, end, kReport, kRetryInterval,
                kReportTimeout, &rep)) {
    std::fprintf(stderr,
                 "dpdk-raw: no report from the server on port %s within %g "
                 "s\n",
                 port.name.c_str(), kReportTimeout);
    return 1;
  }
  PrintBandwidth(o, port, b, &rep);
  return 0;
}

namespace {

struct PingResult {
  uint64_t pings = 0;
  uint64_t pongs = 0;
  uint64_t lost = 0;
  perf::Histogram half_rtt;  // ns, the measured pings (after warm-up)
  bool silent = false;       // the server stopped answering
};

// Sends one ping (a template frame with `seq` patched in) and polls for its
// echo for up to kPingTimeout. Returns whether it came back.
bool PingOnce(const Port& port, rte_mempool* pool, uint32_t frame_bytes,
              uint32_t run, uint32_t seq) {
  rte_mbuf* m = nullptr;
  if (TakeFrames(pool, frame_bytes, &m, 1) != 1) return false;
  uint8_t* seq_at = rte_pktmbuf_mtod_offset(
      m, uint8_t*, kHeadersBytes + offsetof(BenchHeader, seq));
  std::memcpy(seq_at, &seq, sizeof(seq));
  UpdateUdpChecksum(m);
  const uint64_t t0 = Tsc();
  const uint64_t deadline = t0 + TscTicks(kPingTimeout);
  while (rte_eth_tx_burst(port.id, 0, &m, 1) == 0) {
    if (Tsc() >= deadline || Stopping()) {
      rte_pktmbuf_free(m);
      return false;
    }
  }
  rte_mbuf* in[32];
  bool got = false;
  while (!got && !Stopping()) {
    const uint16_t n = rte_eth_rx_burst(port.id, 0, in, 32);
    for (uint16_t i = 0; i < n; ++i) {
      RxFrame f;
      got = got ||
            (ParseFrame(in[i], &f) == Drop::kNone && f.h.type == kPing &&
             f.h.run == run && f.h.seq == seq && f.dst.port == kClientPort);
    }
    rte_pktmbuf_free_bulk(in, n);
    if (n == 0 && Tsc() >= deadline) break;
  }
  return got;
}

PingResult PingPong(const Options& o, const Port& port, rte_mempool* pool,
                    uint32_t frame_bytes, uint32_t run) {
  // --count: min(1000, count/10) warm-up pings, then count measured ones.
  // --duration: pings for that long, the first 10% (at most 1000) warm-up.
  PingResult r;
  const uint64_t start = Tsc();
  const uint64_t end = o.seconds > 0 ? start + TscTicks(o.seconds) : UINT64_MAX;
  const uint64_t warmup_pings =
      o.count > 0 ? std::min<uint64_t>(1000, o.count / 10) : 1000;
  const uint64_t warmup_end =
      o.seconds > 0 ? start + TscTicks(o.seconds / 10) : UINT64_MAX;
  bool warming = true;
  uint64_t measured = 0;
  uint64_t last_pong = start;
  while (!Stopping()) {
    const uint64_t t0 = Tsc();
    if (t0 >= end || (o.count > 0 && measured >= o.count)) break;
    const double silence = TscNs(t0 - last_pong) / 1e9;
    if (silence >= (r.pongs == 0 ? kFirstPongTimeout : kSilenceTimeout)) {
      r.silent = true;
      break;
    }
    if (warming && (r.pings >= warmup_pings || t0 >= warmup_end)) {
      warming = false;
    }
    const bool got =
        PingOnce(port, pool, frame_bytes, run, static_cast<uint32_t>(r.pings));
    const uint64_t t1 = Tsc();
    ++r.pings;
    if (!warming) ++measured;
    if (!got) {
      ++r.lost;
      continue;
    }
    ++r.pongs;
    last_pong = t1;
    if (!warming) {
      r.half_rtt.Add(static_cast<int64_t>(TscNs(t1 - t0) / 2));
    }
  }
  return r;
}

void PrintLatency(const Options& o, const Port& port, const PingResult& r) {
  const perf::Histogram& h = r.half_rtt;
  const double min = static_cast<double>(h.min()) / 1e3;
  const double mean = h.mean() / 1e3;
  const double p50 = h.Quantile(0.50) / 1e3;
  const double p99 = h.Quantile(0.99) / 1e3;
  const double p999 = h.Quantile(0.999) / 1e3;
  const double max = static_cast<double>(h.max()) / 1e3;
  if (o.json) {
    Json j = ResultHead(o, port);
    j["iters"] = h.count();
    j["lost"] = r.lost;
    j["busy_poll"] = true;
    j["min_us"] = Fixed(min, 3);
    j["mean_us"] = Fixed(mean, 3);
    j["p50_us"] = Fixed(p50, 3);
    j["p99_us"] = Fixed(p99, 3);
    j["p999_us"] = Fixed(p999, 3);
    j["max_us"] = Fixed(max, 3);
    std::fputs(tools::JsonLine(j).c_str(), stdout);
    return;
  }
  std::printf(
      "dpdk-raw lat on %s: size %u (frames of %u bytes), %llu iterations, "
      "%llu lost, busy-poll\n"
      "  RTT/2 us: min %.2f  mean %.2f  p50 %.2f  p99 %.2f  p99.9 %.2f  "
      "max %.2f\n",
      port.name.c_str(), o.size, o.size + kHeadersBytes,
      static_cast<unsigned long long>(h.count()),
      static_cast<unsigned long long>(r.lost), min, mean, p50, p99, p999, max);
}

}  // namespace

int RunLatency(const Options& o, const Port& port) {
  const uint32_t run = NewRunId();
  Endpoint server = ServerGuess();
  const uint32_t frame_bytes = kHeadersBytes + o.size;
  if (!StartRun(port, run, &server)) return 1;
  rte_mempool* pool = ClientFramePool(o, port, server, kPing, run, "ping",
                                      kPingPoolMbufs, 0x33);
  if (pool == nullptr) return 1;
  const PingResult r = PingPong(o, port, pool, frame_bytes, run);
  if (Stopping()) {
    std::fprintf(stderr, "dpdk-raw: interrupted\n");
    return 1;
  }
  if (r.silent || r.pongs == 0) {
    std::fprintf(stderr,
                 "dpdk-raw: the server on port %s stopped answering: %llu of "
                 "%llu ping(s) answered\n",
                 port.name.c_str(), static_cast<unsigned long long>(r.pongs),
                 static_cast<unsigned long long>(r.pings));
    return 1;
  }
  // Tell the server the run is over (a --once server exits).
  BenchHeader end;
  end.type = kLatEnd;
  end.run = run;
  end.a = r.pings;
  end.b = r.pongs;
  RxFrame ack;
  (void)Exchange(port, Self(port), server, end, kLatEndAck, 0.1, 1, &ack);
  if (r.half_rtt.count() == 0) {
    std::fprintf(stderr, "dpdk-raw: no measured pong (all %llu were warm-up)\n",
                 static_cast<unsigned long long>(r.pongs));
    return 1;
  }
  PrintLatency(o, port, r);
  return 0;
}

}  // namespace braid::dpdkraw

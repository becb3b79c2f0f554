// braid-fabric-probe: a tiny UDP traffic probe for the namespace fabric.
//
//   braid-fabric-probe server --bind IP:PORT --ports K --count N
//       [--idle-ms 1000] [--timeout-ms 20000] [--allow-loss] [--json]
//       [--ready-file PATH]
//   braid-fabric-probe client --dst IP:PORT --ports K --count N
//       [--sport-base 40000] [--size 1000] [--pps 0] [--ect] [--json]
//
// The client sends N datagrams from each of K source ports (sport-base ..
// sport-base+K-1), round robin, optionally paced to --pps datagrams/s in
// total. The server counts per source port, verifies every byte, detects
// duplicates and reordering, measures the one-way delay (both namespaces share
// CLOCK_MONOTONIC) and ECN CE marks, and exits when all K*N arrived or the
// sender has been silent for --idle-ms.
//
// Exit codes: 0 all good; 1 mismatch (loss unless --allow-loss, corruption,
// duplicate, reorder within a port); 2 usage; 3 system error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "braid/time.h"
#include "tools/fabric/port_tally.h"
#include "tools/fabric/probe_packet.h"

namespace braid::fabric {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;
constexpr int kExitSystem = 3;

// Options of both roles, with their defaults.
struct ProbeOptions {
  std::string role;
  sockaddr_in addr{};     // server: bind address; client: destination
  uint32_t ports = 1;     // distinct source ports
  uint32_t count = 1000;  // datagrams per source port
  uint32_t sport_base = 40000;
  uint32_t size = 1000;  // UDP payload bytes
  uint64_t pps = 0;      // total datagrams/s; 0 = as fast as possible
  bool ect = false;      // send with ECT(0)
  bool json = false;
  bool allow_loss = false;
  int64_t idle_ms = 1000;
  int64_t timeout_ms = 20000;
  std::string ready_file;
};

TimeNs Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimeNs(static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec);
}

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "braid-fabric-probe: %s\n"
               "usage: braid-fabric-probe server --bind IP:PORT --ports K "
               "--count N [--idle-ms MS] [--timeout-ms MS] [--allow-loss] "
               "[--json] [--ready-file PATH]\n"
               "       braid-fabric-probe client --dst IP:PORT --ports K "
               "--count N [--sport-base P] [--size BYTES] [--pps R] [--ect] "
               "[--json]\n",
               why.c_str());
  return kExitUsage;
}

// Parses "a.b.c.d:port". The fabric is IPv4-only, and this tool links nothing
// of braid so that it builds while the library is being changed.
bool ParseIpv4Port(absl::string_view text, sockaddr_in* out) {
  size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) return false;
  std::string ip(text.substr(0, colon));
  uint32_t port = 0;
  if (!absl::SimpleAtoi(text.substr(colon + 1), &port) || port == 0 ||
      port > 65535) {
    return false;
  }
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, ip.c_str(), &s.sin_addr) != 1) return false;
  *out = s;
  return true;
}

// Parses argv into `o`; returns an error text, empty on success.
std::string ParseArgs(int argc, char** argv, ProbeOptions* o) {
  if (argc < 2) return "missing role (server or client)";
  o->role = argv[1];
  if (o->role != "server" && o->role != "client") return "unknown role";
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char** out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    const char* v = nullptr;
    auto num = [&](auto* out, uint64_t lo, uint64_t hi) {
      uint64_t n = 0;
      if (!value(&v) || !absl::SimpleAtoi(v, &n) || n < lo || n > hi) {
        return false;
      }
      *out = static_cast<std::remove_reference_t<decltype(*out)>>(n);
      return true;
    };
    bool ok = true;
    if (a == "--bind" || a == "--dst") {
      ok = value(&v);
      if (ok) {
        if (!ParseIpv4Port(v, &o->addr)) {
          return absl::StrCat("bad address ", v, " (want IPv4:PORT)");
        }
      }
    } else if (a == "--ports") {
      ok = num(&o->ports, 1, 4096);
    } else if (a == "--count") {
      ok = num(&o->count, 1, 50000000);
    } else if (a == "--sport-base") {
      ok = num(&o->sport_base, 1, 65535);
    } else if (a == "--size") {
      ok = num(&o->size, kProbeHeaderSize, kProbeMaxSize);
    } else if (a == "--pps") {
      ok = num(&o->pps, 0, 100000000);
    } else if (a == "--idle-ms") {
      ok = num(&o->idle_ms, 1, 3600000);
    } else if (a == "--timeout-ms") {
      ok = num(&o->timeout_ms, 1, 36000000);
    } else if (a == "--ready-file") {
      ok = value(&v);
      if (ok) o->ready_file = v;
    } else if (a == "--ect") {
      o->ect = true;
    } else if (a == "--json") {
      o->json = true;
    } else if (a == "--allow-loss") {
      o->allow_loss = true;
    } else {
      return absl::StrCat("unknown option ", a);
    }
    if (!ok) return absl::StrCat("bad or missing value for ", a);
  }
  if (o->addr.sin_family != AF_INET) return "--bind/--dst IP:PORT is required";
  if (o->sport_base + o->ports - 1 > 65535) return "source ports exceed 65535";
  return "";
}

int SystemError(const char* what) {
  std::fprintf(stderr, "braid-fabric-probe: %s: %s\n", what,
               std::strerror(errno));
  return kExitSystem;
}

// Receiver-wide counters that do not belong to one port.
struct ServerCounters {
  uint64_t invalid[5] = {};      // by ProbeVerdict
  uint64_t stale_run = 0;        // valid datagrams of another client run
  uint64_t unexpected_port = 0;  // from more than --ports source ports
};

void PrintServerReport(const ProbeOptions& o,
                       const std::vector<PortReport>& ports,
                       const ServerCounters& c, TimeNs first, TimeNs last,
                       bool ok) {
  PortReport t;
  t.expected = static_cast<uint64_t>(o.ports) * o.count;
  for (const PortReport& r : ports) {
    t.received += r.received;
    t.duplicates += r.duplicates;
    t.reordered += r.reordered;
    t.out_of_range += r.out_of_range;
    t.ce += r.ce;
    t.bytes += r.bytes;
  }
  t.lost = t.expected - t.received;
  DurationNs span = last - first;
  double rate = (t.received > 1 && span > DurationNs::Zero())
                    ? static_cast<double>(t.bytes) * 8 / span.us()
                    : 0;
  uint64_t invalid = 0;
  for (uint64_t n : c.invalid) invalid += n;
  if (o.json) {
    std::string s =
        absl::StrCat("{\"ok\":", ok ? "true" : "false", ",\"ports\":[");
    for (size_t i = 0; i < ports.size(); ++i) {
      const PortReport& r = ports[i];
      absl::StrAppend(
          &s, i ? "," : "",
          absl::StrFormat(
              "{\"sport\":%d,\"expected\":%d,\"received\":%d,\"lost\":%d,"
              "\"duplicates\":%d,\"reordered\":%d,\"out_of_range\":%d,"
              "\"ce\":%d,\"bytes\":%d,\"delay_us\":{\"min\":%.1f,\"p50\":%.1f,"
              "\"p99\":%.1f,\"max\":%.1f},\"rate_mbps\":%.3f}",
              r.sport, r.expected, r.received, r.lost, r.duplicates,
              r.reordered, r.out_of_range, r.ce, r.bytes, r.delay_min.us(),
              r.delay_p50.us(), r.delay_p99.us(), r.delay_max.us(),
              r.rate_mbps));
    }
    absl::StrAppend(
        &s, "],",
        absl::StrFormat(
            "\"total\":{\"ports_seen\":%d,\"expected\":%d,\"received\":%d,"
            "\"lost\":%d,\"duplicates\":%d,\"reordered\":%d,"
            "\"out_of_range\":%d,\"ce\":%d,\"bytes\":%d,\"rate_mbps\":%.3f},"
            "\"invalid\":{\"too_short\":%d,\"bad_magic\":%d,\"bad_length\":%d,"
            "\"bad_checksum\":%d},\"stale_run\":%d,\"unexpected_port\":%d}",
            ports.size(), t.expected, t.received, t.lost, t.duplicates,
            t.reordered, t.out_of_range, t.ce, t.bytes, rate, c.invalid[1],
            c.invalid[2], c.invalid[3], c.invalid[4], c.stale_run,
            c.unexpected_port));
    std::printf("%s\n", s.c_str());
    return;
  }
  std::printf("%6s %9s %9s %7s %5s %7s %6s %9s %9s %9s %10s\n", "sport",
              "expected", "received", "lost", "dup", "reorder", "ce",
              "d_min_us", "d_p50_us", "d_p99_us", "rate_Mbps");
  for (const PortReport& r : ports) {
    std::printf("%6u %9lu %9lu %7lu %5lu %7lu %6lu %9.1f %9.1f %9.1f %10.2f\n",
                r.sport, r.expected, r.received, r.lost, r.duplicates,
                r.reordered, r.ce, r.delay_min.us(), r.delay_p50.us(),
                r.delay_p99.us(), r.rate_mbps);
  }
  std::printf(
      "total: %zu ports, %lu/%lu received, %lu lost, %lu dup, %lu reordered, "
      "%lu ce, %.2f Mbit/s; invalid %lu, stale %lu, unexpected ports %lu: "
      "%s\n",
      ports.size(), t.received, t.expected, t.lost, t.duplicates, t.reordered,
      t.ce, rate, invalid, c.stale_run, c.unexpected_port,
      ok ? "OK" : "MISMATCH");
}

int RunServer(const ProbeOptions& o) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return SystemError("socket");
  int buf = 32 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
  sockaddr_in sa = o.addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    return SystemError("bind");
  }
  if (!o.ready_file.empty()) {
    FILE* f = std::fopen(o.ready_file.c_str(), "w");
    if (f == nullptr) return SystemError("ready file");
    std::fclose(f);
  }

  constexpr int kBatch = 64;
  std::vector<uint8_t> bufs(static_cast<size_t>(kBatch) * kProbeMaxSize);
  mmsghdr msgs[kBatch];
  iovec iovs[kBatch];
  sockaddr_in from[kBatch];
  alignas(cmsghdr) uint8_t ctrl[kBatch][64];

  absl::flat_hash_map<uint16_t, PortTally> tallies;
  tallies.reserve(o.ports);
  ServerCounters counters;
  bool have_run = false;
  uint32_t run_id = 0;
  uint32_t complete_ports = 0;
  const TimeNs deadline = Now() + DurationNs::Millis(o.timeout_ms);
  TimeNs last_rx = TimeNs::Infinite();  // idle timer armed by the 1st packet
  TimeNs first_data = TimeNs::Infinite(), last_data = TimeNs::Zero();

  while (complete_ports < o.ports) {
    TimeNs now = Now();
    TimeNs wake = Min(deadline, last_rx + DurationNs::Millis(o.idle_ms));
    if (now >= wake) break;
    pollfd p{fd, POLLIN, 0};
    int wait_ms = static_cast<int>((wake - now).ns() / 1000000) + 1;
    int pr = poll(&p, 1, wait_ms);
    if (pr < 0) {
      if (errno == EINTR) continue;
      return SystemError("poll");
    }
    if (pr == 0) continue;
    for (int i = 0; i < kBatch; ++i) {
      iovs[i] = {bufs.data() + static_cast<size_t>(i) * kProbeMaxSize,
                 kProbeMaxSize};
      msgs[i].msg_hdr = {};
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
      msgs[i].msg_hdr.msg_iov = &iovs[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = ctrl[i];
      msgs[i].msg_hdr.msg_controllen = sizeof(ctrl[i]);
    }
    int n = recvmmsg(fd, msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return SystemError("recvmmsg");
    }
    const TimeNs arrived = Now();
    last_rx = arrived;
    for (int i = 0; i < n; ++i) {
      ProbeHeader h;
      ProbeVerdict v = DecodeProbe(
          absl::MakeConstSpan(static_cast<const uint8_t*>(iovs[i].iov_base),
                              msgs[i].msg_len),
          &h);
      if (v != ProbeVerdict::kOk) {
        ++counters.invalid[static_cast<int>(v)];
        continue;
      }
      if (!have_run) {
        have_run = true;
        run_id = h.run_id;
      } else if (h.run_id != run_id) {
        ++counters.stale_run;
        continue;
      }
      bool ce = false;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c != nullptr;
           c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
          ce = (*CMSG_DATA(c) & IPTOS_ECN_MASK) == IPTOS_ECN_CE;
        }
      }
      uint16_t sport = ntohs(from[i].sin_port);
      auto it = tallies.find(sport);
      if (it == tallies.end()) {
        if (tallies.size() >= o.ports) {
          ++counters.unexpected_port;
          continue;
        }
        it = tallies.emplace(sport, PortTally(o.count)).first;
      }
      bool was_complete = it->second.complete();
      it->second.Record(h.seq, msgs[i].msg_len, h.send_time, arrived, ce);
      if (!was_complete && it->second.complete()) ++complete_ports;
      first_data = Min(first_data, arrived);
      last_data = Max(last_data, arrived);
    }
  }
  close(fd);

  std::vector<PortReport> reports;
  for (const auto& [sport, tally] : tallies) {
    reports.push_back(tally.Report(sport));
  }
  std::sort(reports.begin(), reports.end(),
            [](const PortReport& a, const PortReport& b) {
              return a.sport < b.sport;
            });
  bool ok = true;
  uint64_t invalid = 0;
  for (uint64_t x : counters.invalid) invalid += x;
  if (invalid != 0 || counters.unexpected_port != 0) ok = false;
  for (const PortReport& r : reports) {
    if (r.duplicates || r.reordered || r.out_of_range) ok = false;
    if (!o.allow_loss && r.lost) ok = false;
  }
  if (!o.allow_loss && reports.size() != o.ports) ok = false;
  if (first_data.IsInfinite()) first_data = last_data;
  PrintServerReport(o, reports, counters, first_data, last_data, ok);
  return ok ? kExitOk : kExitMismatch;
}

void SleepUntil(TimeNs t) {
  timespec ts{static_cast<time_t>(t.ns() / 1000000000),
              static_cast<long>(t.ns() % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) ==
         EINTR) {
  }
}

int RunClient(const ProbeOptions& o) {
  std::vector<int> fds;
  sockaddr_in dst = o.addr;
  for (uint32_t i = 0; i < o.ports; ++i) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return SystemError("socket");
    int buf = 4 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) != 0) {
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
    }
    if (o.ect) {
      int tos = IPTOS_ECN_ECT0;
      if (setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) != 0) {
        return SystemError("IP_TOS");
      }
    }
    sockaddr_in src{};
    src.sin_family = AF_INET;
    src.sin_port = htons(static_cast<uint16_t>(o.sport_base + i));
    if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0) {
      return SystemError("bind source port");
    }
    if (connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) {
      return SystemError("connect");
    }
    fds.push_back(fd);
  }
  std::vector<uint8_t> buf(o.size);
  ProbeHeader h;
  h.run_id = static_cast<uint32_t>(Now().ns() ^ (getpid() * 2654435761u));
  const DurationNs gap =
      o.pps ? DurationNs(1000000000 / static_cast<int64_t>(o.pps))
            : DurationNs::Zero();
  TimeNs next = Now();
  uint64_t sent = 0, errors = 0;
  const TimeNs start = next;
  for (uint32_t seq = 0; seq < o.count; ++seq) {
    for (uint32_t p = 0; p < o.ports; ++p) {
      if (o.pps) {
        TimeNs now = Now();
        if (next - now > DurationNs::Micros(100)) {
          SleepUntil(next - DurationNs::Micros(50));
        }
        while (Now() < next) {
        }
        next += gap;
      }
      h.port_index = static_cast<uint16_t>(p);
      h.seq = seq;
      h.send_time = Now();
      EncodeProbe(h, absl::MakeSpan(buf));
      for (int attempt = 0;; ++attempt) {
        if (send(fds[p], buf.data(), buf.size(), 0) >= 0) {
          ++sent;
          break;
        }
        if ((errno == ENOBUFS || errno == EAGAIN || errno == EINTR) &&
            attempt < 1000) {
          SleepUntil(Now() + DurationNs::Micros(20));
          continue;
        }
        ++errors;  // e.g. ECONNREFUSED from an ICMP error: the probe goes on
        break;
      }
    }
  }
  const DurationNs took = Now() - start;
  for (int fd : fds) close(fd);
  if (o.json) {
    std::printf(
        "{\"sent\":%lu,\"errors\":%lu,\"ports\":%u,\"sport_base\":%u,"
        "\"count\":%u,\"size\":%u,\"seconds\":%.6f}\n",
        sent, errors, o.ports, o.sport_base, o.count, o.size, took.seconds());
  } else {
    std::printf(
        "sent %lu datagrams of %u bytes from ports %u..%u in %.3f s "
        "(%lu errors)\n",
        sent, o.size, o.sport_base, o.sport_base + o.ports - 1, took.seconds(),
        errors);
  }
  return errors ? kExitMismatch : kExitOk;
}

}  // namespace
}  // namespace braid::fabric

int main(int argc, char** argv) {
  braid::fabric::ProbeOptions o;
  std::string err = braid::fabric::ParseArgs(argc, argv, &o);
  if (!err.empty()) return braid::fabric::Usage(err);
  return o.role == "server" ? braid::fabric::RunServer(o)
                            : braid::fabric::RunClient(o);
}

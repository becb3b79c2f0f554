#include "bench/udp_blast/blast_server.h"

#include <errno.h>
#include <netinet/udp.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "backend/udp/udp_sockaddr.h"

namespace braid::blast {
namespace {

constexpr size_t kBufSize = 65536;
constexpr size_t kCtrlSize = 64;

struct RunStats {
  uint32_t run = 0;
  bool active = false;
  uint64_t datagrams = 0;
  uint64_t bytes = 0;
  uint64_t gro_buffers = 0;
  int64_t first_ns = 0;
  int64_t last_ns = 0;
};

void Reply(int fd, const sockaddr_storage& to, socklen_t to_len,
           const Header& h) {
  (void)sendto(fd, &h, sizeof(h), 0, reinterpret_cast<const sockaddr*>(&to),
               to_len);
}

void PrintRun(const Options& o, const RunStats& s, const Header& end) {
  const double secs = static_cast<double>(s.last_ns - s.first_ns) / 1e9;
  const double gbps =
      secs > 0 ? static_cast<double>(s.bytes) * 8 / secs / 1e9 : 0;
  const double pps = secs > 0 ? static_cast<double>(s.datagrams) / secs : 0;
  if (o.json) {
    std::printf(
        "{\"role\":\"server\",\"run\":%u,\"sent\":%llu,\"received\":%llu,"
        "\"bytes\":%llu,\"seconds\":%.6f,\"gbps\":%.4f,\"pps\":%.0f,"
        "\"gro_buffers\":%llu}\n",
        s.run, static_cast<unsigned long long>(end.a),
        static_cast<unsigned long long>(s.datagrams),
        static_cast<unsigned long long>(s.bytes), secs, gbps, pps,
        static_cast<unsigned long long>(s.gro_buffers));
  } else {
    std::printf(
        "run %u: received %llu of %llu datagrams, %llu bytes in %.3f s: "
        "%.3f Gbit/s, %.0f datagrams/s (%llu GRO buffers)\n",
        s.run, static_cast<unsigned long long>(s.datagrams),
        static_cast<unsigned long long>(end.a),
        static_cast<unsigned long long>(s.bytes), secs, gbps, pps,
        static_cast<unsigned long long>(s.gro_buffers));
  }
  std::fflush(stdout);
}

// One line per finished lat run: what this server echoed of it and what the
// client's kLatEnd says it sent and got back.
void PrintLatRun(const Options& o, uint64_t echoed, const Header& end) {
  if (o.json) {
    std::printf(
        "{\"role\":\"server\",\"mode\":\"lat\",\"run\":%u,\"echoed\":%llu,"
        "\"pings\":%llu,\"pongs\":%llu}\n",
        end.run, static_cast<unsigned long long>(echoed),
        static_cast<unsigned long long>(end.a),
        static_cast<unsigned long long>(end.b));
  } else {
    std::printf(
        "run %u (lat): echoed %llu pings; the client sent %llu and got %llu "
        "pongs\n",
        end.run, static_cast<unsigned long long>(echoed),
        static_cast<unsigned long long>(end.a),
        static_cast<unsigned long long>(end.b));
  }
  std::fflush(stdout);
}

}  // namespace

int RunServer(const Options& o) {
  const int fd = OpenUdpSocket(o.addr, /*bind_it=*/true, o.sndbuf, o.rcvbuf,
                               /*nonblocking=*/false);
  const bool gro_allowed = o.gro;
  auto set_gro = [&](bool on) {
    int v = on && gro_allowed ? 1 : 0;
    return setsockopt(fd, IPPROTO_UDP, UDP_GRO, &v, sizeof(v)) == 0 && v;
  };
  bool gro = set_gro(true);
  if (!o.json) {
    std::printf("udp-blast server on %s (GRO %s)\n", o.addr.ToString().c_str(),
                gro ? "on" : "off");
    std::fflush(stdout);
  }

  const size_t burst = static_cast<size_t>(o.burst);
  std::vector<uint8_t> data(burst * kBufSize);
  std::vector<mmsghdr> msgs(burst);
  std::vector<iovec> iov(burst);
  std::vector<sockaddr_storage> addrs(burst);
  std::vector<uint8_t> ctrl(burst * kCtrlSize);
  // Echo batch for pings: points into the receive buffers.
  std::vector<mmsghdr> echo(burst);
  std::vector<iovec> echo_iov(burst);

  RunStats stats;
  Header last_report;  // answer to repeated ENDs of the finished run
  bool have_report = false;
  // Pings echoed of the latest lat run (the run id of the latest ping), and
  // the latest lat run that ended (its repeated kLatEnds are only acked).
  uint32_t ping_run = 0;
  uint64_t pings_echoed = 0;
  uint32_t lat_ended_run = 0;
  bool have_lat_end = false;
  for (;;) {
    for (size_t j = 0; j < burst; ++j) {
      iov[j] = {&data[j * kBufSize], kBufSize};
      msghdr& h = msgs[j].msg_hdr;
      h = {};
      h.msg_name = &addrs[j];
      h.msg_namelen = sizeof(sockaddr_storage);
      h.msg_iov = &iov[j];
      h.msg_iovlen = 1;
      h.msg_control = &ctrl[j * kCtrlSize];
      h.msg_controllen = kCtrlSize;
    }
    const int n =
        recvmmsg(fd, msgs.data(), static_cast<unsigned>(burst),
                 o.busy_poll ? MSG_DONTWAIT : MSG_WAITFORONE, nullptr);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      std::perror("udp-blast: recvmmsg");
      return 1;
    }
    const int64_t now = NowNs();
    size_t nechos = 0;
    for (int j = 0; j < n; ++j) {
      msghdr& h = msgs[j].msg_hdr;
      const uint32_t len = msgs[j].msg_len;
      if (len < sizeof(Header)) continue;
      Header hd;
      std::memcpy(&hd, iov[j].iov_base, sizeof(hd));
      if (hd.magic != Header::kMagic) continue;
      uint32_t seg = 0;
      for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
          int v;
          std::memcpy(&v, CMSG_DATA(c), sizeof(v));
          seg = v > 0 ? static_cast<uint32_t>(v) : 0;
        }
      }
      switch (hd.type) {
        case kData: {
          if (have_report && hd.run == last_report.run) break;  // straggler
          if (!stats.active || hd.run != stats.run) {
            stats = RunStats{};
            stats.run = hd.run;
            stats.active = true;
          }
          if (stats.datagrams == 0) stats.first_ns = now;
          stats.last_ns = now;
          const uint64_t count =
              seg > 0 && seg < len ? (len + seg - 1) / seg : 1;
          stats.datagrams += count;
          stats.bytes += len;
          if (count > 1) ++stats.gro_buffers;
          break;
        }
        case kStart: {
          stats = RunStats{};
          stats.run = hd.run;
          stats.active = true;
          gro = set_gro((hd.flags & Header::kFlagGro) != 0);
          Header ack;
          ack.type = kStartAck;
          ack.run = hd.run;
          ack.flags = gro ? Header::kFlagGro : 0;
          Reply(fd, addrs[j], h.msg_namelen, ack);
          break;
        }
        case kEnd: {
          if (have_report && hd.run == last_report.run) {
            Reply(fd, addrs[j], h.msg_namelen, last_report);
            break;
          }
          Header rep;
          rep.type = kReport;
          rep.run = hd.run;
          if (!stats.active || stats.run != hd.run) {
            stats = RunStats{};  // nothing of this run arrived
            stats.run = hd.run;
          }
          rep.a = stats.datagrams;
          rep.b = stats.bytes;
          rep.c = static_cast<uint64_t>(stats.last_ns - stats.first_ns);
          rep.d = stats.gro_buffers;
          rep.flags = gro ? Header::kFlagGro : 0;
          Reply(fd, addrs[j], h.msg_namelen, rep);
          last_report = rep;
          have_report = true;
          PrintRun(o, stats, hd);
          stats = RunStats{};
          if (o.once) {
            close(fd);
            return 0;
          }
          break;
        }
        case kPing: {
          if (pings_echoed == 0 || hd.run != ping_run) {
            ping_run = hd.run;
            pings_echoed = 0;
          }
          ++pings_echoed;
          // Echo in place (only the type changes), batched per recvmmsg.
          uint8_t* p = static_cast<uint8_t*>(iov[j].iov_base);
          p[offsetof(Header, type)] = kPong;
          echo_iov[nechos] = {p, seg > 0 && seg < len ? seg : len};
          msghdr& e = echo[nechos].msg_hdr;
          e = {};
          e.msg_name = &addrs[j];
          e.msg_namelen = h.msg_namelen;
          e.msg_iov = &echo_iov[nechos];
          e.msg_iovlen = 1;
          ++nechos;
          break;
        }
        case kLatEnd: {
          Header ack;
          ack.type = kLatEndAck;
          ack.run = hd.run;
          Reply(fd, addrs[j], h.msg_namelen, ack);
          if (have_lat_end && hd.run == lat_ended_run) break;  // a repeat
          lat_ended_run = hd.run;
          have_lat_end = true;
          PrintLatRun(o, hd.run == ping_run ? pings_echoed : 0, hd);
          if (o.once) {
            close(fd);
            return 0;
          }
          break;
        }
        default:
          break;
      }
    }
    size_t done = 0;
    while (done < nechos) {
      int r =
          sendmmsg(fd, &echo[done], static_cast<unsigned>(nechos - done), 0);
      if (r <= 0) break;
      done += static_cast<size_t>(r);
    }
  }
}

}  // namespace braid::blast

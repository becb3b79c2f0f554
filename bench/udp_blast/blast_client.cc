#include "bench/udp_blast/blast_client.h"

#include <errno.h>
#include <netinet/udp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backend/udp/udp_sockaddr.h"

namespace braid::blast {
namespace {

constexpr uint32_t kMaxGsoSegments = 64;
constexpr uint32_t kMaxGsoBytes = 65507;

// lat: a ping without its pong for this long is lost (the run goes on).
constexpr int64_t kPingTimeoutNs = 1000000000;
// lat: after a failed send, how long to look for a late pong.
constexpr int64_t kSendFailWaitNs = 10000000;
// lat: no pong at all this long after the start: nobody answers there.
constexpr int64_t kFirstPongTimeoutNs = 3000000000;
// lat: no pong for this long after some came back: the server went away.
constexpr int64_t kSilenceTimeoutNs = 5000000000;

NetAddr AnyOf(const NetAddr& peer) {
  NetAddr a;
  a.family = peer.family;
  return a;
}

struct Peer {
  sockaddr_storage ss;
  socklen_t len = 0;
};

Peer PeerOf(const NetAddr& a) {
  Peer p;
  p.len = backend::ToSockaddr(
      a, a.family == NetAddr::Family::kIpv6 ? AF_INET6 : AF_INET, &p.ss);
  return p;
}

// Waits up to timeout_ms for a datagram of `type` and `run` on fd; returns
// true and fills *out. Other datagrams are discarded.
bool Await(int fd, uint8_t type, uint32_t run, int timeout_ms, Header* out) {
  const int64_t deadline = NowNs() + int64_t{timeout_ms} * 1000000;
  uint8_t buf[65536];
  for (;;) {
    const int64_t left_ms = (deadline - NowNs()) / 1000000;
    if (left_ms < 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left_ms)) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < static_cast<ssize_t>(sizeof(Header))) continue;
    Header h;
    std::memcpy(&h, buf, sizeof(h));
    if (h.magic == Header::kMagic && h.type == type && h.run == run) {
      *out = h;
      return true;
    }
  }
}

size_t MessageBytes(const msghdr& h) {
  size_t n = 0;
  for (size_t i = 0; i < h.msg_iovlen; ++i) n += h.msg_iov[i].iov_len;
  return n;
}

void Send(int fd, const Peer& to, const Header& h) {
  (void)sendto(fd, &h, sizeof(h), 0, reinterpret_cast<const sockaddr*>(&to.ss),
               to.len);
}

}  // namespace

int RunBandwidth(const Options& o) {
  const Peer peer = PeerOf(o.addr);
  std::vector<int> fds;
  for (int i = 0; i < o.entropies; ++i) {
    fds.push_back(OpenUdpSocket(AnyOf(o.addr), /*bind_it=*/true, o.sndbuf,
                                1 << 20, /*nonblocking=*/false));
  }
  const uint32_t run = static_cast<uint32_t>(NowNs() ^ (getpid() << 16));

  // Start: the server resets its counters and sets GRO as asked.
  Header start;
  start.type = kStart;
  start.run = run;
  start.flags = o.gro ? Header::kFlagGro : 0;
  Header ack;
  bool started = false;
  for (int i = 0; i < 25 && !started; ++i) {
    Send(fds[0], peer, start);
    started = Await(fds[0], kStartAck, run, 200, &ack);
  }
  if (!started) {
    std::fprintf(stderr, "udp-blast: no answer from server %s\n",
                 o.addr.ToString().c_str());
    return 1;
  }
  const bool server_gro = (ack.flags & Header::kFlagGro) != 0;

  // One burst of datagrams, contiguous, each with its own header.
  const size_t burst = static_cast<size_t>(o.burst);
  const uint32_t size = o.size;
  std::vector<uint8_t> buf(burst * size, 0x5a);
  for (size_t k = 0; k < burst; ++k) {
    Header h;
    h.type = kData;
    h.run = run;
    std::memcpy(&buf[k * size], &h, sizeof(h));
  }
  // --copy-from: the application's data, copied into the burst per send.
  // --iov-from: the same data left in place, a second iovec per datagram.
  const size_t payload = size - sizeof(Header);
  const bool split = o.iov_from > 0;
  std::vector<uint8_t> src(split ? o.iov_from : o.copy_from);
  for (size_t k = 0; k < src.size(); ++k) src[k] = static_cast<uint8_t>(k * 7);
  size_t src_off = 0;
  std::vector<mmsghdr> msgs(burst);
  std::vector<iovec> iov(split ? 2 * burst : burst);
  std::vector<uint8_t> ctrl(burst * CMSG_SPACE(sizeof(uint16_t)));
  bool gso = o.gso;
  uint64_t sent = 0, sent_bytes = 0, send_errors = 0, syscalls = 0;
  uint32_t seq = 0;
  size_t next_fd = 0;
  const int64_t t0 = NowNs();
  const int64_t deadline =
      o.seconds > 0 ? t0 + static_cast<int64_t>(o.seconds * 1e9) : INT64_MAX;
  while ((o.count == 0 || sent < o.count) && NowNs() < deadline) {
    size_t pkts = burst;
    if (o.count != 0) pkts = std::min<uint64_t>(pkts, o.count - sent);
    for (size_t k = 0; k < pkts; ++k, ++seq) {
      std::memcpy(&buf[k * size + offsetof(Header, seq)], &seq, sizeof(seq));
      if (src.empty() || payload == 0) continue;
      if (src_off + payload > src.size()) src_off = 0;
      if (split) {
        iov[2 * k] = {&buf[k * size], sizeof(Header)};
        iov[2 * k + 1] = {&src[src_off], payload};
      } else {
        std::memcpy(&buf[k * size + sizeof(Header)], &src[src_off], payload);
      }
      src_off += payload;
    }
    const uint32_t per_msg =
        gso ? std::min(kMaxGsoSegments, kMaxGsoBytes / size) : 1;
    size_t nmsg = 0;
    for (size_t k = 0; k < pkts; k += per_msg, ++nmsg) {
      const size_t cnt = std::min<size_t>(per_msg, pkts - k);
      msghdr& h = msgs[nmsg].msg_hdr;
      h = {};
      h.msg_name = const_cast<sockaddr_storage*>(&peer.ss);
      h.msg_namelen = peer.len;
      if (split && payload > 0) {
        h.msg_iov = &iov[2 * k];
        h.msg_iovlen = 2 * cnt;
      } else {
        iov[nmsg] = {&buf[k * size], cnt * size};
        h.msg_iov = &iov[nmsg];
        h.msg_iovlen = 1;
      }
      if (cnt > 1) {
        uint8_t* c = &ctrl[nmsg * CMSG_SPACE(sizeof(uint16_t))];
        h.msg_control = c;
        h.msg_controllen = CMSG_SPACE(sizeof(uint16_t));
        cmsghdr* cm = CMSG_FIRSTHDR(&h);
        cm->cmsg_level = SOL_UDP;
        cm->cmsg_type = UDP_SEGMENT;
        cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        const uint16_t seg = static_cast<uint16_t>(size);
        std::memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
      }
    }
    const int fd = fds[next_fd];
    next_fd = (next_fd + 1) % fds.size();
    size_t m = 0;
    while (m < nmsg) {
      ++syscalls;
      const int r = sendmmsg(fd, &msgs[m], static_cast<unsigned>(nmsg - m), 0);
      if (r > 0) {
        for (size_t q = m; q < m + static_cast<size_t>(r); ++q) {
          const size_t bytes = MessageBytes(msgs[q].msg_hdr);
          sent += bytes / size;
          sent_bytes += bytes;
        }
        m += static_cast<size_t>(r);
        continue;
      }
      if (errno == EINTR) continue;
      if (gso && (errno == EIO || errno == EINVAL)) {
        std::fprintf(stderr,
                     "udp-blast: GSO refused (%s), continuing without\n",
                     strerror(errno));
        gso = false;
        seq -= static_cast<uint32_t>(pkts);  // resend this burst
        break;
      }
      ++send_errors;  // e.g. ENOBUFS: the datagrams of this message are lost
      ++m;
    }
  }
  const int64_t t1 = NowNs();

  Header end;
  end.type = kEnd;
  end.run = run;
  end.a = sent;
  end.b = sent_bytes;
  Header rep;
  bool reported = false;
  for (int i = 0; i < 50 && !reported; ++i) {
    Send(fds[0], peer, end);
    reported = Await(fds[0], kReport, run, 200, &rep);
  }
  for (int fd : fds) close(fd);
  if (!reported) {
    std::fprintf(stderr, "udp-blast: no report from server\n");
    return 1;
  }
  const double send_secs = static_cast<double>(t1 - t0) / 1e9;
  const double rx_secs = static_cast<double>(rep.c) / 1e9;
  const double gbps =
      rx_secs > 0 ? static_cast<double>(rep.b) * 8 / rx_secs / 1e9 : 0;
  const double pps = rx_secs > 0 ? static_cast<double>(rep.a) / rx_secs : 0;
  const double loss =
      sent > 0 ? 1.0 - static_cast<double>(rep.a) / static_cast<double>(sent)
               : 0;
  if (o.json) {
    std::printf(
        "{\"tool\":\"udp-blast\",\"mode\":\"bw\",\"size\":%u,\"gso\":%s,"
        "\"gro\":%s,\"burst\":%d,\"sockets\":%d,\"sent\":%llu,"
        "\"received\":%llu,\"received_bytes\":%llu,\"loss\":%.6f,\"send_"
        "seconds\":%.6f,"
        "\"recv_seconds\":%.6f,\"gbps\":%.4f,\"pps\":%.0f,"
        "\"send_gbps\":%.4f,\"send_syscalls\":%llu,\"send_errors\":%llu,"
        "\"gro_buffers\":%llu,\"copy_from\":%llu,\"iov_from\":%llu}\n",
        size, gso ? "true" : "false", server_gro ? "true" : "false", o.burst,
        o.entropies, static_cast<unsigned long long>(sent),
        static_cast<unsigned long long>(rep.a),
        static_cast<unsigned long long>(rep.b), loss, send_secs, rx_secs, gbps,
        pps,
        send_secs > 0 ? static_cast<double>(sent_bytes) * 8 / send_secs / 1e9
                      : 0,
        static_cast<unsigned long long>(syscalls),
        static_cast<unsigned long long>(send_errors),
        static_cast<unsigned long long>(rep.d),
        static_cast<unsigned long long>(o.copy_from),
        static_cast<unsigned long long>(o.iov_from));
  } else {
    std::printf(
        "udp-blast bw to %s: size %u, GSO %s, GRO %s, burst %d, %d socket(s)\n"
        "  sent      %llu datagrams in %.3f s (%llu sendmmsg calls, %llu "
        "errors)\n"
        "  received  %llu datagrams (loss %.3f%%) in %.3f s\n"
        "  goodput   %.3f Gbit/s, %.0f datagrams/s\n",
        o.addr.ToString().c_str(), size, gso ? "on" : "off",
        server_gro ? "on" : "off", o.burst, o.entropies,
        static_cast<unsigned long long>(sent), send_secs,
        static_cast<unsigned long long>(syscalls),
        static_cast<unsigned long long>(send_errors),
        static_cast<unsigned long long>(rep.a), loss * 100, rx_secs, gbps, pps);
  }
  return 0;
}

int RunLatency(const Options& o) {
  const Peer peer = PeerOf(o.addr);
  const std::string where = o.addr.ToString();
  const int fd = OpenUdpSocket(AnyOf(o.addr), /*bind_it=*/true, 1 << 20,
                               1 << 20, /*nonblocking=*/true);
  const uint32_t run = static_cast<uint32_t>(NowNs() ^ (getpid() << 16));
  if (o.connect &&
      connect(fd, reinterpret_cast<const sockaddr*>(&peer.ss), peer.len) != 0) {
    std::perror("udp-blast: connect");
    close(fd);
    return 1;
  }
  // With --connect the kernel reports the ICMP port unreachable of a
  // ping as ECONNREFUSED on the next send or recv: nobody will answer.
  auto refused = [&]() {
    std::fprintf(stderr,
                 "udp-blast: nothing listens on %s (connection refused)\n",
                 where.c_str());
    close(fd);
    return 1;
  };
  std::vector<uint8_t> buf(o.size, 0x33);
  std::vector<uint8_t> in(65536);
  // -n: min(1000, n/10) warm-up pings, then n measured ones. -D: pings for
  // that long, the first 10% of it (at most 1000 pings) warm-up. Both: the
  // first limit reached ends the run.
  const int64_t start = NowNs();
  const int64_t end_ns =
      o.seconds > 0 ? start + static_cast<int64_t>(o.seconds * 1e9) : INT64_MAX;
  const uint64_t warmup_pings =
      o.count > 0 ? std::min<uint64_t>(1000, o.count / 10) : 1000;
  const int64_t warmup_end =
      o.seconds > 0 ? start + static_cast<int64_t>(o.seconds * 1e8) : INT64_MAX;
  std::vector<double> half_rtt_us;
  half_rtt_us.reserve(std::min<uint64_t>(o.count, 1 << 20));
  uint64_t pings = 0, measured = 0, pongs = 0, lost = 0;
  bool warming = true;
  int64_t last_pong = start;  // the silence timer runs from the start
  int last_send_errno = 0;
  // The run ends without an answer for `silence` ns: says so, returns 1.
  auto silent = [&](int64_t silence) {
    const char* err_sep = last_send_errno != 0 ? "; last send error: " : "";
    const char* err = last_send_errno != 0 ? strerror(last_send_errno) : "";
    if (pongs == 0) {
      std::fprintf(stderr,
                   "udp-blast: no pong from server %s: %llu ping(s) in %.1f s "
                   "went unanswered%s%s\n",
                   where.c_str(), static_cast<unsigned long long>(pings),
                   static_cast<double>(silence) / 1e9, err_sep, err);
    } else {
      std::fprintf(stderr,
                   "udp-blast: server %s stopped answering: no pong for %.1f s "
                   "after %llu pong(s)%s%s\n",
                   where.c_str(), static_cast<double>(silence) / 1e9,
                   static_cast<unsigned long long>(pongs), err_sep, err);
    }
    close(fd);
    return 1;
  };
  for (;;) {
    const int64_t t0 = NowNs();
    if (t0 >= end_ns || (o.count > 0 && measured >= o.count)) break;
    const int64_t silence = t0 - last_pong;
    if (silence >= (pongs == 0 ? kFirstPongTimeoutNs : kSilenceTimeoutNs)) {
      return silent(silence);
    }
    if (warming && (pings >= warmup_pings || t0 >= warmup_end)) {
      warming = false;
    }
    Header h;
    h.type = kPing;
    h.run = run;
    h.seq = static_cast<uint32_t>(pings);
    h.c = static_cast<uint64_t>(t0);
    std::memcpy(buf.data(), &h, sizeof(h));
    ++pings;
    if (!warming) ++measured;
    const ssize_t sent =
        o.connect
            ? send(fd, buf.data(), buf.size(), 0)
            : sendto(fd, buf.data(), buf.size(), 0,
                     reinterpret_cast<const sockaddr*>(&peer.ss), peer.len);
    if (sent < 0 && errno == ECONNREFUSED) return refused();
    if (sent < 0) last_send_errno = errno;
    // A ping is lost after 1 s without its pong. After a failed send wait
    // only briefly (for a late pong), so the loop does not spin.
    bool got = false;
    const int64_t deadline = t0 + (sent < 0 ? kSendFailWaitNs : kPingTimeoutNs);
    while (!got && NowNs() < deadline) {
      if (!o.busy_poll) {
        pollfd p{fd, POLLIN, 0};
        (void)poll(&p, 1, 100);
      }
      const ssize_t n = recv(fd, in.data(), in.size(), MSG_DONTWAIT);
      if (n < 0 && errno == ECONNREFUSED) return refused();
      if (n < static_cast<ssize_t>(sizeof(Header))) continue;
      Header r;
      std::memcpy(&r, in.data(), sizeof(r));
      got = r.magic == Header::kMagic && r.type == kPong && r.run == run &&
            r.seq == h.seq;
    }
    const int64_t t1 = NowNs();
    if (!got) {
      ++lost;
      continue;
    }
    ++pongs;
    last_pong = t1;
    if (!warming) half_rtt_us.push_back(static_cast<double>(t1 - t0) / 2e3);
  }
  if (pongs == 0) return silent(NowNs() - start);  // e.g. a short -D
  // Tell the server the run is over (a --once server exits). Older servers
  // do not answer kLatEnd; a few short tries bound the wait.
  Header end;
  end.type = kLatEnd;
  end.run = run;
  end.a = pings;
  end.b = pongs;
  Header ack;
  for (int i = 0; i < 5; ++i) {
    if (o.connect) {
      (void)send(fd, &end, sizeof(end), 0);
    } else {
      Send(fd, peer, end);
    }
    if (Await(fd, kLatEndAck, run, 100, &ack)) break;
  }
  close(fd);
  if (half_rtt_us.empty()) {
    std::fprintf(stderr,
                 "udp-blast: no measured pong from server %s (all %llu were "
                 "warm-up)\n",
                 where.c_str(), static_cast<unsigned long long>(pongs));
    return 1;
  }
  double sum = 0;
  for (double v : half_rtt_us) sum += v;
  const double mean = sum / static_cast<double>(half_rtt_us.size());
  const double p50 = Quantile(half_rtt_us, 0.50);
  const double p99 = Quantile(half_rtt_us, 0.99);
  const double p999 = Quantile(half_rtt_us, 0.999);
  const double mn = half_rtt_us.front();
  const double mx = half_rtt_us.back();
  if (o.json) {
    std::printf(
        "{\"tool\":\"udp-blast\",\"mode\":\"lat\",\"size\":%u,\"iters\":%zu,"
        "\"lost\":%llu,\"busy_poll\":%s,\"connect\":%s,\"min_us\":%.3f,"
        "\"mean_us\":%.3f,"
        "\"p50_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,\"max_us\":%.3f}\n",
        o.size, half_rtt_us.size(), static_cast<unsigned long long>(lost),
        o.busy_poll ? "true" : "false", o.connect ? "true" : "false", mn, mean,
        p50, p99, p999, mx);
  } else {
    std::printf(
        "udp-blast lat to %s: size %u, %zu iterations, %llu lost, %s\n"
        "  RTT/2 us: min %.2f  mean %.2f  p50 %.2f  p99 %.2f  p99.9 %.2f  "
        "max %.2f\n",
        o.addr.ToString().c_str(), o.size, half_rtt_us.size(),
        static_cast<unsigned long long>(lost),
        o.busy_poll ? "busy-poll" : "poll()", mn, mean, p50, p99, p999, mx);
  }
  return 0;
}

}  // namespace braid::blast

#include "bench/udp_blast/blast_common.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "backend/udp/udp_sockaddr.h"

namespace braid::blast {

std::string Usage() {
  return R"(usage:
  udp-blast server [-b ADDR:PORT] [--no-gro] [--busy-poll] [--once] [--json]
  udp-blast client -c ADDR:PORT bw  [-s SIZE] [-D SECONDS | -n COUNT]
                   [--gso|--no-gso] [--gro|--no-gro] [-B BURST] [-e SOCKETS]
                   [--copy-from BYTES | --iov-from BYTES] [--busy-poll]
                   [--json]
  udp-blast client -c ADDR:PORT lat [-s SIZE] [-n ITERS | -D SECONDS]
                   [--busy-poll] [--connect] [--json]
  udp-blast -h|--help

  bw   blast datagrams as fast as sendmmsg (and UDP GSO) allow; the server
       reports what it received: goodput (UDP payload) and datagrams/s.
  lat  ping-pong, one datagram in flight; prints RTT/2 percentiles. A ping
       without a pong for 1 s is lost; the run fails if no pong comes back
       in the first 3 s, or for 5 s later on, and with --connect as soon
       as the server's host refuses (nothing listens on ADDR:PORT).
  -b   server bind address (default 0.0.0.0:9000; [::]:9000 for IPv6)
  -s   datagram size in bytes incl. the 48-byte blast header, 48..65507
       (default 1472 for bw, 64 for lat)
  -n   bw: datagrams to send; lat: measured ping-pongs after up to 1000
       warm-up ones (default 10000); at least 1
  -D   bw: seconds to blast (default 5); lat: seconds of ping-pong, the
       first 10% (at most 1000 pings) warm-up. With -n too, the first limit
       reached ends the run.
  --once  (server) exit after one bw or lat run
  -B   datagrams per sendmmsg/recvmmsg call (default 64, like braid)
  -e   number of client source sockets, used round-robin per call (default 1)
  --gro/--no-gro on the client asks the server to turn UDP_GRO on/off.
  --copy-from BYTES  (bw) before sending, copy each datagram's payload from
       a BYTES-sized source buffer, in turn (suffix K/M: KiB/MiB): the
       user-space copy a transport with per-datagram headers makes.
  --iov-from BYTES  (bw) no copy: each datagram goes to the kernel as two
       iovecs, its header and its payload taken in place from a BYTES-sized
       source buffer, in turn: the zero-copy layout of a transport with
       per-datagram headers (one GSO send = 2 iovecs per datagram).
)";
}

namespace {

absl::StatusOr<std::string> Value(int argc, char** argv, int* i) {
  if (*i + 1 >= argc) {
    return absl::InvalidArgumentError(absl::StrCat(argv[*i], " needs a value"));
  }
  return std::string(argv[++*i]);
}

}  // namespace

absl::StatusOr<Options> ParseArgs(int argc, char** argv) {
  Options o;
  if (argc < 2) return absl::InvalidArgumentError("missing server|client");
  o.role = argv[1];
  if (o.role == "-h" || o.role == "--help") {
    o.help = true;
    return o;
  }
  if (o.role != "server" && o.role != "client") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown role '", o.role, "'"));
  }
  std::string addr_text = o.role == "server" ? "0.0.0.0:9000" : "";
  // -s and -n as given (signed, so "-1" gets the range message below).
  int64_t size_arg = -1;
  int64_t count_arg = -1;
  bool size_set = false;
  bool count_set = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto need_num = [&](auto* out) -> absl::Status {
      absl::StatusOr<std::string> v = Value(argc, argv, &i);
      if (!v.ok()) return v.status();
      if (!absl::SimpleAtoi(*v, out)) {
        return absl::InvalidArgumentError(
            absl::StrCat(a, ": '", *v, "' is not a number"));
      }
      return absl::OkStatus();
    };
    absl::Status s;
    if (a == "bw" || a == "lat") {
      o.mode = a;
    } else if (a == "-b" || a == "-c") {
      absl::StatusOr<std::string> v = Value(argc, argv, &i);
      if (!v.ok()) return v.status();
      addr_text = *v;
    } else if (a == "-s") {
      s = need_num(&size_arg);
      size_set = true;
    } else if (a == "-D") {
      absl::StatusOr<std::string> v = Value(argc, argv, &i);
      if (!v.ok()) return v.status();
      // !(x > 0) also refuses NaN; the bound keeps nanoseconds in int64.
      if (!absl::SimpleAtod(*v, &o.seconds) || !(o.seconds > 0) ||
          o.seconds > 1e9) {
        return absl::InvalidArgumentError(
            absl::StrCat("-D: '", *v, "' is not seconds in (0, 1e9]"));
      }
    } else if (a == "-n") {
      s = need_num(&count_arg);
      count_set = true;
    } else if (a == "-B") {
      s = need_num(&o.burst);
    } else if (a == "-e") {
      s = need_num(&o.entropies);
    } else if (a == "--gso") {
      o.gso = true;
    } else if (a == "--no-gso") {
      o.gso = false;
    } else if (a == "--gro") {
      o.gro = true;
    } else if (a == "--no-gro") {
      o.gro = false;
    } else if (a == "--copy-from" || a == "--iov-from") {
      absl::StatusOr<std::string> v = Value(argc, argv, &i);
      if (!v.ok()) return v.status();
      std::string t = *v;
      uint64_t unit = 1;
      if (!t.empty() && (t.back() == 'K' || t.back() == 'k')) unit = 1 << 10;
      if (!t.empty() && (t.back() == 'M' || t.back() == 'm')) unit = 1 << 20;
      if (unit > 1) t.pop_back();
      uint64_t bytes = 0;
      if (!absl::SimpleAtoi(t, &bytes) || bytes > (1u << 30)) {
        return absl::InvalidArgumentError(
            absl::StrCat(a, ": '", *v, "' is not a size <= 1G"));
      }
      (a == "--copy-from" ? o.copy_from : o.iov_from) = bytes * unit;
    } else if (a == "--busy-poll") {
      o.busy_poll = true;
    } else if (a == "--connect") {
      o.connect = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--once") {
      o.once = true;
    } else if (a == "-h" || a == "--help") {
      Options help;
      help.help = true;
      return help;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown argument '", a, "'"));
    }
    if (!s.ok()) return s;
  }
  if (addr_text.empty()) {
    return absl::InvalidArgumentError("client needs -c ADDR:PORT");
  }
  absl::StatusOr<NetAddr> addr = NetAddr::Parse(addr_text);
  if (!addr.ok()) return addr.status();
  o.addr = *addr;
  // Both modes put a whole blast header in every datagram (bw: data, lat:
  // ping), so both need at least sizeof(Header) bytes.
  if (size_set) {
    if (size_arg < int64_t{sizeof(Header)} || size_arg > 65507) {
      return absl::InvalidArgumentError(absl::StrCat(
          "-s must be ", sizeof(Header), "..65507 (got ", size_arg, ")"));
    }
    o.size = static_cast<uint32_t>(size_arg);
  } else {
    o.size = o.mode == "lat" ? 64 : 1472;
  }
  if (count_set) {
    if (count_arg < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("-n must be at least 1 (got ", count_arg, ")"));
    }
    o.count = static_cast<uint64_t>(count_arg);
  }
  if (o.copy_from > 0 && o.iov_from > 0) {
    return absl::InvalidArgumentError(
        "--copy-from and --iov-from exclude each other");
  }
  if (o.copy_from > 0 && o.copy_from < o.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--copy-from must be at least the datagram size (", o.size, " bytes)"));
  }
  if (o.iov_from > 0 && o.iov_from < o.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--iov-from must be at least the datagram size (", o.size, " bytes)"));
  }
  if (o.burst < 1 || o.burst > 1024) {
    return absl::InvalidArgumentError("-B must be 1..1024");
  }
  if (o.entropies < 1 || o.entropies > 256) {
    return absl::InvalidArgumentError("-e must be 1..256");
  }
  if (o.seconds == 0 && o.count == 0) {
    if (o.mode == "bw") o.seconds = 5;
    if (o.mode == "lat") o.count = 10000;
  }
  return o;
}

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

namespace {
[[noreturn]] void Die(const char* what, const NetAddr& a) {
  std::fprintf(stderr, "udp-blast: %s(%s): %s\n", what, a.ToString().c_str(),
               strerror(errno));
  std::exit(1);
}

void SetBuf(int fd, int force, int plain, int bytes) {
  if (setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof(bytes)) != 0) {
    (void)setsockopt(fd, SOL_SOCKET, plain, &bytes, sizeof(bytes));
  }
}
}  // namespace

int OpenUdpSocket(const NetAddr& addr, bool bind_it, int sndbuf, int rcvbuf,
                  bool nonblocking) {
  const int family = addr.family == NetAddr::Family::kIpv6 ? AF_INET6 : AF_INET;
  int fd = socket(
      family, SOCK_DGRAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) Die("socket", addr);
  SetBuf(fd, SO_SNDBUFFORCE, SO_SNDBUF, sndbuf);
  SetBuf(fd, SO_RCVBUFFORCE, SO_RCVBUF, rcvbuf);
  if (bind_it) {
    sockaddr_storage ss;
    socklen_t len = backend::ToSockaddr(addr, family, &ss);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
      Die("bind", addr);
    }
  }
  return fd;
}

double Quantile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t idx =
      static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  if (idx > 0) --idx;
  return v[std::min(idx, v.size() - 1)];
}

}  // namespace braid::blast

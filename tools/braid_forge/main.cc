// braid-forge: an attacker for braid's tests. Sends forged braid datagrams
// with a spoofed source IPv4 address (raw socket, root only) at an endpoint:
// restart claims, replies naming guessed incarnations, guessed challenge
// answers, or a flood of first contacts from a million addresses. See
// ForgeUsage() or --help; what each attack should make the victim count is
// in docs/security.md.
#include <signal.h>
#include <sys/random.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "tools/braid_forge/forge_flags.h"
#include "tools/braid_forge/forger.h"
#include "tools/braid_forge/raw_sender.h"
#include "tools/common/flag_parser.h"

namespace braid::forge {
namespace {

std::atomic<bool> g_stop{false};

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void SleepUntil(int64_t t_ns) {
  for (int64_t now = NowNs(); now < t_ns; now = NowNs()) {
    if (t_ns - now > 100'000) {
      timespec ts{0, static_cast<long>(t_ns - now - 50'000)};
      nanosleep(&ts, nullptr);
    }
  }
}

uint64_t RandomSeed() {
  uint64_t s = 0;
  if (getrandom(&s, sizeof(s), 0) != sizeof(s) || s == 0) {
    s = static_cast<uint64_t>(NowNs()) | 1;
  }
  return s;
}

std::string Ipv4Text(uint32_t ip) {
  return absl::StrFormat("%d.%d.%d.%d", ip >> 24, (ip >> 16) & 255,
                         (ip >> 8) & 255, ip & 255);
}

// Sends until a bound is reached (or SIGINT / SIGTERM); returns the time
// spent in seconds.
double Run(const ForgeFlags& f, Forger& forger, RawSender& tx) {
  const int64_t start = NowNs();
  const int64_t end =
      f.duration > 0 ? start + static_cast<int64_t>(f.duration * 1e9) : 0;
  const double ns_per_datagram = f.rate > 0 ? 1e9 / f.rate : 0;
  uint64_t built = 0;
  Ipv4UdpAddrs addrs;
  while (!g_stop.load(std::memory_order_relaxed)) {
    if (f.count != 0 && built >= f.count) break;
    if (tx.queued() == 0 || ns_per_datagram > 0) {
      // Clock checks once per batch at full speed, per datagram when paced.
      const int64_t now = NowNs();
      if (end != 0 && now >= end) break;
      if (ns_per_datagram > 0) {
        const int64_t due =
            start +
            static_cast<int64_t>(static_cast<double>(built) * ns_per_datagram);
        if (due > now) {
          tx.Flush();
          SleepUntil(due);
        }
      }
    }
    const size_t len = forger.Next(tx.NextPayload(), &addrs);
    if (len == 0) break;  // cannot happen: slots hold MaxPayload()
    tx.Commit(len, addrs);
    ++built;
  }
  tx.Flush();
  return static_cast<double>(NowNs() - start) / 1e9;
}

void Report(const ForgeFlags& f, const RawSenderCounters& c, double secs,
            uint64_t seed) {
  const double rate = secs > 0 ? static_cast<double>(c.datagrams) / secs : 0;
  const bool leak = f.target.victim_incarnation != 0;
  const char* expect = ExpectedDrops(f.attack, leak);
  const std::string victim = absl::StrFormat(
      "%s:%d", Ipv4Text(f.target.victim_ip), f.target.victim_port);
  if (f.json) {
    std::printf(
        "{\"attack\":\"%s\",\"victim\":\"%s\",\"datagrams\":%llu,"
        "\"bytes\":%llu,\"errors\":%llu,\"syscalls\":%llu,\"seconds\":%.6f,"
        "\"datagrams_per_s\":%.1f,\"seed\":%llu,\"expect\":\"%s\"}\n",
        AttackName(f.attack), victim.c_str(),
        static_cast<unsigned long long>(c.datagrams),
        static_cast<unsigned long long>(c.bytes),
        static_cast<unsigned long long>(c.errors),
        static_cast<unsigned long long>(c.syscalls), secs, rate,
        static_cast<unsigned long long>(seed), expect);
  } else {
    std::printf(
        "braid-forge: %s at %s: %llu datagrams (%llu bytes) in %.3f s = %.0f "
        "datagrams/s, %llu refused, %llu sendmmsg calls, seed %llu\n"
        "  the victim should count: %s\n",
        AttackName(f.attack), victim.c_str(),
        static_cast<unsigned long long>(c.datagrams),
        static_cast<unsigned long long>(c.bytes), secs, rate,
        static_cast<unsigned long long>(c.errors),
        static_cast<unsigned long long>(c.syscalls),
        static_cast<unsigned long long>(seed), expect);
  }
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  absl::StatusOr<ForgeFlags> f = ParseForgeFlags(argc, argv);
  if (!f.ok()) {
    if (f.status().message() == "help") {
      std::fputs(ForgeUsage(), stdout);
      return 0;
    }
    return tools::ReportBadFlags("braid-forge", f.status());
  }
  const uint64_t seed = f->seed != 0 ? f->seed : RandomSeed();
  Forger forger(f->attack, f->target, seed);
  absl::StatusOr<std::unique_ptr<RawSender>> tx =
      RawSender::Open(f->batch, forger.MaxPayload());
  if (!tx.ok()) {
    std::fprintf(stderr, "braid-forge: %s\n",
                 std::string(tx.status().message()).c_str());
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop.store(true); };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const double secs = Run(*f, forger, **tx);
  const RawSenderCounters& c = (*tx)->counters();
  Report(*f, c, secs, seed);
  if (c.datagrams == 0 && c.errors > 0) {
    std::fprintf(stderr, "braid-forge: every send failed: %s\n",
                 std::strerror((*tx)->last_errno()));
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace braid::forge

int main(int argc, char** argv) { return braid::forge::Main(argc, argv); }

// braid-nfq-delay: adds a fixed delay to the packets of one NFQUEUE, keeping
// their order. The kernel here has no netem, so `braid-fabric impair
// --delay-us` routes a link's packets through `queue num Q` to this program,
// which holds each packet id for the delay and then accepts it.
//
//   braid-nfq-delay --queue Q --delay-us D [--capacity N] [--ready-file PATH]
//       [--rule-table FAMILY:TABLE --rule-chain CHAIN]
//
// With --rule-table/--rule-chain it appends the `xt NFQUEUE` rule to that
// chain itself once it listens on the queue (see nft_queue_rule.h for why).
//
// Runs until SIGTERM/SIGINT, then releases everything it holds. Packets that
// arrive while `capacity` packets are held are dropped (a full queue), and
// counted. Exit codes: 0 ok, 2 usage, 3 system error.
#include <arpa/inet.h>
#include <fcntl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "braid/time.h"
#include "tools/fabric/delay_line.h"
#include "tools/fabric/nft_queue_rule.h"

namespace braid::fabric {
namespace {

volatile sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

TimeNs Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimeNs(static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec);
}

// Options with their defaults.
struct DelayOptions {
  uint32_t queue = 0;
  int64_t delay_us = -1;  // required
  uint32_t capacity = 65536;
  std::string ready_file;
  std::string rule_table;  // "ip:braidq"; empty: install no rule
  std::string rule_chain;
};

// What the daemon did, printed at exit.
struct DelayCounters {
  uint64_t held = 0;
  uint64_t released = 0;
  uint64_t dropped_full = 0;
  uint64_t recv_enobufs = 0;
};

struct Context {
  DelayLine* line;
  nfq_q_handle* queue = nullptr;
  DelayCounters* counters;
  TimeNs now;
};

int OnPacket(nfq_q_handle* qh, nfgenmsg*, nfq_data* nfa, void* data) {
  auto* ctx = static_cast<Context*>(data);
  nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (ph == nullptr) return 0;
  uint32_t id = ntohl(ph->packet_id);
  if (ctx->line->Push(id, ctx->now)) {
    ++ctx->counters->held;
  } else {
    ++ctx->counters->dropped_full;
    nfq_set_verdict(qh, id, NF_DROP, 0, nullptr);
  }
  return 0;
}

// Accepts every due packet with one batch verdict: ids grow in arrival order
// and the delay is constant, so "all ids up to the newest due one" is exact.
void ReleaseDue(Context* ctx, TimeNs now, bool all) {
  uint32_t id = 0, last = 0;
  bool any = false;
  while (all ? ctx->line->PopAny(&id) : ctx->line->PopDue(now, &id)) {
    last = id;
    any = true;
    ++ctx->counters->released;
  }
  if (any) nfq_set_verdict_batch(ctx->queue, last, NF_ACCEPT);
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "braid-nfq-delay: %s\nusage: braid-nfq-delay --queue Q "
               "--delay-us D [--capacity N] [--ready-file PATH] "
               "[--rule-table FAMILY:TABLE --rule-chain CHAIN]\n",
               why);
  return 2;
}

int Fail(const char* what) {
  std::fprintf(stderr, "braid-nfq-delay: %s: %s\n", what, std::strerror(errno));
  return 3;
}

int Run(const DelayOptions& o) {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  prctl(PR_SET_TIMERSLACK, 1UL);  // wake within ~1 us of the due time

  DelayLine line(o.capacity, DurationNs::Micros(o.delay_us));
  DelayCounters counters;
  Context ctx{&line, nullptr, &counters, Now()};

  nfq_handle* h = nfq_open();
  if (h == nullptr) return Fail("nfq_open");
  ctx.queue =
      nfq_create_queue(h, static_cast<uint16_t>(o.queue), &OnPacket, &ctx);
  if (ctx.queue == nullptr) return Fail("nfq_create_queue (queue in use?)");
  if (nfq_set_mode(ctx.queue, NFQNL_COPY_META, 0) < 0) {
    return Fail("nfq_set_mode");
  }
  nfq_set_queue_maxlen(ctx.queue, o.capacity);
  nfnl_rcvbufsiz(nfq_nfnlh(h), 32u << 20);
  int fd = nfq_fd(h);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (!o.rule_table.empty()) {
    NfqueueRule rule;
    size_t colon = o.rule_table.find(':');
    std::string fam = o.rule_table.substr(0, colon);
    rule.family = fam == "inet" ? NFPROTO_INET : NFPROTO_IPV4;
    rule.table = o.rule_table.substr(colon + 1);
    rule.chain = o.rule_chain;
    rule.queue = static_cast<uint16_t>(o.queue);
    absl::Status s = AppendNfqueueRule(rule);
    if (!s.ok()) {
      std::fprintf(stderr, "braid-nfq-delay: %s\n", s.ToString().c_str());
      return 3;
    }
  }
  if (!o.ready_file.empty()) {
    FILE* f = std::fopen(o.ready_file.c_str(), "w");
    if (f == nullptr) return Fail("ready file");
    std::fclose(f);
  }

  std::vector<char> buf(1 << 16);
  while (!g_stop) {
    TimeNs now = Now();
    ReleaseDue(&ctx, now, false);
    TimeNs due = line.NextDue();
    timespec timeout{1, 0};
    if (!due.IsInfinite()) {
      int64_t ns = std::max<int64_t>(0, (due - now).ns());
      timeout = {static_cast<time_t>(ns / 1000000000),
                 static_cast<long>(ns % 1000000000)};
    }
    pollfd p{fd, POLLIN, 0};
    int pr = ppoll(&p, 1, &timeout, nullptr);
    if (pr < 0 && errno != EINTR) return Fail("ppoll");
    if (pr <= 0) continue;
    for (;;) {
      ssize_t n = recv(fd, buf.data(), buf.size(), 0);
      if (n < 0) {
        if (errno == ENOBUFS) {
          ++counters.recv_enobufs;
          continue;
        }
        break;  // EAGAIN: drained
      }
      ctx.now = Now();
      nfq_handle_packet(h, buf.data(), static_cast<int>(n));
    }
  }
  ReleaseDue(&ctx, Now(), true);
  nfq_destroy_queue(ctx.queue);
  nfq_close(h);
  std::fprintf(stderr,
               "braid-nfq-delay: queue %u delay %ld us: held %lu released %lu "
               "dropped_full %lu recv_enobufs %lu\n",
               o.queue, static_cast<long>(o.delay_us), counters.held,
               counters.released, counters.dropped_full, counters.recv_enobufs);
  return 0;
}

}  // namespace
}  // namespace braid::fabric

int main(int argc, char** argv) {
  braid::fabric::DelayOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return braid::fabric::Usage("missing value");
    const char* v = argv[++i];
    bool ok = true;
    if (a == "--queue") {
      ok = absl::SimpleAtoi(v, &o.queue) && o.queue <= 65535;
    } else if (a == "--delay-us") {
      ok = absl::SimpleAtoi(v, &o.delay_us) && o.delay_us >= 0 &&
           o.delay_us <= 60000000;
    } else if (a == "--capacity") {
      ok = absl::SimpleAtoi(v, &o.capacity) && o.capacity > 0 &&
           o.capacity <= (1u << 22);
    } else if (a == "--ready-file") {
      o.ready_file = v;
    } else if (a == "--rule-table") {
      o.rule_table = v;
      ok = o.rule_table.find(':') != std::string::npos;
    } else if (a == "--rule-chain") {
      o.rule_chain = v;
    } else {
      return braid::fabric::Usage("unknown option");
    }
    if (!ok) return braid::fabric::Usage("bad value");
  }
  if (o.delay_us < 0) return braid::fabric::Usage("--delay-us is required");
  if (o.rule_table.empty() != o.rule_chain.empty()) {
    return braid::fabric::Usage("--rule-table and --rule-chain go together");
  }
  return braid::fabric::Run(o);
}

// endpoint_peer_main: the other process of the two-process endpoint tests.
// Opens an Endpoint, prints "PORT <n>" on stdout, and echoes every message
// it receives back to its sender on the same stream, until it receives the
// message "quit"; then, once every echo has completed, prints
// "DONE received=<n> echoed=<n> failed=<n>" and exits 0 (1 if any echo
// failed). It exits 3 when --lifetime-ms passes, so a lost parent can never
// leave it running.
//
// Flags: --bind=IP:PORT (default 127.0.0.1:0) --drop=P --dup=P --reorder=P
//        --impair-seed=N --peer-timeout-ms=N --lifetime-ms=N (default 60000)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "braid/endpoint.h"
#include "braid/testing/impairment.h"

namespace {

struct Flags {
  std::string bind = "127.0.0.1:0";
  double drop = 0, dup = 0, reorder = 0;
  uint64_t impair_seed = 1;
  int64_t peer_timeout_ms = 0;
  int64_t lifetime_ms = 60000;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    const size_t eq = a.find('=');
    if (!absl::StartsWith(a, "--") || eq == absl::string_view::npos)
      return false;
    const absl::string_view key = a.substr(2, eq - 2), val = a.substr(eq + 1);
    bool ok = true;
    if (key == "bind") {
      f->bind = std::string(val);
    } else if (key == "drop") {
      ok = absl::SimpleAtod(val, &f->drop);
    } else if (key == "dup") {
      ok = absl::SimpleAtod(val, &f->dup);
    } else if (key == "reorder") {
      ok = absl::SimpleAtod(val, &f->reorder);
    } else if (key == "impair-seed") {
      ok = absl::SimpleAtoi(val, &f->impair_seed);
    } else if (key == "peer-timeout-ms") {
      ok = absl::SimpleAtoi(val, &f->peer_timeout_ms);
    } else if (key == "lifetime-ms") {
      ok = absl::SimpleAtoi(val, &f->lifetime_ms);
    } else {
      ok = false;
    }
    if (!ok) return false;
  }
  return true;
}

struct Echo {
  braid::NetAddr to;
  uint16_t stream;
  std::vector<uint8_t> data;
};

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr,
                 "usage: %s [--bind=IP:PORT] [--drop=P] [--dup=P] "
                 "[--reorder=P] [--impair-seed=N] [--peer-timeout-ms=N] "
                 "[--lifetime-ms=N]\n",
                 argv[0]);
    return 2;
  }
  braid::EndpointOptions o;
  o.bind = flags.bind;
  braid::TestImpairments impair;
  impair.drop = flags.drop;
  impair.duplicate = flags.dup;
  impair.reorder = flags.reorder;
  impair.seed = flags.impair_seed;
  if (flags.peer_timeout_ms > 0) {
    o.protocol.peer_timeout = braid::DurationNs::Millis(flags.peer_timeout_ms);
  }
  auto opened = braid::OpenEndpointForTesting(o, impair);
  if (!opened.ok()) {
    std::fprintf(stderr, "open failed: %s\n",
                 opened.status().ToString().c_str());
    return 2;
  }
  std::unique_ptr<braid::Endpoint> ep = std::move(*opened);
  std::printf("PORT %u\n", ep->local_address().port);
  std::fflush(stdout);

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(flags.lifetime_ms);
  std::deque<Echo> backlog;  // echoes Send refused for now (queue full)
  std::vector<braid::Completion> done;
  uint64_t received = 0, echoed = 0, failed = 0, outstanding = 0, cookie = 0;
  bool quitting = false;
  while (std::chrono::steady_clock::now() < deadline) {
    ep->Wait(braid::DurationNs::Millis(5));
    done.clear();
    ep->Poll(&done);
    for (braid::Completion& c : done) {
      switch (c.type) {
        case braid::CompletionType::kRecv: {
          static const uint8_t kQuit[] = {'q', 'u', 'i', 't'};
          if (c.data.size() == 4 && std::memcmp(c.data.data(), kQuit, 4) == 0) {
            quitting = true;
            break;
          }
          ++received;
          backlog.push_back({c.peer, c.stream, std::move(c.data)});
          break;
        }
        case braid::CompletionType::kSendDone:
          ++echoed;
          --outstanding;
          break;
        case braid::CompletionType::kSendFailed:
          ++failed;
          --outstanding;
          std::fprintf(stderr, "echo failed: %s\n",
                       braid::FailureCauseName(c.cause));
          break;
      }
    }
    while (!backlog.empty()) {
      const Echo& e = backlog.front();
      absl::Status s =
          ep->Send(e.to, e.data, {.stream = e.stream, .cookie = ++cookie});
      if (absl::IsResourceExhausted(s)) break;
      if (!s.ok()) {
        std::fprintf(stderr, "echo send: %s\n", s.ToString().c_str());
        ++failed;
      } else {
        ++outstanding;
      }
      backlog.pop_front();
    }
    if (quitting && backlog.empty() && outstanding == 0) {
      std::printf("DONE received=%llu echoed=%llu failed=%llu\n",
                  static_cast<unsigned long long>(received),
                  static_cast<unsigned long long>(echoed),
                  static_cast<unsigned long long>(failed));
      std::fflush(stdout);
      return failed == 0 ? 0 : 1;
    }
  }
  std::fprintf(stderr, "lifetime over: received=%llu echoed=%llu\n",
               static_cast<unsigned long long>(received),
               static_cast<unsigned long long>(echoed));
  return 3;
}

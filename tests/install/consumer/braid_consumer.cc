// Uses only the installed public API: two endpoints on loopback, one
// message each way of several sizes, checked byte for byte, then the
// counters printed. Exit 0 only if every message arrived intact and every
// send completed.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "braid/endpoint.h"

namespace {

int Fail(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "braid_consumer: %s: %s\n", what, s.ToString().c_str());
  return 1;
}

std::vector<uint8_t> Payload(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31);
  return v;
}

}  // namespace

int main() {
  braid::EndpointOptions opts;
  opts.bind = "127.0.0.1:0";
  auto a = braid::Endpoint::Open(opts);
  if (!a.ok()) return Fail("open a", a.status());
  auto b = braid::Endpoint::Open(opts);
  if (!b.ok()) return Fail("open b", b.status());
  const size_t sizes[] = {0, 1, 1500, 65536, 1 << 20};
  int sends_done = 0, received = 0;
  for (size_t i = 0; i < std::size(sizes); ++i) {
    const std::vector<uint8_t> m = Payload(sizes[i], static_cast<uint8_t>(i));
    absl::Status s = (*a)->Send((*b)->local_address(), m, {.cookie = 100 + i});
    if (!s.ok()) return Fail("send", s);
  }
  // Bounded: a reliable loopback exchange of ~1 MiB ends far sooner.
  std::vector<braid::Completion> done;
  for (int spin = 0; spin < 200000 && (sends_done < 5 || received < 5);
       ++spin) {
    for (auto* ep : {a->get(), b->get()}) {
      done.clear();
      ep->Poll(&done);
      for (const braid::Completion& c : done) {
        if (c.type == braid::CompletionType::kSendDone) {
          ++sends_done;
        } else if (c.type == braid::CompletionType::kRecv) {
          // Unordered: find the message by its size (sizes are distinct).
          size_t k = 0;
          while (k < std::size(sizes) && sizes[k] != c.data.size()) ++k;
          if (k == std::size(sizes) ||
              c.data != Payload(sizes[k], static_cast<uint8_t>(k))) {
            std::fprintf(stderr, "braid_consumer: bad %zu-byte message\n",
                         c.data.size());
            return 1;
          }
          ++received;
        } else {
          std::fprintf(stderr, "braid_consumer: send failed\n");
          return 1;
        }
      }
      ep->Wait(braid::DurationNs::Micros(100));
    }
  }
  if (sends_done != 5 || received != 5) {
    std::fprintf(stderr, "braid_consumer: %d sends done, %d received\n",
                 sends_done, received);
    return 1;
  }
  std::printf("%s", braid::FormatStatsTable((*a)->stats()).c_str());
  std::printf("braid_consumer: ok (5 messages, %d bytes largest)\n", 1 << 20);
  return 0;
}

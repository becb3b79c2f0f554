// Test helper: polls two in-process Endpoints on one thread, feeding their
// completions to flow senders and receive checkers (traffic.h), until every
// flow has completed and been received, or a wall-clock bound passes (a hang
// is reported as a failure; no assertion depends on speed).
#ifndef BRAID_TESTS_ENDPOINT_PAIR_DRIVER_H_
#define BRAID_TESTS_ENDPOINT_PAIR_DRIVER_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "braid/endpoint.h"
#include "braid/testing/impairment.h"
#include "gtest/gtest.h"
#include "tests/endpoint/traffic.h"

namespace braid::testing {

// Opens an endpoint; on failure records a test failure and returns null.
inline std::unique_ptr<Endpoint> OpenOrDie(const EndpointOptions& o = {}) {
  auto ep = Endpoint::Open(o);
  EXPECT_TRUE(ep.ok()) << ep.status();
  return ep.ok() ? std::move(*ep) : nullptr;
}

// The same, with test impairments on its outbound datagrams.
inline std::unique_ptr<Endpoint> OpenOrDie(const EndpointOptions& o,
                                           const TestImpairments& impair) {
  auto ep = OpenEndpointForTesting(o, impair);
  EXPECT_TRUE(ep.ok()) << ep.status();
  return ep.ok() ? std::move(*ep) : nullptr;
}

// Polls `a` and `b` in turn, appending their completions to *ca and *cb,
// until `done()` or `limit` of wall-clock time passes (a hang then shows as
// the caller's failed expectations, not as a timing assertion).
template <typename Fn>
void PollBothUntil(Endpoint& a, Endpoint& b, std::vector<Completion>* ca,
                   std::vector<Completion>* cb, Fn done,
                   std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    a.Poll(ca);
    b.Poll(cb);
  }
}

struct Side {
  Endpoint* ep = nullptr;
  std::vector<FlowSender*> senders;   // flows this side sends
  ReceiveChecker* checker = nullptr;  // checks what this side receives
  uint64_t expect_received = 0;       // messages it must receive in all
};

// Returns true if everything finished before `limit`. Unexpected
// completions are appended to *errors.
inline bool DrivePair(Side& a, Side& b, std::chrono::seconds limit,
                      std::vector<std::string>* errors) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<Completion> done;
  auto finished = [&] {
    for (Side* s : {&a, &b}) {
      for (FlowSender* f : s->senders) {
        if (!f->finished()) return false;
      }
      const uint64_t got = s->checker ? s->checker->received() : 0;
      if (got < s->expect_received) return false;
    }
    return true;
  };
  uint64_t iter = 0;
  while (!finished()) {
    if ((++iter & 255) == 0 && std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    for (Side* s : {&a, &b}) {
      for (FlowSender* f : s->senders) f->Pump();
      done.clear();
      s->ep->Poll(&done);
      Dispatch(done, s->senders, s->checker, errors);
    }
  }
  return true;
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_ENDPOINT_PAIR_DRIVER_H_

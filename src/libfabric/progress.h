// The backstop progress thread of a domain. Data progress is driven by the
// application's calls (CQ reads, sends, receives); when the application
// makes none for `idle` (it computes, or blocks outside libfabric, e.g. in
// a TCP read of its own), this thread drives every endpoint of the domain
// instead: received messages are taken in, acks owed to peers go out, and
// braid's timers run. Without it a peer waiting for our ack would fail its
// send after its peer timeout. When the application busy-polls, the thread
// wakes once per `idle` and does nothing.
#ifndef BRAID_LIBFABRIC_PROGRESS_H_
#define BRAID_LIBFABRIC_PROGRESS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "braid/time.h"

namespace braid::libfabric {

struct Domain;

class ProgressThread {
 public:
  // Starts the thread for `domain` (which outlives it).
  ProgressThread(Domain* domain, DurationNs idle);
  // Stops and joins the thread.
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

 private:
  void Run();

  Domain* domain_;
  DurationNs idle_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_PROGRESS_H_

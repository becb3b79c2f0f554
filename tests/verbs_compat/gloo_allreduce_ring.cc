// One rank of gloo's AllreduceRing over an ibverbs device, with Debian's
// unmodified libgloo (ibverbs transport) and a FileStore rendezvous: the
// client program of gloo_braid0.sh, which runs one process per rank with
// libbraid-verbs.so preloaded and device braid0.
//
// usage: gloo_allreduce_ring RANK SIZE STORE_DIR [DEVICE] [ROUNDS] [COUNT]
//                            [bare]
//
// Each round builds a fresh AllreduceRing over COUNT ints, runs it, checks
// every element against the sum of all ranks' inputs and destroys it.
// gloo checks at that destruction that no send of the algorithm still
// waits for its completion (ibverbs::Buffer::~Buffer enforces
// sendPending_ == 0; the failure throws from a destructor, so the process
// aborts). AllreduceRing::run() ends with a notification send it never
// waits for, so that check races the last ACK on any RC device
// (docs/verbs.md, "When a send completes"). Unless `bare` is given, each
// round therefore waits, through gloo's own Buffer::waitSend, for that last
// send's completion before the algorithm goes: the completion must come
// although neither rank sends anything more.
//
// Exit status: 0 when every round was correct and the teardown
// (algorithm, context, device) completed; 1 on a wrong result or an error.
// Prints the mean time per round (build, run, teardown) on stdout.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "gloo/allreduce_ring.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/transport/ibverbs/device.h"

namespace {

// Rank r's element i: distinct per rank and element, so a misplaced chunk
// or a missed contribution shows.
int Input(int rank, int round, int i) { return (rank + 1) * 1000 + round + i; }

// gloo's AllreduceRing, and a wait for the completion of the notification
// send that run() leaves pending (its buffers are protected members).
class Ring : public gloo::AllreduceRing<int> {
 public:
  using gloo::AllreduceRing<int>::AllreduceRing;
  void WaitLastSend() { sendNotificationBuf_->waitSend(); }
};

bool RunRound(const std::shared_ptr<gloo::Context>& context, int round,
              int count, bool bare) {
  const int size = context->size;
  std::vector<int> data(count);
  for (int i = 0; i < count; ++i) data[i] = Input(context->rank, round, i);
  {
    Ring ring(context, {data.data()}, count);
    ring.run();
    if (!bare) ring.WaitLastSend();
  }  // gloo's teardown check of the algorithm's buffers runs here
  for (int i = 0; i < count; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += Input(r, round, i);
    if (data[i] != want) {
      std::fprintf(stderr, "rank %d round %d: data[%d] = %d, want %d\n",
                   context->rank, round, i, data[i], want);
      return false;
    }
  }
  return true;
}

int Run(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s RANK SIZE STORE_DIR [DEVICE] [ROUNDS] [COUNT]\n",
                 argv[0]);
    return 1;
  }
  const int rank = std::atoi(argv[1]);
  const int size = std::atoi(argv[2]);
  const std::string dir = argv[3];
  const std::string device = argc > 4 ? argv[4] : "braid0";
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 20;
  const int count = argc > 6 ? std::atoi(argv[6]) : 1024;
  const bool bare = argc > 7 && std::string(argv[7]) == "bare";
  std::chrono::steady_clock::duration elapsed{};
  {
    gloo::transport::ibverbs::attr attr;
    attr.name = device;
    attr.port = 1;
    attr.index = 0;
    auto dev = gloo::transport::ibverbs::CreateDevice(attr);
    gloo::rendezvous::FileStore store(dir);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(std::chrono::seconds(20));
    context->connectFullMesh(store, dev);
    const auto start = std::chrono::steady_clock::now();
    for (int round = 0; round < rounds; ++round) {
      if (!RunRound(context, round, count, bare)) return 1;
    }
    elapsed = std::chrono::steady_clock::now() - start;
  }  // context (pairs: QPs, CQs) and device (PD, channel, context) go here
  const double us =
      std::chrono::duration<double, std::micro>(elapsed).count() / rounds;
  std::printf(
      "rank %d of %d: %d AllreduceRing rounds of %d ints correct, %.1f us "
      "per round\n",
      rank, size, rounds, count, us);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_allreduce_ring: %s\n", e.what());
    return 1;
  }
}

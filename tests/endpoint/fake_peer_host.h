// Test helper: a PeerHost that records completions, with a receive queue
// whose room the test sets, and the frames a peer half wrote, parsed back.
#ifndef BRAID_TESTS_ENDPOINT_FAKE_PEER_HOST_H_
#define BRAID_TESTS_ENDPOINT_FAKE_PEER_HOST_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "braid/time.h"
#include "endpoint/peer_link.h"
#include "reorder/buffer_pool.h"
#include "wire/frames.h"

namespace braid::endpoint::testing {

class FakePeerHost : public PeerHost {
 public:
  void Complete(Completion&& c) override {
    completions.push_back(std::move(c));
  }
  uint64_t ReceiveQueueRoom() const override { return queue_room; }
  reorder::BufferPool* buffer_pool() override { return &pool; }
  bool Place(const NetAddr&, uint16_t, const wire::PlacementExt&, uint32_t,
             absl::Span<uint8_t>*) override {
    return false;
  }

  std::vector<Completion> completions;
  uint64_t queue_room = uint64_t{1} << 40;
  reorder::BufferPool pool;
};

// Incarnations of the endpoint under test and of its peer.
inline constexpr uint64_t kLocalInc = 0x1111;
inline constexpr uint64_t kPeerInc = 0x2222;

// A peer's shared state as a half under test sees it: our incarnation,
// the peer's (it has spoken), `host`, last activity at time 0.
inline PeerLink TestLink(PeerHost* host) {
  PeerLink link;
  link.our_inc = kLocalInc;
  link.host = host;
  link.peer_inc = kPeerInc;
  link.last_activity = TimeNs(0);
  return link;
}

inline TimeNs T(int64_t us) { return TimeNs(us * 1000); }

// The frames of `bytes` (frames only, no preamble), parsed.
inline std::vector<wire::Frame> ParseFrames(absl::Span<const uint8_t> bytes) {
  std::vector<wire::Frame> out;
  wire::FrameReader r(bytes);
  wire::Frame f;
  while (r.Next(&f)) out.push_back(f);
  return out;
}

}  // namespace braid::endpoint::testing

#endif  // BRAID_TESTS_ENDPOINT_FAKE_PEER_HOST_H_

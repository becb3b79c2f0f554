// A message accepted by Send, as the sending peer tracks it.
#ifndef BRAID_ENDPOINT_OUT_MESSAGE_H_
#define BRAID_ENDPOINT_OUT_MESSAGE_H_

#include <cstdint>
#include <vector>

#include "wire/frames.h"

namespace braid::endpoint {

struct OutMessage {
  // The bytes. Either `owned` holds them (copying send) or they belong to the
  // caller until the message completes (zero-copy send).
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  std::vector<uint8_t> owned;
  uint64_t cookie = 0;
  uint16_t stream = 0;  // 0 = unordered
  // Direct placement at the receiver: every fragment carries `placement`
  // (and so holds kPlacementExtSize bytes less payload).
  bool placed = false;
  wire::PlacementExt placement;

  // Assigned when the first fragment is sent (so queued messages can move to
  // a new session without renumbering).
  uint32_t msg_seq = 0;
  uint32_t stream_seq = 0;
  uint32_t frags_total = 0;
  uint32_t frags_acked = 0;
  uint32_t next_frag = 0;   // next fragment to send for the first time
  uint32_t frag_bytes = 0;  // payload bytes per fragment (the last: less)
  bool done = false;

  static OutMessage Copy(const uint8_t* p, uint32_t n) {
    OutMessage m;
    m.owned.assign(p, p + n);
    m.data = m.owned.data();
    m.len = n;
    return m;
  }
  static OutMessage Borrow(const uint8_t* p, uint32_t n) {
    OutMessage m;
    m.data = p;
    m.len = n;
    return m;
  }
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_OUT_MESSAGE_H_

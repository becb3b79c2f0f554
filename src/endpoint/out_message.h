// A message accepted by Send, as the sending peer tracks it.
#ifndef BRAID_ENDPOINT_OUT_MESSAGE_H_
#define BRAID_ENDPOINT_OUT_MESSAGE_H_

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "wire/frames.h"

namespace braid::endpoint {

// A fragment's tag in the sent-packet manager: its message and byte offset.
constexpr uint64_t TagOf(uint32_t msg_seq, uint32_t offset) {
  return (uint64_t{msg_seq} << 32) | offset;
}
constexpr uint32_t MsgOf(uint64_t tag) {
  return static_cast<uint32_t>(tag >> 32);
}
constexpr uint32_t OffsetOf(uint64_t tag) { return static_cast<uint32_t>(tag); }

struct OutMessage {
  // The bytes. Either `owned` holds them (copying send) or they belong to the
  // caller until the message completes (zero-copy send).
  // With a prefix (zero-copy send with SendOptions::prefix), `owned` holds
  // the first prefix_len bytes and `data` the rest: byte i of the message
  // is owned[i] below prefix_len, else data[i - prefix_len]. `len` counts
  // both. No fragment spans the two.
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  uint32_t prefix_len = 0;
  std::vector<uint8_t> owned;
  // `owned` is the caller's buffer (Endpoint::SendOwned, no prefix): the
  // send's completion hands it back (Completion::data) instead of the
  // endpoint recycling it.
  bool give_back = false;
  uint64_t cookie = 0;
  // When the backend keeps tails (zero-copy by reference): the count of its
  // references to this message's bytes, taken from the host at the first
  // transmission; the bytes are released only when it is 0 (TxHold).
  backend::TxHold* hold = nullptr;
  uint16_t stream = 0;  // 0 = unordered
  // Path hint (SendOptions::flow): non-zero, the first transmissions of
  // the message leave on path flow % path count while it is usable.
  uint32_t flow = 0;
  // Direct placement at the receiver: every fragment carries `placement`
  // (a kPlacementExtSize-byte header extension).
  bool placed = false;
  wire::PlacementExt placement;

  // Assigned when the first fragment is sent (so queued messages can move to
  // a new session without renumbering).
  uint32_t msg_seq = 0;
  uint32_t stream_seq = 0;
  // Fragments have no fixed size: each one takes what is left of its
  // datagram (docs/protocol.md, "Fragmentation"), so a datagram can end one
  // message and start the next. A fragment is named by its byte offset.
  uint32_t next_offset = 0;  // first byte not yet sent for the first time
  uint32_t frags_sent = 0;   // fragments sent for the first time
  uint32_t frags_acked = 0;
  // PSN of the newest fragment sent for the first time.
  wire::Psn last_psn;
  // An ordered message (stream != 0) whose fragments are all acked but
  // which the receiver may still hold behind a missing predecessor: it
  // completes once every PSN up to last_psn is acked (Peer::OnAck).
  bool awaiting_delivery = false;
  bool done = false;

  // True while some bytes (or, for a 0-byte message, its one empty
  // fragment) have not been sent for the first time.
  bool HasUnsent() const { return frags_sent == 0 || next_offset < len; }
  // Every fragment was sent and acked.
  bool FullyAcked() const { return !HasUnsent() && frags_acked == frags_sent; }
  // Where byte `offset` is, and how many bytes from there are contiguous.
  const uint8_t* At(uint32_t offset) const {
    return offset < prefix_len ? owned.data() + offset
                               : data + (offset - prefix_len);
  }
  uint32_t ContiguousFrom(uint32_t offset) const {
    return offset < prefix_len ? prefix_len - offset : len - offset;
  }

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

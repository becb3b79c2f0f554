// Completions: how an endpoint reports finished sends and received messages.
#ifndef BRAID_COMPLETION_H_
#define BRAID_COMPLETION_H_

#include <cstdint>
#include <vector>

#include "braid/address.h"

namespace braid {

enum class CompletionType : uint8_t {
  // Every byte was acknowledged by the peer, and the peer has released the
  // message to its application's completion queue: at once for unordered
  // messages; for an ordered stream once every earlier message of the
  // stream is released too (until then the message is acked but held).
  kSendDone,
  kSendFailed,  // the message was not (or not provably) delivered; see cause
  kRecv,        // a message arrived, complete and exactly once
};

enum class FailureCause : uint8_t {
  kNone = 0,
  kPeerUnreachable,  // no answer from the peer within peer_timeout
  kPeerRestarted,    // the peer came back with a new incarnation
  kClosed,           // the endpoint was closed with the send in flight
  kPeerEvicted,      // not produced (kept for the numbering): a peer that
                     // evicted our context gets the unacked messages again
                     // in a new session, and this side evicts only idle
                     // peers, which have nothing to fail
};
const char* FailureCauseName(FailureCause c);

// Direct data placement (see SendOptions::placement and
// Endpoint::SetPlacementHandler): a descriptor the sender attaches to a
// message, carried in every fragment, like a DDP tagged buffer. braid does
// not interpret `key` and `offset`; the receiver's placement handler does.
struct PlacementDescriptor {
  uint64_t key = 0;     // e.g. a registered memory region's key
  uint64_t offset = 0;  // e.g. an address within that region
  // The first head_bytes of the message (an upper-layer header) are not
  // placed: they arrive in Completion::data. At most kMaxPlacementHeadBytes
  // and at most the message length.
  uint32_t head_bytes = 0;
  bool operator==(const PlacementDescriptor&) const = default;
};
inline constexpr uint32_t kMaxPlacementHeadBytes = 4096;

enum class PlacementStatus : uint8_t {
  kNone,     // an ordinary message: `data` holds all of it
  kPlaced,   // bytes after the head were written where the handler said
  kRefused,  // the handler refused: bytes after the head were written
             // nowhere (unless it accepted some fragments first)
};

struct Completion {
  CompletionType type = CompletionType::kRecv;
  FailureCause cause = FailureCause::kNone;
  NetAddr peer;
  uint16_t stream = 0;  // ordered stream id, 0 = unordered
  uint64_t cookie = 0;  // the caller's cookie (send completions)
  // The message (kRecv); placed: the head only. A send completion
  // (kSendDone, kSendFailed) of Endpoint::SendOwned: the buffer that send
  // took, its bytes unchanged; of other sends: empty. Owned by the caller;
  // give it back with Endpoint::Recycle when done to avoid an allocation
  // per message.
  std::vector<uint8_t> data;
  // kRecv of a message sent with a placement descriptor:
  PlacementStatus placement = PlacementStatus::kNone;
  PlacementDescriptor descriptor;
  uint32_t msg_len = 0;  // total message bytes, head included (kRecv)
};

}  // namespace braid

#endif  // BRAID_COMPLETION_H_

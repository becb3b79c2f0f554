// A fully reassembled message, handed from Reassembler to OrderedRelease and
// on to the completion queue.
#ifndef BRAID_REORDER_COMPLETED_MESSAGE_H_
#define BRAID_REORDER_COMPLETED_MESSAGE_H_

#include <cstdint>
#include <vector>

#include "wire/frames.h"
#include "wire/psn.h"

namespace braid::reorder {

// How a message's bytes reached the receiver.
enum class Placement : uint8_t {
  kNone,     // reassembled: `data` holds the whole message
  kPlaced,   // placed directly: `data` holds only the head
  kRefused,  // the placement handler refused: `data` holds only the head,
             // and no byte after it was written anywhere (see Reassembler)
};

struct CompletedMessage {
  wire::MsgSeq msg{0};      // per peer pair message number
  uint16_t stream_id = 0;   // 0 = unordered
  uint32_t stream_seq = 0;  // number within the ordered stream
  // The message bytes. Obtained from a BufferPool; give it back with
  // BufferPool::Put() once consumed to keep the receive path allocation-free.
  std::vector<uint8_t> data;
  Placement placement = Placement::kNone;
  wire::PlacementExt ext;  // the descriptor (kPlaced / kRefused)
  uint32_t msg_len = 0;    // total message bytes (head + placed part)
};

}  // namespace braid::reorder

#endif  // BRAID_REORDER_COMPLETED_MESSAGE_H_

// A fully reassembled message, handed from Reassembler to OrderedRelease and
// on to the completion queue.
#ifndef BRAID_REORDER_COMPLETED_MESSAGE_H_
#define BRAID_REORDER_COMPLETED_MESSAGE_H_

#include <cstdint>
#include <vector>

#include "wire/psn.h"

namespace braid::reorder {

struct CompletedMessage {
  wire::MsgSeq msg{0};      // per peer pair message number
  uint16_t stream_id = 0;   // 0 = unordered
  uint32_t stream_seq = 0;  // number within the ordered stream
  // The message bytes. Obtained from a BufferPool; give it back with
  // BufferPool::Put() once consumed to keep the receive path allocation-free.
  std::vector<uint8_t> data;
};

}  // namespace braid::reorder

#endif  // BRAID_REORDER_COMPLETED_MESSAGE_H_

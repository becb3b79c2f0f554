// Makes a transmit burst batch-friendly for UdpBackend::TxBurst, which sends
// each run of consecutive same-entropy packets with one sendmmsg (and packs
// equal-size packets to one destination into UDP GSO super-datagrams). An
// endpoint that sprays packets round-robin over entropies would otherwise
// pay one syscall per packet.
#ifndef BRAID_BACKEND_ENTROPY_GROUPER_H_
#define BRAID_BACKEND_ENTROPY_GROUPER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "backend/backend.h"

namespace braid::backend {

class EntropyGrouper {
 public:
  // `max_burst`: packets grouped together (larger spans are grouped in
  // chunks of this size). `max_entropies`: entropy values are < this;
  // packets with larger values keep their place at the chunk's end.
  EntropyGrouper(size_t max_burst, uint32_t max_entropies);

  // Reorders `pkts` in place so packets of one entropy are adjacent. Stable:
  // the order of packets within one entropy (one path) never changes, and
  // groups appear in the order of their first packet. No allocation.
  void Group(absl::Span<TxPacket> pkts);

 private:
  void GroupChunk(absl::Span<TxPacket> pkts);

  const size_t max_burst_;
  std::vector<int32_t> rank_;      // entropy -> group rank in this chunk
  std::vector<uint32_t> start_;    // group rank -> next output slot
  std::vector<uint16_t> seen_;     // entropies seen in this chunk
  std::vector<TxPacket> scratch_;  // max_burst_ packets
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_ENTROPY_GROUPER_H_

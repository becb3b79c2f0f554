// In-order release of completed messages for ordered streams. Stream 0 is
// unordered and passes straight through; stream s > 0 releases its messages
// in stream_seq order starting at 0.
#ifndef BRAID_REORDER_ORDERED_RELEASE_H_
#define BRAID_REORDER_ORDERED_RELEASE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "reorder/buffer_pool.h"
#include "reorder/completed_message.h"

namespace braid::reorder {

struct OrderedReleaseOptions {
  // At most this many distinct ordered streams (stream_id > 0) are tracked;
  // a message for a new stream beyond it is refused (kTooManyStreams). The
  // default is every id a stream can have (1..65535), so a peer that uses
  // them all is served: at 4096 a message on a 4097th stream was acked and
  // then dropped, its sender told kSendDone. Memory: one hash-map entry
  // (a uint16_t key, a uint32_t value) per stream a peer has used (an
  // estimate from the types, not measured: under 1 MB for all 65535).
  uint32_t max_streams = 65535;
};

struct OrderedReleaseStats {
  uint64_t released_unordered = 0;  // stream 0 messages passed through
  uint64_t released_ordered = 0;    // stream > 0 messages released
  uint64_t held_total = 0;          // messages that had to wait
  uint64_t too_many_streams = 0;    // refused: stream limit
  uint64_t stale = 0;               // refused: stream_seq already released
  uint64_t duplicate = 0;           // refused: stream_seq already held
  uint64_t reset_dropped = 0;       // held messages dropped by Reset*()
};

class OrderedRelease {
 public:
  enum class PushResult {
    kOk,              // accepted (released now or held)
    kTooManyStreams,  // dropped: new stream beyond max_streams
    kStale,           // dropped: stream_seq before the stream's next seq
    kDuplicate,       // dropped: a message with this stream_seq is held
  };

  // `pool`, if given, receives the buffers of dropped messages; it must
  // outlive this object.
  explicit OrderedRelease(
      const OrderedReleaseOptions& options = OrderedReleaseOptions(),
      BufferPool* pool = nullptr);

  // Feeds one completed message and appends every message that became
  // releasable to *released, in order. Never reorders stream 0 messages.
  PushResult Push(CompletedMessage&& m,
                  std::vector<CompletedMessage>* released);

  // New sender session: every stream restarts at seq 0; held messages are
  // dropped. Returns the number dropped.
  size_t Reset();

  // New sender session, keeping what was already acknowledged: appends every
  // held message to *released in (stream, stream_seq) order — skipping the
  // gaps, whose sends failed at the sender — then restarts every stream at 0.
  void Flush(std::vector<CompletedMessage>* released);

  // Restarts one stream at seq 0 (e.g. its QP was reset), dropping its held
  // messages. O(held messages). Returns the number dropped.
  size_t ResetStream(uint16_t stream_id);

  // The next stream_seq stream `stream_id` will release (0 if untracked).
  uint32_t next_seq(uint16_t stream_id) const;
  // Calls f(stream_id, next_seq) for every tracked stream, in no set order.
  template <typename F>
  void ForEachStream(F&& f) const {
    for (const auto& [stream, seq] : next_) f(stream, seq);
  }
  // Makes stream `stream_id` (> 0, holding nothing) release from `seq` on:
  // where a stream stood when its receiver was set aside (see
  // endpoint::PeerReceiver::Resume).
  void SetNextSeq(uint16_t stream_id, uint32_t seq) { next_[stream_id] = seq; }

  size_t held_messages() const { return held_.size(); }
  uint64_t held_bytes() const { return held_bytes_; }
  size_t tracked_streams() const { return next_.size(); }
  const OrderedReleaseStats& stats() const { return stats_; }

 private:
  static uint64_t Key(uint16_t stream, uint32_t seq) {
    return (uint64_t{stream} << 32) | seq;
  }
  void Drop(CompletedMessage&& m);

  OrderedReleaseOptions options_;
  BufferPool* pool_;
  absl::flat_hash_map<uint16_t, uint32_t> next_;  // stream -> next seq
  absl::flat_hash_map<uint64_t, CompletedMessage> held_;
  uint64_t held_bytes_ = 0;
  OrderedReleaseStats stats_;
};

}  // namespace braid::reorder

#endif  // BRAID_REORDER_ORDERED_RELEASE_H_

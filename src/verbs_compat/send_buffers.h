// Who owns the bytes of a braid0 context's sends while its endpoint sends
// them. A verbs message is built in scratch(). One of at least
// kZeroCopyMinBytes goes to the endpoint with Endpoint::SendOwned: the
// endpoint sends from that very buffer and hands it back in the send's
// completion, and it returns to the endpoint's pool (Endpoint::Recycle),
// from which scratch() is refilled (Endpoint::TakeBuffer); a smaller one is
// copied (Endpoint::Send). A payload sent straight from the application's
// registered memory (SendZeroCopy) stays the application's: the context
// must not let that memory go (ibv_dereg_mr, ibv_destroy_qp) while such a
// send is in flight, and its WR completes only when the send has ended.
#ifndef BRAID_VERBS_COMPAT_SEND_BUFFERS_H_
#define BRAID_VERBS_COMPAT_SEND_BUFFERS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "braid/address.h"
#include "braid/completion.h"
#include "braid/endpoint.h"
#include "braid/time.h"
#include "verbs_compat/context_stats.h"

namespace braid::verbs_compat {

// Messages and single-SGE payloads at least this long are not copied.
inline constexpr size_t kZeroCopyMinBytes = 8192;
// Longest ibv_dereg_mr / ibv_destroy_qp wait for the zero-copy sends in
// flight to end (Context::DrainZeroCopy). A send ends when the peer has
// acknowledged it, or fails when the peer made no progress for the
// endpoint's peer_timeout (2 s); a peer that keeps acknowledging a long
// backlog can take longer, and the call then goes ahead after this limit.
inline constexpr DurationNs kZeroCopyDrainLimit = DurationNs::Seconds(30);

// What became of a send.
enum class SendResult : uint8_t {
  kOk,      // the endpoint took it
  kRetry,   // endpoint backpressure: try again after progress
  kFailed,  // refused for good (endpoint closed, invalid message)
};

// Not thread-safe: every method is called with the context lock held.
class SendBuffers {
 public:
  // `ep` and `counters` outlive this (send_retries, transport_failures and
  // zero_copy_sends are counted there).
  SendBuffers(Endpoint* ep, ContextCounters* counters);

  // Where to build the next outgoing message (its size is the message).
  std::vector<uint8_t>& scratch() { return scratch_; }

  // Sends one verbs message to `peer` on `stream`. A message that is all of
  // scratch() and at least kZeroCopyMinBytes long goes without a copy
  // (SendOwned; scratch() is then a fresh buffer from the endpoint's pool);
  // others are copied. `placement`: the receiver places the payload after
  // the verbs header directly (see verbs_wire.h). `flow`: the path hint
  // (SendOptions::flow; a UD AH's flow label), 0 for none.
  SendResult Send(const NetAddr& peer, uint16_t stream,
                  absl::Span<const uint8_t> msg, uint64_t cookie,
                  const std::optional<PlacementDescriptor>& placement = {},
                  uint32_t flow = 0);
  // Sends a verbs header (copied) followed by `body` straight from the
  // application's memory: the endpoint reads `body` until the send ends
  // (OnSendCompletion returns true for it then). `cookie` must leave
  // kCookieZeroCopyBit clear; the completion carries it set.
  SendResult SendZeroCopy(const NetAddr& peer, uint16_t stream,
                          absl::Span<const uint8_t> header,
                          absl::Span<const uint8_t> body, uint64_t cookie,
                          const std::optional<PlacementDescriptor>& placement);

  // An endpoint send completion (kSendDone or kSendFailed) of a message
  // sent here: a SendOwned buffer (c->data) goes back to the endpoint's
  // pool. Returns true if the send read application memory (SendZeroCopy):
  // the caller tells the WR (Qp::ReleaseZeroCopy).
  bool OnSendCompletion(Completion* c);

  // Messages the endpoint has not completed yet.
  uint64_t unacked() const { return unacked_; }
  // Of those, the ones that read application memory.
  uint64_t zero_copy_in_flight() const { return zero_copy_in_flight_; }

 private:
  // Counts an accepted send; maps a refused one to kRetry (backpressure)
  // or kFailed, and counts it.
  SendResult Result(const absl::Status& s, bool zero_copy);

  Endpoint* ep_;
  ContextCounters* counters_;
  std::vector<uint8_t> scratch_;
  uint64_t unacked_ = 0;
  uint64_t zero_copy_in_flight_ = 0;
};

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_SEND_BUFFERS_H_

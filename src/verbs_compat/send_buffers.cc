#include "verbs_compat/send_buffers.h"

#include <utility>

#include "verbs_compat/qp.h"

namespace braid::verbs_compat {

SendBuffers::SendBuffers(Endpoint* ep, ContextCounters* counters)
    : ep_(ep), counters_(counters) {
  scratch_.reserve(64 * 1024);
}

SendResult SendBuffers::Send(
    const NetAddr& peer, uint16_t stream, absl::Span<const uint8_t> msg,
    uint64_t cookie, const std::optional<PlacementDescriptor>& placement,
    uint32_t flow) {
  const SendOptions opts{
      .stream = stream, .cookie = cookie, .placement = placement, .flow = flow};
  if (msg.size() >= kZeroCopyMinBytes && msg.data() == scratch_.data() &&
      msg.size() == scratch_.size()) {
    // Refused, SendOwned leaves scratch_ as it was.
    const SendResult r =
        Result(ep_->SendOwned(peer, std::move(scratch_), opts), false);
    // The next message is likely as long: a buffer of its size class.
    if (r == SendResult::kOk) scratch_ = ep_->TakeBuffer(msg.size());
    return r;
  }
  return Result(ep_->Send(peer, msg, opts), false);
}

SendResult SendBuffers::SendZeroCopy(
    const NetAddr& peer, uint16_t stream, absl::Span<const uint8_t> header,
    absl::Span<const uint8_t> body, uint64_t cookie,
    const std::optional<PlacementDescriptor>& placement) {
  return Result(
      ep_->SendZeroCopy(peer, body,
                        {.stream = stream,
                         .cookie = cookie | (1ull << kCookieZeroCopyBit),
                         .placement = placement,
                         .prefix = header}),
      true);
}

SendResult SendBuffers::Result(const absl::Status& s, bool zero_copy) {
  if (s.ok()) {
    ++unacked_;
    if (zero_copy) {
      ++zero_copy_in_flight_;
      ++counters_->zero_copy_sends;
    }
    return SendResult::kOk;
  }
  if (s.code() == absl::StatusCode::kResourceExhausted) {
    ++counters_->send_retries;
    return SendResult::kRetry;
  }
  ++counters_->transport_failures;
  return SendResult::kFailed;
}

bool SendBuffers::OnSendCompletion(Completion* c) {
  if (unacked_ > 0) --unacked_;
  if (c->data.capacity() > 0) ep_->Recycle(std::move(c->data));
  if (!((c->cookie >> kCookieZeroCopyBit) & 1)) return false;
  if (zero_copy_in_flight_ > 0) --zero_copy_in_flight_;
  return true;
}

}  // namespace braid::verbs_compat

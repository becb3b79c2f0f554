#include "endpoint/drive_loop.h"

#include <utility>

#include "absl/types/span.h"

namespace braid::endpoint {

DriveLoop::DriveLoop(backend::Backend* backend, EndpointCore* core,
                     Clock* clock, const DriveLoopOptions& options)
    : backend_(backend),
      core_(core),
      clock_(clock),
      options_(options),
      tx_(options.burst, backend->MaxDatagram()),
      rx_(options.burst),
      rx_stamps_(options.auto_rx_timestamps, options.late_poll_gap,
                 options.rx_timestamps_linger),
      answers_(core->ack_delay()) {}

absl::Status DriveLoop::Send(const NetAddr& peer, OutMessage&& m) {
  if (sent_since_poll_ && !caller_blocks_) {
    // Not the first Send since the last Poll: the application is sending
    // a batch. Let it build up; the next Poll or Flush sends it with small
    // messages sharing datagrams and one backend call per burst, instead of
    // one datagram and one call per Send. Nothing leaves now, so the clock
    // is read only if the message needs the time (a new, sleeping or idle
    // peer; the answer clock has nothing pending after the batch's first
    // Send): a reading costs as much as the rest of a small message's Send.
    TimeNs now = TimeNs::Infinite();
    const auto read = [&] {
      if (now.IsInfinite()) now = clock_->Now();
      return now;
    };
    if (answers_.pending()) answers_.Answered(read());
    absl::Status s = core_->Send(read, peer, std::move(m));
    if (s.ok()) tx_deferred_ = true;
    return s;
  }
  const TimeNs now = clock_->Now();
  answers_.Answered(now);
  absl::Status s = core_->Send(now, peer, std::move(m));
  if (!s.ok()) return s;
  // The first message after a Poll goes at once (a ping-pong's reply),
  // carrying the acks the last Poll held.
  sent_since_poll_ = true;
  Transmit(now, /*hold_acks=*/false);
  // The reply has left: now the acks the last Poll held back (ack
  // deferral) cost nobody any latency.
  if (core_->HasDeferredAcks()) core_->ApplyDeferredAcks(now);
  return s;
}

size_t DriveLoop::Receive(TimeNs* now) {
  size_t received = 0;
  rx_backlog_ = false;
  for (int round = 0; round < options_.max_rx_bursts; ++round) {
    const size_t n = backend_->RxBurst(absl::MakeSpan(rx_));
    if (n > 0 && now->IsInfinite()) {
      *now = backend_->LastRxTime();
      if (now->IsInfinite()) *now = clock_->Now();
    }
    for (size_t i = 0; i < n; ++i) {
      core_->OnDatagram(*now, rx_[i].src,
                        absl::MakeConstSpan(rx_[i].data, rx_[i].len), rx_[i].ce,
                        rx_[i].arrival, rx_[i].local);
    }
    received += n;
    if (n < rx_.size()) return received;
  }
  rx_backlog_ = true;  // bounded, so transmit gets its turn under a flood
  return received;
}

size_t DriveLoop::Poll(std::vector<Completion>* out, size_t max) {
  // Sends wait for the backend to let go of their bytes (zero-copy by
  // reference): ask it to hand them back as soon as it can.
  if (core_->HasHeldSends()) backend_->ReleaseTails();
  if (closed_) return core_->PollCompletions(out, max);
  // The clock is read once per Poll on the paths that matter: an empty
  // poll reads it for the timers; a poll that receives uses the backend's
  // reading taken right after the receive (the UDP backend reads the clock
  // anyway, to convert kernel timestamps), so a ping-pong's reply is not
  // delayed by two more clock reads.
  TimeNs now = TimeNs::Infinite();
  // Acks that arrive with data wait for the application's answer to that
  // data (EndpointCore::set_defer_acks) when acks are held for it too;
  // applied below when this Poll holds none after all.
  const bool may_hold_acks =
      (!acks_held_ || hold_through_polls_) && !caller_blocks_ && max > 0;
  core_->set_defer_acks(may_hold_acks && answers_.MayHold());
  const size_t received = Receive(&now);
  // Processing several datagrams takes time: read the clock again for the
  // timers and the transmit (a lone datagram, a reply's request, is handled
  // in well under a microsecond).
  if (received != 1) now = clock_->Now();
  answers_.Returned(now);
  if (rx_stamps_.pending()) rx_stamps_.OnPoll(now, backend_);
  // When this Poll hands the application received messages, an ack-only
  // datagram waits: the application may answer (Send), and the ack then
  // rides on the answer. It goes out at the latest in the next Poll or
  // Flush — or, while the application's answers usually come in time
  // (AnswerClock::MayHoldThroughPolls), it waits through later Polls (an
  // application may poll again, or other queues, before it answers) until
  // the answer, a Flush, or the ack delay after the hand-off. Never for
  // callers that block on an fd themselves (they may sleep right after
  // this Poll), and not while the application comes back later than the
  // peer's timers allow an ack to wait (AnswerClock::MayHold). A hold is
  // never extended or renewed at once: a receiver that keeps getting
  // messages and does not answer acks at least every other Poll. The acks
  // received with the messages wait likewise (deferral, above); otherwise
  // they are applied now.
  const bool messages = core_->HasReceivedMessages();
  bool hold = false;
  if (acks_held_) {
    hold = may_hold_acks && now < hold_until_;  // through polls only
    if (!hold && hold_through_polls_) answers_.HoldExpired();
  } else if (may_hold_acks && messages && answers_.MayHold()) {
    hold = true;
    hold_through_polls_ = answers_.MayHoldThroughPolls();
    hold_until_ = now + answers_.limit();
  }
  if (!hold && core_->HasDeferredAcks()) core_->ApplyDeferredAcks(now);
  if (core_->NextWake() <= now) core_->OnTimer(now);
  sent_since_poll_ = false;
  Transmit(now, hold);
  acks_held_ = hold;
  const size_t n = core_->PollCompletions(out, max);
  // The application's turnaround (to answer a message) starts now, after
  // this Poll's transmit, not at `now`. Callers that block never get acks
  // held: no clock read for them.
  if (n > 0 && messages && !caller_blocks_) answers_.Handed(clock_->Now());
  return n;
}

void DriveLoop::Flush() {
  if (closed_) return;
  if (core_->HasDeferredAcks()) core_->ApplyDeferredAcks(clock_->Now());
  if (acks_held_ || tx_deferred_) {
    const TimeNs now = clock_->Now();
    answers_.Returned(now);
    // Asleep without an answer: the hold did not pay.
    if (acks_held_ && hold_through_polls_) answers_.HoldExpired();
    Transmit(now, /*hold_acks=*/false);
  }
}

void DriveLoop::Close() {
  if (core_->closed()) return;
  core_->Close(clock_->Now());
  closed_ = true;
}

void DriveLoop::Transmit(TimeNs now, bool hold_acks) {
  if (!hold_acks) acks_held_ = false;
  tx_deferred_ = false;
  for (int round = 0; round < options_.max_tx_batches; ++round) {
    if (tx_off_ == tx_.size()) {
      tx_.clear();
      tx_off_ = 0;
      if (core_->PollTx(now, &tx_, hold_acks, options_.uncopied_payloads) ==
          0) {
        break;
      }
      if (options_.group_by_entropy) {
        // Made at first use: its table has a slot per entropy value.
        if (grouper_ == nullptr) {
          grouper_ = std::make_unique<backend::EntropyGrouper>(
              options_.burst, backend_->EntropyCount());
        }
        grouper_->Group(tx_.mutable_packets());
      }
    }
    // Datagrams the backend refused (e.g. a full socket buffer) stay in tx_
    // and go first next time; the core is not asked for more until they
    // left.
    while (tx_off_ < tx_.size()) {
      const size_t k = backend_->TxBurst(tx_.packets().subspan(tx_off_));
      if (k == 0) {
        ++tx_backpressure_;
        // Kept until the next transmit, while acks may complete the
        // messages whose buffers the datagrams still point into.
        tx_.Materialize(tx_off_);
        return;
      }
      tx_off_ += k;
    }
    if (!tx_.full()) break;  // the core had no more to send
  }
}

}  // namespace braid::endpoint

// DriveLoop: the one loop that drives an EndpointCore over a backend —
// receive bursts into the core, run due timers, transmit bursts — with the
// policies that decide when datagrams leave: acks held for the
// application's answer (AnswerClock, EndpointCore::set_defer_acks), sends
// batched after the first one of a Poll, datagrams the backend refused kept
// and offered again first. Endpoint runs it over a real backend and
// CLOCK_MONOTONIC; the simulator's scenario harness and the benchmarks run
// the same loop over the sim backend or an in-memory pipe in virtual time.
//
// How a caller drives it (Endpoint's public calls map one to one):
//   Send(peer, m)   the application sends: the first Send after a Poll
//                   transmits at once (carrying the acks that Poll held);
//                   later ones wait for the next Poll or Flush.
//   Poll(out, max)  receive, timers, transmit; then completions to `out`.
//   Flush()         before the caller sleeps: whatever waits (held acks,
//                   batched sends, deferred acks) leaves now.
// Time comes from a Clock (base/clock.h), read at most twice per Poll and once
// per Send; the core itself never reads a clock. Allocates nothing per packet
// and makes one virtual backend call per burst.
#ifndef BRAID_ENDPOINT_DRIVE_LOOP_H_
#define BRAID_ENDPOINT_DRIVE_LOOP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "backend/backend.h"
#include "backend/entropy_grouper.h"
#include "base/answer_clock.h"
#include "base/clock.h"
#include "braid/completion.h"
#include "braid/time.h"
#include "endpoint/endpoint_core.h"
#include "endpoint/out_message.h"
#include "endpoint/rx_timestamp_switch.h"
#include "endpoint/tx_batch.h"

namespace braid::endpoint {

struct DriveLoopOptions {
  // Datagrams per receive burst and per transmit batch.
  size_t burst = 256;
  // Receive bursts per Poll at most: under a flood the rest waits for the
  // next Poll, so transmit (acks, replies) gets its turn.
  int max_rx_bursts = 8;
  // Transmit batches per transmit at most.
  int max_tx_batches = 16;
  // EndpointCore::PollTx's uncopied_payloads (a large last payload leaves
  // from the message's buffer as a second piece).
  bool uncopied_payloads = true;
  // Reorder each transmit batch so datagrams of one entropy are adjacent
  // (EntropyGrouper), for backends that send a same-path run with one call.
  bool group_by_entropy = true;
  // RxTimestamps::kAuto: switch the backend's receive timestamps by the
  // gaps between Polls (RxTimestampSwitch); off = leave them as set.
  bool auto_rx_timestamps = false;
  DurationNs late_poll_gap = DurationNs::Micros(250);
  DurationNs rx_timestamps_linger = DurationNs::Millis(10);
};

class DriveLoop {
 public:
  // Drives `core` over `backend` with time from `clock` (none owned; all
  // must outlive the loop). Allocates its buffers here, none later.
  DriveLoop(backend::Backend* backend, EndpointCore* core, Clock* clock,
            const DriveLoopOptions& options);

  // Hands `m` to the core (EndpointCore::Send's errors) and applies the
  // send-batching policy: the first Send after a Poll transmits at once
  // and then applies the acks that Poll deferred; later ones wait for the
  // next Poll or Flush (unless the caller blocks, set_caller_blocks).
  absl::Status Send(const NetAddr& peer, OutMessage&& m);

  // Receives (at most max_rx_bursts bursts), runs due timers, transmits,
  // and moves up to `max` completions to `out`. When it hands out received
  // messages, may hold ack-only datagrams for the application's answer:
  // until the next call, or, for an application that usually answers in
  // time, through later Polls until the answer (Send), a Flush, or the ack
  // delay (see drive_loop.cc). Returns the completions moved. After Close
  // only completions are moved.
  size_t Poll(std::vector<Completion>* out, size_t max);

  // Before the caller sleeps: applies deferred acks and transmits held
  // acks and batched sends. Cheap when nothing waits (no clock read).
  void Flush();

  // Fails every pending send (EndpointCore::Close) and stops all I/O.
  void Close();

  // From now on the caller may sleep after any call (it blocks on an fd
  // itself): every Send transmits at once and no ack is held. One-way.
  void set_caller_blocks() { caller_blocks_ = true; }
  // RxTimestamps::kAuto: the caller blocks from now on, so datagrams may
  // wait while it sleeps; timestamps stay on for good.
  void StartRxTimestamps() { rx_stamps_.Start(backend_); }
  bool rx_timestamps_pending() const { return rx_stamps_.pending(); }

  // Earliest time Poll must run although nothing arrives: the core's
  // next timer or the backend's deadline.
  TimeNs NextWake() const {
    return Min(core_->NextWake(), backend_->NextDeadline());
  }
  // The last Poll stopped receiving at max_rx_bursts with more waiting.
  bool rx_backlog() const { return rx_backlog_; }
  bool closed() const { return closed_; }

  // Transmits what the core has to send at `now`; `hold_acks` as
  // EndpointCore::PollTx. Refused datagrams are kept and go first next time.
  void Transmit(TimeNs now, bool hold_acks);

  // Transmit calls that met back-pressure (EndpointStats::tx_backpressure).
  uint64_t tx_backpressure() const { return tx_backpressure_; }
  // RxTimestamps::kAuto switches (EndpointStats::rx_timestamp_switches).
  uint64_t rx_timestamp_switches() const { return rx_stamps_.switches(); }

 private:
  // Receives up to max_rx_bursts bursts into the core; returns the count.
  // `*now`: the time of the first non-empty burst (else left Infinite).
  size_t Receive(TimeNs* now);

  backend::Backend* backend_;
  EndpointCore* core_;
  Clock* clock_;
  const DriveLoopOptions options_;
  TxBatch tx_;
  size_t tx_off_ = 0;  // tx_[0, tx_off_) went out; the rest waits
  // Sprayed bursts alternate entropies; grouping them (stable per entropy,
  // so each path stays FIFO) lets the backend send each group with one
  // syscall / GSO super-datagram.
  std::unique_ptr<backend::EntropyGrouper> grouper_;  // made at first use
  std::vector<backend::RxPacket> rx_;
  RxTimestampSwitch rx_stamps_;
  AnswerClock answers_;              // may acks wait for the answer?
  bool acks_held_ = false;           // the last Poll held ack-only datagrams
  bool hold_through_polls_ = false;  // ... and may hold them until
  TimeNs hold_until_;                // then, if no answer comes first
  bool sent_since_poll_ = false;     // a Send transmitted since the last Poll
  bool tx_deferred_ = false;         // Sends since then wait for Poll / Flush
  bool caller_blocks_ = false;       // set_caller_blocks
  bool rx_backlog_ = false;
  bool closed_ = false;
  uint64_t tx_backpressure_ = 0;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_DRIVE_LOOP_H_

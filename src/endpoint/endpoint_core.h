// EndpointCore: the whole I/O-free endpoint — the peer table, inbound
// datagram dispatch, outbound datagram assembly, timers and the completion
// queue. A driver (the simulator, or Endpoint over a real backend) calls it
// with `now`; it never reads a clock, opens a socket or starts a thread.
#ifndef BRAID_ENDPOINT_ENDPOINT_CORE_H_
#define BRAID_ENDPOINT_ENDPOINT_CORE_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/rng.h"
#include "braid/completion.h"
#include "braid/endpoint.h"
#include "braid/options.h"
#include "braid/stats.h"
#include "endpoint/activity_list.h"
#include "endpoint/endpoint_secret.h"
#include "endpoint/held_sends.h"
#include "endpoint/out_message.h"
#include "endpoint/packet_guard.h"
#include "endpoint/peer.h"
#include "endpoint/peer_table.h"
#include "endpoint/ring.h"
#include "endpoint/tx_batch.h"
#include "endpoint/wake_heap.h"
#include "reorder/buffer_pool.h"

namespace braid::endpoint {

struct CoreConfig {
  ProtocolOptions proto;
  // Non-zero; random per open. Never sent: each peer is shown its own
  // incarnation derived from it with `secret` (EndpointSecret).
  uint64_t incarnation = 0;
  // The key of the endpoint's unguessable values (per-peer incarnations,
  // challenge nonces). Endpoint::Open draws it from the kernel; a fixed
  // key (tests, the simulator) makes them predictable.
  EndpointSecret::Key secret{};
  // Packet protection (auth / encrypt), or null for none. Owned by the one
  // core built from this config (it holds per-endpoint counters).
  std::shared_ptr<PacketGuard> guard;
  uint64_t seed = 1;  // path choices
  uint32_t entropy_count = 16384;
  uint32_t max_datagram = 1472;
  uint16_t local_port =
      0;  // the port peers send to (written in every datagram)
  // With PollTx(..., uncopied_payloads=true): the smallest last payload that
  // stays in the message's buffer as a second iovec instead of being copied
  // into the datagram. A second iovec costs the kernel a separate copy step
  // per datagram. Measured on loopback (docs/performance.md):
  // 8944-byte payloads (MTU 9000) go 4-13 % faster uncopied; 1448-byte ones
  // (MTU 1500) went 40 % faster copied one day and 2-4 % slower the next.
  uint32_t min_uncopied_payload = 8192;
  // PollTx builds datagrams that are one full-size fragment of a message in
  // progress through Peer::BuildFullDatagrams (same bytes, less work per
  // datagram). Off only to compare the two paths in tests.
  bool full_datagram_fast_path = true;
  // Acks of whole GSO runs are applied as runs (SentPacketManager's
  // AckedRun; the same outcome, less work per packet). Off only to compare
  // the two in tests.
  bool acked_runs = true;
  // The backend keeps packets' tails past TxBurst (Backend::KeepsTails):
  // messages get holds, and a send completes only once its hold is free.
  bool keep_tails = false;
  // Bytes written of each received fragment (reorder::ReassemblerOptions::
  // fragment_copy_limit): less than all only in simulations whose packets
  // carry just the first bytes of each payload. Default: every byte.
  uint32_t fragment_copy_limit = UINT32_MAX;
};

// The spray run Endpoint::Open uses when ProtocolOptions::spray_run is 0:
// one run per path = one UDP GSO super-datagram of datagrams this size
// (44 of 1472 bytes, 7 of 8972; at most 64).
inline uint16_t DefaultSprayRun(uint32_t max_datagram) {
  return static_cast<uint16_t>(
      std::clamp<uint32_t>(65507 / std::max<uint32_t>(max_datagram, 1), 1, 64));
}

class EndpointCore final : public PeerHost {
 public:
  explicit EndpointCore(const CoreConfig& cfg);
  ~EndpointCore() override;

  // Accepts a message for `to`. Errors: FailedPrecondition (closed),
  // InvalidArgument (bad address, too large), ResourceExhausted (send queue
  // or peer table full; retry after polling completions).
  absl::Status Send(TimeNs now, const NetAddr& to, OutMessage&& m);
  // The same, reading the time through `now` only when the send needs it:
  // for a new or sleeping peer, or one with nothing queued or in flight
  // (its silence deadline starts). A batch of sends to a busy peer reads
  // no clock.
  absl::Status Send(absl::FunctionRef<TimeNs()> now, const NetAddr& to,
                    OutMessage&& m);

  // One received datagram. Malformed or stale frames are dropped and counted.
  // `arrival`: when it reached this host (kernel timestamp) if known and not
  // after `now`; RTT samples and ack delays are measured from it, so time
  // spent waiting for this process to run does not count as network delay.
  // `local`: the backend's tag of the local address it was sent to
  // (RxPacket::local); answers to that peer leave from that address.
  void OnDatagram(TimeNs now, const NetAddr& from,
                  absl::Span<const uint8_t> bytes, bool ce,
                  TimeNs arrival = TimeNs::Infinite(), uint8_t local = 0);
  // Runs every timer that is due at `now`, and puts to sleep (Peer::Sleep)
  // peers that have been idle for peer_timeout: an idle peer then costs a
  // few hundred bytes instead of its windows and buffers, which it gets
  // back at its next send or datagram. At most kSleepsPerTimer peers are
  // looked at per call (NextWake then says to call again at once).
  void OnTimer(TimeNs now);
  static constexpr int kSleepsPerTimer = 64;
  // Appends datagrams to `batch` until it is full or nothing is left to send
  // now. Returns the number appended. `hold_acks`: build no ack-only
  // datagram (acks ride on data only); the driver must call again without
  // it soon — Endpoint does so at the application's next Send, Poll or Wait,
  // so an ack rides on the reply the application sends in between.
  // `uncopied_payloads`: a datagram's last large payload may stay in the
  // message's buffer as the packet's second piece (TxPacket::tail) instead
  // of being copied into the slot; the batch must then be transmitted (or
  // TxBatch::Materialize'd) before acks are processed again.
  size_t PollTx(TimeNs now, TxBatch* batch, bool hold_acks = false,
                bool uncopied_payloads = false);
  // Earliest time OnTimer must run; Infinite if none. (PollTx work that is
  // ready now is signalled by WantsToSend.) O(1), plus one wake computation
  // per peer whose state changed since the last call. It includes when the
  // least recently active awake peer may go to sleep (see OnTimer).
  TimeNs NextWake() const {
    if (!wake_dirty_.empty()) FlushWakes();
    const PeerEntry* p = active_.front();
    if (p == nullptr) return wakes_.Earliest();
    return Min(wakes_.Earliest(), SleepCheckAt(p));
  }
  // NextWake without putting idle peers to sleep: the earliest time a
  // peer's own timer (loss detection, a due ack, a probe, its timeout) is
  // due; Infinite once every exchange is settled (what a test that waits
  // for quiet asks).
  TimeNs NextPeerTimer() const {
    if (!wake_dirty_.empty()) FlushWakes();
    return wakes_.Earliest();
  }
  bool WantsToSend(TimeNs now) const;

  // Ack deferral, for a driver whose application answers the messages it
  // is handed (Endpoint turns it on while it holds acks for the answer).
  // While on, an ack that arrives in a datagram that also carries data is
  // copied and held instead of processed, so the answer to that data is
  // built and sent first: processing an ack (RTT sample, path and
  // congestion state, completing the sends it acknowledges) otherwise sits
  // between a ping's arrival and its pong, on both sides of a round trip.
  // The driver calls ApplyDeferredAcks once the answer has left (Endpoint:
  // after the application's next Send has been transmitted, or at its next
  // Poll or Wait). A held ack is applied earlier by whatever needs it: the
  // next datagram (acks stay in order), a due timer of its peer (no
  // retransmission of what it acknowledges), Close. Never held: an ack
  // alone in its datagram, and one with more than kMaxDeferredSackWords
  // SACK words (a bulk flow's). RTT samples are measured from the
  // datagram's arrival, so holding an ack does not lengthen them.
  static constexpr uint16_t kMaxDeferredSackWords = 4;
  void set_defer_acks(bool on) { defer_acks_ = on; }
  void ApplyDeferredAcks(TimeNs now);
  bool HasDeferredAcks() const { return !deferred_.empty(); }

  // Cost of the poll loop does not grow with idle peers: OnTimer visits only
  // peers whose timers are due and PollTx only peers that may have something
  // to send. Peers PollTx has visited, in total (EndpointStats::
  // tx_peer_visits).
  uint64_t tx_peer_visits() const { return tx_peer_visits_; }
  // Datagrams built by the bulk fast path (Peer::BuildFullDatagrams).
  uint64_t full_datagrams() const { return full_datagrams_; }

  // Installs the placement handler (see Endpoint::SetPlacementHandler).
  void SetPlacementHandler(PlacementHandler h) {
    placement_handler_ = std::move(h);
  }
  // A buffer for a copying send, with capacity for at least `n` bytes when
  // a recycled one fits (empty, size 0). Fill it and pass it in
  // OutMessage::owned.
  std::vector<uint8_t> TakeBuffer(size_t n);

  // Takes back a received message's buffer for later receives (the bounded
  // pool the reassembler draws from frees what does not fit). Leaves `b`
  // empty.
  void RecycleReceived(std::vector<uint8_t>&& b) { pool_.Put(std::move(b)); }
  // An empty buffer with capacity >= n from that pool (allocated if none
  // fits): Endpoint::TakeBuffer.
  std::vector<uint8_t> TakePooled(size_t n) {
    std::vector<uint8_t> b = pool_.Reserve(n);
    b.clear();
    return b;
  }

  // Moves up to `max` completions to `out` (appending). Returns the count.
  size_t PollCompletions(std::vector<Completion>* out, size_t max);
  // Whether received messages (kRecv) are among the completions.
  bool HasReceivedMessages() const { return unpolled_messages_ > 0; }

  // Fails every pending send with kClosed; later Sends fail.
  void Close(TimeNs now);
  bool closed() const { return closed_; }
  // True if PollCompletions has completions to hand out.
  bool HasCompletions() const { return !completions_.empty(); }

  uint64_t incarnation() const { return cfg_.incarnation; }
  // How long a peer lets an ack wait (ProtocolOptions::ack_delay).
  DurationNs ack_delay() const { return cfg_.proto.ack_delay; }
  uint32_t mss() const { return peer_cfg_.mss; }
  EndpointStats stats() const;
  std::vector<PeerStats> peer_stats(bool with_paths) const;
  const DropStats& drops() const { return drops_; }

  // Received bytes waiting to be polled reach receive_queue_bytes.
  bool ReceiveQueueFull() const;

  // PeerHost
  void Complete(Completion&& c) override;
  uint64_t ReceiveQueueRoom() const override;
  reorder::BufferPool* buffer_pool() override { return &pool_; }
  reorder::ReassemblyBudget* reassembly_budget() override { return &budget_; }
  bool Place(const NetAddr& peer, uint16_t stream,
             const wire::PlacementExt& ext, uint32_t msg_len,
             absl::Span<uint8_t>* dest) override;
  void RecycleBuffer(std::vector<uint8_t>&& b) override;
  backend::TxHold* AcquireHold() override {
    return cfg_.keep_tails ? held_.Acquire() : nullptr;
  }
  void CompleteSend(Completion&& c, std::vector<uint8_t>&& buffer,
                    backend::TxHold* hold) override;

  // Sends that finished but wait for the backend to let go of their bytes;
  // they complete at a later PollCompletions (Backend::ReleaseTails helps).
  bool HasHeldSends() const { return !held_.empty(); }

 private:
  // An ack held by deferral (at most one per peer; PeerEntry::ack_deferred).
  struct DeferredAck {
    PeerEntry* peer;
    wire::AckHeader h;
    TimeNs arrival;
    uint16_t return_port;
    uint8_t sack[kMaxDeferredSackWords * 8];
  };
  // Processes the held ack deferred_[i] and removes it.
  void ApplyDeferredAck(size_t i, TimeNs now);
  // Processes the ack `p` holds, if any.
  void ApplyDeferredAckOf(PeerEntry* p, TimeNs now);
  // A control frame answering a datagram (STALE, a challenge, a challenge
  // reply), sent alone in a datagram by the next PollTx.
  struct CtrlReply {
    NetAddr to;
    uint8_t local;  // answered from the address it was sent to
    wire::CtrlFrame frame;
  };
  // The peer at `addr`, or null.
  PeerEntry* FindPeer(const NetAddr& addr);
  // The peer at `addr`, created if absent; null if the table is full.
  // `our_inc`: the incarnation we present to it, if already computed (0:
  // computed here).
  PeerEntry* FindOrCreatePeer(TimeNs now, const NetAddr& addr,
                              Claimant claimant = Claimant::kSend,
                              uint64_t our_inc = 0);
  // The same for an `addr` that FindPeer has just not found.
  PeerEntry* CreatePeer(TimeNs now, const NetAddr& addr,
                        Claimant claimant = Claimant::kSend,
                        uint64_t our_inc = 0);
  // The incarnation we present to the peer at `addr`.
  uint64_t OurIncarnationFor(const NetAddr& addr) const {
    return secret_.PairIncarnation(cfg_.incarnation, addr);
  }
  // Reassembly memory ran out: evicts peers that have proven nothing and
  // hold partial messages until the committed bytes are back below 3/8 of
  // the cap (a quarter under the half open to such peers), or none is left.
  void RelieveReassemblyPressure(TimeNs now);
  void CountParseError(wire::ParseError e);
  // Whether a frame naming incarnations `src` -> `dst` is for this life of
  // ours, which presents itself to `from` as `our_inc` (`by_sender`: a
  // frame its sender may send before it knows us, dst 0). Counts what is
  // not; for a sender's frame meant for an earlier life, queues one STALE
  // reply to `from` (bounded).
  bool AddressedToUs(uint64_t src, uint64_t dst, bool by_sender,
                     const NetAddr& from, uint8_t local, uint64_t our_inc);
  // Queues a control reply (bounded; consecutive duplicates collapsed).
  void QueueCtrlReply(const NetAddr& to, uint8_t local,
                      const wire::CtrlFrame& c);
  // A claim that `peer` restarted as `claimed`: challenge its address.
  void Challenge(TimeNs now, PeerEntry* peer, uint64_t claimed, uint8_t local);
  // Queues a challenge of `kind` asking `to` (where we are `our_inc`) to
  // prove it is `inc`. True if queued.
  bool QueueChallenge(TimeNs now, const NetAddr& to, uint64_t our_inc,
                      uint64_t inc, wire::ChallengeKind kind, uint8_t local);
  // The table is three quarters full, or the reassembly memory open to
  // unproven peers half committed: a first contact is challenged instead
  // of given state (kFirstContact), as a flood of forged sources would
  // otherwise churn the table.
  bool FirstContactPressure() const;
  // A peer that sent us data but has proven nothing (it never acked our
  // data: a pure sender), while the peer table is half full or reassembly
  // memory a quarter committed: asks it to prove its address, at most once
  // per kReprove, so that it is not evicted as a forger would be. (Without
  // pressure nothing is asked: no datagram is added to normal traffic.)
  void ChallengeIfUnproven(TimeNs now, PeerEntry* peer, uint8_t local);
  // Asks `peer`'s current life to prove itself at its address, at most
  // once per kReprove.
  void ChallengeCurrent(TimeNs now, PeerEntry* peer, uint8_t local);
  // Packet protection: opens `bytes` from `from` (`peer`, null if none;
  // *our_inc computed if needed). False (counted) if it does not check out.
  bool OpenDatagram(TimeNs now, absl::Span<const uint8_t> bytes,
                    const NetAddr& from, PeerEntry* peer, uint64_t* our_inc,
                    crypto::SecurityHeader* h,
                    absl::Span<const uint8_t>* frames);
  // The peer's key cache (created on first use; packet protection only).
  PeerKeyCache* KeysOf(PeerEntry* p) {
    if (!p->keys) p->keys = std::make_unique<PeerKeyCache>();
    return p->keys.get();
  }
  // Seals packets [from, size()) of `batch`, all for `p` (null: each is a
  // control reply, sealed for the incarnations its frame names). One that
  // cannot be sealed is cut to a bare preamble (a receiver drops it).
  void Seal(TimeNs now, TxBatch* batch, size_t from, PeerEntry* p);
  // A kChallenge or kChallengeReply already addressed to us (`our_inc`)
  // from `from` (`peer`, null if we hold none). A genuine answer to a first
  // contact we challenged creates the peer: then *created is set to it.
  void OnChallengeFrame(TimeNs now, PeerEntry* peer, const wire::CtrlFrame& c,
                        const NetAddr& from, uint8_t local, uint64_t our_inc,
                        PeerEntry** created);
  // An ack frame of `peer`: processed now, or held (ack deferral).
  void OnAckFrame(PeerEntry* peer, TimeNs now, const wire::Frame& f, TimeNs at,
                  uint16_t return_port);
  // After anything that may have changed `p`'s state (a send to it, a
  // datagram from it, its timers, freed receive space, close): list it for
  // PollTx and re-key its wake time.
  void Touch(PeerEntry* p);
  // Marks `p`'s wake time stale. It is recomputed once, when the wake heap
  // is next read (NextWake, OnTimer), however many events touched the peer
  // in between (a ping-pong touched each peer about six times per round
  // trip, and each recomputation asks every timer of the peer).
  void WakeChanged(PeerEntry* p) {
    if (!p->wake_dirty) {
      p->wake_dirty = true;
      wake_dirty_.push_back(p);
    }
  }
  // Recomputes the stale wake times (const: NextWake is; the heap is a
  // cache of the peers' own deadlines).
  void FlushWakes() const;
  // When the core next looks at `p` (on the activity list) to put it to
  // sleep: peer_timeout after its last activity, or after it was last
  // found unfit to sleep.
  TimeNs SleepCheckAt(const PeerEntry* p) const {
    return Max(p->peer.last_activity(), p->act_checked) +
           cfg_.proto.peer_timeout;
  }
  // Puts idle peers to sleep, least recently active first (OnTimer).
  void SleepIdlePeers(TimeNs now);
  // A peer the table is about to evict: forget it everywhere.
  void Forget(PeerEntry* p);

  CoreConfig cfg_;
  PeerConfig peer_cfg_;
  EndpointSecret secret_;
  std::shared_ptr<PacketGuard> guard_;
  // Bytes in front of a datagram's frames (PeerConfig::lead).
  uint32_t lead_ = wire::kPreambleSize;
  Rng rng_;
  reorder::BufferPool pool_;
  // Before peers_: their reassemblers give memory back to it on the way out.
  reorder::ReassemblyBudget budget_;
  PeerTable peers_;
  // The peer FindPeer found last (lookup cache). Peers leave the table only
  // by eviction in PeerTable::Insert, so it is cleared around every Insert.
  PeerEntry* last_peer_ = nullptr;
  PlacementHandler placement_handler_;
  Ring<Completion> completions_;
  HeldSends held_;
  size_t unpolled_messages_ = 0;  // kRecv entries in completions_
  // Copies of finished copying sends, reused by later ones (bounded).
  std::vector<std::vector<uint8_t>> free_copies_;
  size_t free_copy_bytes_ = 0;
  uint64_t unpolled_bytes_ = 0;
  bool was_full_ = false;
  uint64_t pending_sends_ = 0;
  bool closed_ = false;
  std::vector<CtrlReply> ctrl_replies_;
  size_t rr_next_ = 0;
  // Peers that may have something to send (PollTx visits only these; a peer
  // leaves the list when a turn ends with nothing left to send) and every
  // peer's next wake time.
  std::vector<PeerEntry*> ready_;
  // Peers whose last credit the receive queue's room held down
  // (Peer::TakeCreditSqueezed after building); told when the application
  // polls.
  std::vector<PeerEntry*> squeezed_;
  mutable WakeHeap<PeerEntry> wakes_;
  // The awake peers, least recently active first (Touch moves a peer to
  // the back): where SleepIdlePeers looks.
  ActivityList<PeerEntry> active_;
  mutable std::vector<PeerEntry*> wake_dirty_;  // peers whose wake_dirty is set
  std::vector<PeerEntry*> due_;                 // scratch for OnTimer
  bool defer_acks_ = false;
  std::vector<DeferredAck> deferred_;
  uint64_t tx_peer_visits_ = 0;
  uint64_t full_datagrams_ = 0;
  DropStats drops_;
  // Endpoint totals.
  uint64_t datagrams_sent_ = 0, datagrams_received_ = 0;
  uint64_t bytes_sent_ = 0, bytes_received_ = 0;
  uint64_t peer_restarts_ = 0, provisional_replaced_ = 0;
  uint64_t challenges_sent_ = 0, challenges_answered_ = 0;
  uint64_t seal_failures_ = 0;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_ENDPOINT_CORE_H_

// The per-peer protocol core: everything braid keeps about one remote
// endpoint. Two halves do the work: PeerSender (what we send: sessions,
// messages, the sent-packet manager, paths, congestion control) and
// PeerReceiver (what we receive: the receive window, reassembly, ordered
// release, acks and credit). Peer joins them where they meet: the
// incarnation check that resets both, the datagram that carries control
// frames, an ack and data together, and the return-path judgement that
// needs the receiver's acks and the sender's paths. I/O-free: driven by
// frames, timers and "build the next datagram", with `now` passed in.
//
// Asleep and awake. The halves hold the windows, buffers and path state
// (tens of KiB); a peer keeps them only while it is active. An idle peer
// can be put to sleep (Sleep): the halves are freed and the peer keeps its
// identity and what they need to go on where they stopped (PeerSender::
// Resume, PeerReceiver::Resume), a few hundred bytes. Anything that needs
// them wakes it (Wake, called by every entry point below that changes
// state); queries on a sleeping peer answer as for an idle one.
#ifndef BRAID_ENDPOINT_PEER_H_
#define BRAID_ENDPOINT_PEER_H_

#include <array>
#include <cstdint>
#include <memory>

#include "absl/functional/function_ref.h"
#include "braid/address.h"
#include "braid/stats.h"
#include "braid/time.h"
#include "endpoint/out_message.h"
#include "endpoint/peer_link.h"
#include "endpoint/peer_receiver.h"
#include "endpoint/peer_sender.h"
#include "endpoint/tx_batch.h"
#include "wire/frames.h"

namespace braid::endpoint {

// Adds the counters of `s` into `acc` (not the gauges).
void AccumulatePeerCounters(const PeerStats& s, PeerStats* acc);

class Peer {
 public:
  // `our_inc`: the incarnation we present to this peer (non-zero).
  Peer(const PeerConfig& cfg, const NetAddr& addr, uint64_t seed,
       uint64_t our_inc, PeerHost* host, TimeNs now);
  ~Peer();
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  const NetAddr& addr() const { return link_.addr; }
  // The backend's tag of the local address this peer last reached us at
  // (RxPacket::local); datagrams to it leave from there. 0 until it has
  // sent us something, or when the backend does not tell addresses apart.
  uint8_t local() const { return link_.local; }
  void set_local(uint8_t tag) { link_.local = tag; }

  // --- Send side ---------------------------------------------------------
  // Queues a message. The endpoint has already checked size and limits.
  // `now()` is read only if the message wakes the peer or its sender.
  void Enqueue(OutMessage&& m, absl::FunctionRef<TimeNs()> now) {
    if (!awake()) WakeSlow(now());
    sender_->Enqueue(std::move(m), now);
  }
  void Enqueue(OutMessage&& m, TimeNs now) {
    Enqueue(std::move(m), [now] { return now; });
  }
  // Messages queued or in flight (not yet completed).
  size_t pending_messages() const {
    return awake() ? sender_->pending_messages() : 0;
  }

  // --- Inbound frames (already parsed and validated by wire/) -------------
  // `arrival`: when the datagram reached this host, if known (see
  // EndpointCore::OnDatagram); Infinite = now.
  void OnData(TimeNs now, const wire::DataHeader& h, const uint8_t* payload,
              bool ce, DropStats* drops, TimeNs arrival = TimeNs::Infinite());
  // `return_port`: the UDP source port the ack's datagram came from (the
  // receiver's entropy for it), 0 if unknown; see multipath::ReturnPaths.
  // A sleeping peer's sender has nothing unacknowledged: every ack is for a
  // session it has left, dropped as stale without waking it.
  void OnAck(TimeNs now, const wire::AckHeader& h, const uint8_t* sack,
             DropStats* drops, TimeNs arrival = TimeNs::Infinite(),
             uint16_t return_port = 0) {
    if (!awake()) {
      ++drops->stale_incarnation;
      return;
    }
    sender_->OnAck(now, h, sack, drops, arrival, return_port);
  }
  void OnCtrl(TimeNs now, const wire::CtrlFrame& c, DropStats* drops);
  // What a frame's source incarnation means for this peer.
  enum class Claim {
    kKnown,    // the incarnation we know (or the first we hear): accept
    kStale,    // not the peer's current life: drop (counted)
    kRestart,  // a frame that may announce one (`may_announce`: SYNC,
               // STALE) names a new one: the peer may have restarted, but
               // anyone can claim that. The caller challenges the address
               // (kChallenge); only a proof (AdoptIncarnation) acts on it.
               // Also any frame of another life while the one we know is
               // provisional: that one is then contested() and must be
               // challenged too.
    // A frame of the life we know while it is contested(): dropped
    // (counted); the caller asks that life again to prove itself (its
    // answer to the first challenge may have been lost).
    kContested,
  };
  // Checks a frame's incarnation against what we know of the peer. Counts
  // stale frames. `names_us`: the frame named the incarnation we show the
  // peer (dst != 0), which only the peer's address has been sent: that
  // confirms the incarnation it comes from. One learnt from a dst-0 frame
  // (anyone's, from a spoofed address) is provisional: a frame that names
  // us from another incarnation replaces it (the receive side restarts; our
  // send session stands, what we sent since is recovered as lost); one
  // that does not contests it (kRestart): until either proves itself,
  // frames of neither are taken (`contested_incarnation`).
  Claim CheckIncarnation(uint64_t src_incarnation, bool may_announce,
                         bool names_us, DropStats* drops);
  // A frame from `src` that names a wrong incarnation of ours (dropped by
  // the caller): if the life we know is provisional and `src` is another,
  // that one is contested as by CheckIncarnation's kRestart (its own frames
  // are then held until one of the two proves itself). A sender fooled by
  // a forger's first contact at *our* address names what the forger
  // claimed, so this is how a genuine peer's first frames, addressed to the
  // forger's claim, still stop the forger heard first here.
  void Contest(uint64_t src);
  // What AdoptIncarnation did.
  enum class Adopted {
    kNothing,  // `inc` was 0, retired, or the life we know (now confirmed)
    kFirst,    // we knew no life of the peer: `inc` is it
    // The life we knew was taken on trust (learnt from dst-0 frames, never
    // confirmed, e.g. a forger's first contact): `inc` replaces it, the
    // receive side restarts, our send session goes on towards `inc`.
    kReplacedProvisional,
    // The peer restarted: its confirmed old life is retired, both
    // directions reset (sends in flight fail with kPeerRestarted).
    kRestarted,
  };
  // The peer proved at its address that it is `inc` (it answered our
  // challenge).
  Adopted AdoptIncarnation(TimeNs now, uint64_t inc);
  // The incarnation we present to this peer.
  uint64_t our_incarnation() const { return link_.our_inc; }
  // The peer has shown it receives what we send to its address (it acked
  // our session or answered a challenge).
  bool proven() const { return link_.proven; }
  // Another life claims the address of a life we took on trust, and
  // neither has proven itself yet (PeerLink::contested).
  bool contested() const { return link_.contested; }
  void set_proven() { link_.proven = true; }

  // --- Output -------------------------------------------------------------
  // True if BuildDatagram would produce bytes now.
  bool WantsToSend(TimeNs now) const;
  // Writes one datagram (frames for this peer) into `out`. Returns its size,
  // 0 if nothing is to be sent. *entropy: the path's entropy value.
  // `hold_acks`: do not build a datagram that would carry only an ack (a
  // due ack still rides on data); the caller builds again soon without it.
  // `tail`: if non-null, the payload of the datagram's last data frame may
  // be left out of `out` and returned here instead (it then follows the
  // returned bytes on the wire): a span of the message's own buffer, valid
  // until the message completes, i.e. until acks are next processed.
  // `hold`: if non-null, set with `tail` to the message's hold (TxHold).
  size_t BuildDatagram(TimeNs now, absl::Span<uint8_t> out,
                       wire::Entropy* entropy, bool hold_acks = false,
                       absl::Span<const uint8_t>* tail = nullptr,
                       backend::TxHold** hold = nullptr);

  // Bulk fast path of BuildDatagram: appends up to `max` datagrams to
  // `batch` (each slot of at least max_datagram bytes), stopping at the
  // first datagram that would need more than one data frame filling it with
  // the next bytes of the message in progress: a control frame, an ack, a
  // re-send, the end or start of a message, or a closed window all leave it
  // to BuildDatagram. Each datagram is byte for byte, and changes the
  // peer's state exactly, as BuildDatagram (tail != nullptr iff
  // `uncopied`) would; it starts with `preamble` (PeerConfig::lead bytes:
  // the preamble and room for a security header).
  // What it saves is the per-datagram work of the general path (frame
  // checks, re-send queue peeks, deferred copies). Returns the count.
  size_t BuildFullDatagrams(TimeNs now, TxBatch* batch, size_t max,
                            absl::Span<const uint8_t> preamble, bool uncopied);
  // Cheap, inline part of BuildFullDatagrams' conditions: a message in
  // progress has bytes not yet sent (false for a ping-pong's replies and
  // acks, which then skip the call).
  bool MayBuildFull() const { return awake() && sender_->MayBuildFull(); }

  // Whether the next datagram of new data starts a spray run that `room`
  // more datagrams cannot hold whole. A run is what the UDP backend sends
  // as one GSO super-datagram; split over two batches it leaves as two
  // shorter sends, each costing the kernel about as much as a full one.
  bool RunWouldSplit(size_t room) const {
    return awake() && sender_->RunWouldSplit(room);
  }

  // --- Timers -------------------------------------------------------------
  void OnTimer(TimeNs now) {
    if (awake()) sender_->OnTimer(now);
  }
  // The peer challenged our first contact instead of taking it in (it was
  // under pressure: docs/protocol.md §13), so it dropped what we sent it
  // before it knew us: re-send that now rather than at the RTO. Only while
  // we do not know its incarnation (everything we sent named none). True
  // if something was queued to go again.
  bool OnFirstContactRefused(TimeNs now) {
    return awake() && link_.peer_inc == 0 &&
           sender_->OnFirstContactRefused(now);
  }
  // Earliest time this peer needs its driver to run: OnTimer, or PollTx for
  // an ack that is due. Infinite if none.
  TimeNs NextWake() const {
    if (!awake()) return TimeNs::Infinite();
    return Min(sender_->TimerDeadline(), receiver_->NextAckTime());
  }
  // Earliest time OnTimer has work: NextWake without the ack deadline.
  TimeNs TimerDeadline() const {
    return awake() ? sender_->TimerDeadline() : TimeNs::Infinite();
  }

  // --- Lifecycle ----------------------------------------------------------
  // Fails every queued and in-flight send with `cause`.
  void FailAll(FailureCause cause, TimeNs now) {
    if (awake()) sender_->FailAll(cause, now);
  }
  // Nothing queued, in flight, partially received or pending: safe to evict.
  bool Idle() const {
    return !awake() || (sender_->Idle() && receiver_->Idle());
  }
  // Frees the halves if the peer is Idle and its receiver can be rebuilt
  // later exactly (PeerReceiver::TakeResume); the peer keeps their
  // counters (FillStats stays monotonic). Returns whether it sleeps now
  // (true if it already did).
  bool Sleep();
  bool awake() const { return sender_ != nullptr; }
  TimeNs last_activity() const { return link_.last_activity; }
  // The application freed receive space: send a window update.
  void OnReceiveSpaceFreed() {
    if (awake()) receiver_->OnReceiveSpaceFreed();
  }
  // True once after an ack this peer built granted less credit than its
  // receive budget because the application's receive queue was short of
  // room: call OnReceiveSpaceFreed once the application polls, so the
  // credit grows again without waiting for data to arrive.
  bool TakeCreditSqueezed() {
    return awake() && receiver_->TakeCreditSqueezed();
  }

  void FillStats(PeerStats* s, bool with_paths) const;
  const ReliabilityStats& reliability() const;
  uint64_t peer_incarnation() const { return link_.peer_inc; }
  // Our sender has nothing queued, in flight or unacknowledged for it.
  bool SenderIdle() const { return !awake() || sender_->Idle(); }
  // It holds partial inbound messages.
  bool HoldsPartials() const {
    return awake() && receiver_->partial_messages() > 0;
  }

  // The halves, for tests and stats; only while awake().
  const PeerSender& sender() const { return *sender_; }
  const PeerReceiver& receiver() const { return *receiver_; }

 private:
  // Reaches the sender half's data frame builder from its test.
  friend struct PeerDataFramesTestAccess;

  bool IsRetired(uint64_t inc) const;
  // Rebuilds the halves of a sleeping peer from what Sleep kept.
  void Wake(TimeNs now) {
    if (!awake()) WakeSlow(now);
  }
  void WakeSlow(TimeNs now);
  // The peer restarted: the receive side starts over (a sleeping peer
  // forgets what it kept for it). `deliver_held`: see
  // PeerReceiver::OnPeerRestarted.
  void ForgetReceiveSide(bool deliver_held);
  // `inc` replaces a life taken on trust (never confirmed): that one is
  // retired and the receive side restarts; the send session stands.
  void ReplaceProvisional(uint64_t inc);

  PeerLink link_;
  std::array<uint64_t, 4> retired_incs_{};
  uint8_t retired_next_ = 0;
  bool has_rx_resume_ = false;  // rx_resume_ holds a sleeping receiver
  uint64_t seed_;               // of the next sender built
  // Where the next sender goes on; empty (.session == 0) until the first
  // Sleep, so the first sender picks its own.
  PeerSender::Resume tx_resume_;
  PeerReceiver::Resume rx_resume_;
  std::unique_ptr<PeerSender> sender_;
  std::unique_ptr<PeerReceiver> receiver_;
  // The counters of the halves it had before its last wake; null if none.
  std::unique_ptr<PeerStats> past_;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_PEER_H_

// The per-peer protocol core: everything braid keeps about one remote
// endpoint, both directions. It joins retransmit/ (what we sent), reorder/
// (what we received), multipath/ (the paths to the peer) and cc/ (how much
// may be in flight). I/O-free: driven by frames, timers and "build the next
// datagram", with `now` passed in.
//
// Sessions. A sender's packets to one peer form a session: a PSN space that
// starts at `base` with stream sequence numbers starting at 0. Until the
// receiver acknowledges the session, every datagram carries a SYNC frame
// first. A session restarts (new number, base = the next unused PSN) when its
// messages fail: the peer went silent, restarted, or lost our state. Only the
// messages in flight at that moment fail; queued ones flow in the new one.
#ifndef BRAID_ENDPOINT_PEER_H_
#define BRAID_ENDPOINT_PEER_H_

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "braid/address.h"
#include "braid/completion.h"
#include "braid/options.h"
#include "braid/stats.h"
#include "braid/time.h"
#include "cc/congestion_control.h"
#include "endpoint/out_message.h"
#include "endpoint/ring.h"
#include "endpoint/tx_batch.h"
#include "endpoint/wake_heap.h"
#include "multipath/path_set.h"
#include "multipath/return_paths.h"
#include "reorder/ack_scheduler.h"
#include "reorder/ordered_release.h"
#include "reorder/reassembler.h"
#include "reorder/receive_window.h"
#include "retransmit/sent_packet_manager.h"
#include "wire/frames.h"

namespace braid::endpoint {

class Peer;

// Where a peer reports completions and asks for endpoint-level services.
class PeerHost {
 public:
  virtual ~PeerHost() = default;
  // A send finished (done or failed) or a message arrived.
  virtual void Complete(Completion&& c) = 0;
  // Bytes the application's receive queue can still take before it is
  // full (receive_queue_bytes minus the received bytes that wait to be
  // polled, over all peers); 0 when full.
  virtual uint64_t ReceiveQueueRoom() const = 0;
  // `peer` granted less credit than its receive budget because the queue
  // was short of room: call its OnReceiveSpaceFreed once the application
  // polls, so the credit grows again without waiting for data to arrive.
  virtual void OnCreditSqueezed(Peer* peer) = 0;
  virtual reorder::BufferPool* buffer_pool() = 0;
  // Where the placed part of a message from `peer` goes (the endpoint's
  // placement handler); false = refused.
  virtual bool Place(const NetAddr& peer, uint16_t stream,
                     const wire::PlacementExt& ext, uint32_t msg_len,
                     absl::Span<uint8_t>* dest) = 0;
  // Takes back the copy of a finished copying send, for reuse by a later
  // one (Send then allocates nothing). The default frees it.
  virtual void RecycleBuffer(std::vector<uint8_t>&& b) {}
};

// Fixed settings of every peer of one endpoint.
struct PeerConfig {
  ProtocolOptions proto;
  uint64_t local_incarnation = 0;
  uint32_t max_datagram = 1472;  // bytes of one datagram
  uint32_t mss = 1424;           // payload bytes of one data frame
  uint32_t entropy_count = 16384;
  uint32_t min_uncopied_payload = 8192;  // see CoreConfig
  // PSNs past the lowest unacked one that new data may reach: what one of
  // our ack-only datagrams can report (wire::AckReachIn(max_datagram)).
  uint32_t ack_reach = wire::kAckReach;
  bool acked_runs = true;  // see CoreConfig
};

class Peer {
 public:
  Peer(const PeerConfig& cfg, const NetAddr& addr, uint64_t seed,
       PeerHost* host, TimeNs now);
  ~Peer();
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  const NetAddr& addr() const { return addr_; }
  // The backend's tag of the local address this peer last reached us at
  // (RxPacket::local); datagrams to it leave from there. 0 until it has
  // sent us something, or when the backend does not tell addresses apart.
  uint8_t local() const { return local_; }
  void set_local(uint8_t tag) { local_ = tag; }

  // --- Send side ---------------------------------------------------------
  // Queues a message. The endpoint has already checked size and limits.
  void Enqueue(OutMessage&& m, TimeNs now);
  // Messages queued or in flight (not yet completed).
  size_t pending_messages() const { return queued_.size() + inflight_count_; }

  // --- Inbound frames (already parsed and validated by wire/) -------------
  // `sync_seen` tells whether this datagram carried a SYNC we accepted.
  // `arrival`: when the datagram reached this host, if known (see
  // EndpointCore::OnDatagram); Infinite = now.
  void OnData(TimeNs now, const wire::DataHeader& h, const uint8_t* payload,
              bool ce, DropStats* drops, TimeNs arrival = TimeNs::Infinite());
  // `return_port`: the UDP source port the ack's datagram came from (the
  // receiver's entropy for it), 0 if unknown; see multipath::ReturnPaths.
  void OnAck(TimeNs now, const wire::AckHeader& h, const uint8_t* sack,
             DropStats* drops, TimeNs arrival = TimeNs::Infinite(),
             uint16_t return_port = 0);
  void OnCtrl(TimeNs now, const wire::CtrlFrame& c, DropStats* drops);
  // A re-sent copy of data we already hold arrived: see peer_receive.cc.
  void BlameLastAckPath(TimeNs now, wire::Psn psn);
  // Checks a frame's incarnations against what we know of the peer. Returns
  // false (and counts) if the frame is stale. A new incarnation — accepted
  // only from a frame that may announce one (`may_announce`: SYNC, STALE) —
  // resets both directions (sends in flight fail with kPeerRestarted).
  bool CheckIncarnation(TimeNs now, uint64_t src_incarnation, bool may_announce,
                        DropStats* drops);

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
  size_t BuildDatagram(TimeNs now, absl::Span<uint8_t> out,
                       wire::Entropy* entropy, bool hold_acks = false,
                       absl::Span<const uint8_t>* tail = nullptr);

  // Bulk fast path of BuildDatagram: appends up to `max` datagrams to
  // `batch` (each slot of at least max_datagram bytes), stopping at the
  // first datagram that would need more than one data frame filling it with
  // the next bytes of the message in progress: a control frame, an ack, a
  // re-send, the end or start of a message, or a closed window all leave it
  // to BuildDatagram. Each datagram is byte for byte, and changes the
  // peer's state exactly, as BuildDatagram (tail != nullptr iff
  // `uncopied`) would; it starts with `preamble` (kPreambleSize bytes).
  // What it saves is the per-datagram work of the general path (frame
  // checks, re-send queue peeks, deferred copies). Returns the count.
  size_t BuildFullDatagrams(TimeNs now, TxBatch* batch, size_t max,
                            absl::Span<const uint8_t> preamble, bool uncopied);
  // Cheap, inline part of BuildFullDatagrams' conditions: a message in
  // progress has bytes not yet sent (false for a ping-pong's replies and
  // acks, which then skip the call).
  bool MayBuildFull() const {
    return session_confirmed_ && !inflight_.empty() &&
           inflight_.back().HasUnsent();
  }

  // Whether the next datagram of new data starts a spray run that `room`
  // more datagrams cannot hold whole. A run is what the UDP backend sends
  // as one GSO super-datagram; split over two batches it leaves as two
  // shorter sends, each costing the kernel about as much as a full one.
  bool RunWouldSplit(size_t room) const {
    return run_left_ == 0 && cfg_.proto.spray_run > 1 &&
           room < cfg_.proto.spray_run && HasNewData();
  }

  // --- Timers -------------------------------------------------------------
  void OnTimer(TimeNs now);
  // Earliest time this peer needs its driver to run: OnTimer, or PollTx for
  // an ack that is due. Infinite if none.
  TimeNs NextWake() const;

  // Earliest time OnTimer has work: NextWake without the ack deadline.
  TimeNs TimerDeadline() const;

  // --- Lifecycle ----------------------------------------------------------
  // Fails every queued and in-flight send with `cause`.
  void FailAll(FailureCause cause, TimeNs now);
  // Nothing queued, in flight, partially received or pending: safe to evict.
  bool Idle() const;
  TimeNs last_activity() const { return last_activity_; }
  // Mark that the application freed receive space: send a window update.
  void OnReceiveSpaceFreed();

  void FillStats(PeerStats* s, bool with_paths) const;
  const ReliabilityStats& reliability() const { return rel_; }
  uint64_t peer_incarnation() const { return peer_inc_; }

  // --- Hooks of the owning EndpointCore's scheduling (not peer state) -----
  size_t heap_pos = kNotInHeap;  // position in its WakeHeap
  bool tx_listed = false;        // on its list of peers that may send
  bool wake_dirty = false;       // its wake time is to be recomputed
  bool ack_deferred = false;     // holds an ack (EndpointCore deferral)
  // On its list of peers whose credit the receive queue held down
  // (PeerHost::OnCreditSqueezed); cleared by OnReceiveSpaceFreed.
  bool credit_squeezed = false;

 private:
  // Reaches the data frame builder from its test.
  friend struct PeerDataFramesTestAccess;

  // Applies what the sent-packet manager's OnAck or OnTimer just returned
  // in outcome_ (peer_ack.cc), in the order it happened: to the path set,
  // the congestion events, the messages. `return_port`: of the ack's
  // datagram (see OnAck), 0 for a timer.
  void ApplyOutcome(TimeNs now, uint16_t return_port);
  void ApplyRttSample(const retransmit::RttSample& s, TimeNs now,
                      uint16_t return_port);
  void ApplyAcked(const retransmit::AckedPackets& a, uint64_t tag, TimeNs now);
  void ApplyAckedRun(const retransmit::AckedPackets& run,
                     absl::Span<const uint64_t> tags, TimeNs now);
  void ApplyLost(const retransmit::LostPacket& l, TimeNs now);
  // Judges the RTO losses of outcome_ (a timer run) per path: a timeout on
  // most paths at once is the host or the peer stalling, not a bad path.
  void AttributeRtoToPaths(TimeNs now);

  // Send-side helpers (peer_send.cc; data frames in peer_data_frames.cc).
  bool CanSendNew() const;
  // How many new datagrams of `bytes` each CanSendNew would allow in a row,
  // with no ack in between (window, ack reach and credit), capped at `cap`.
  uint32_t NewDatagramBudget(uint32_t bytes, uint32_t cap) const;
  bool HasSendable() const;
  // Bytes not yet sent for the first time are queued or in flight.
  bool HasNewData() const;
  // Room for frames in a datagram that carries nothing else (a SYNC frame
  // in front until the session is confirmed).
  size_t WholeDatagramRoom() const {
    return cfg_.max_datagram - wire::kPreambleSize -
           (session_confirmed_ ? 0 : wire::kCtrlFrameSize);
  }
  OutMessage* MessageForTag(uint64_t tag);
  // `count` more fragments of the message `tag` names are acked; completes
  // the message when they were its last (or marks an ordered one as
  // awaiting delivery).
  void OnFragmentsAcked(uint64_t tag, uint32_t count, TimeNs now);
  void StartMessage(OutMessage& m);
  void CompleteMessage(OutMessage& m, TimeNs now);
  // Completes the ordered messages awaiting delivery that every ack so far
  // shows the receiver has released (see OutMessage::awaiting_delivery).
  void CompleteDelivered(TimeNs now);
  void FailMessage(OutMessage& m, FailureCause cause);
  // A SendOwned message's buffer goes into its completion `c` (the caller's
  // again); other messages keep theirs.
  void GiveBackBuffer(OutMessage& m, Completion* c);
  void PopFinishedMessages();
  // Starts a new send session. In-flight messages fail with `cause`, or —
  // with kNone (the receiver evicted our idle context) — are sent again.
  void RestartSession(FailureCause cause, TimeNs now);
  // Data frames (peer_data_frames.cc). Writes data frames into `out`. The
  // last frame's payload is not copied yet: it is left in deferred_ (see
  // BuildDatagram's `tail`).
  size_t WriteDataFrames(TimeNs now, absl::Span<uint8_t> out,
                         wire::PathId path);
  // A payload whose copy into the datagram is still due.
  struct DeferredPayload {
    uint8_t* dst = nullptr;
    const uint8_t* src = nullptr;
    uint32_t len = 0;
  };
  void CopyDeferred();
  // Copies the deferred payload, then defers `len` bytes from `src` to
  // `dst` (a frame's payload, written later or left out as the tail).
  void DeferPayload(uint8_t* dst, const uint8_t* src, uint32_t len);
  // Whether the tail payload of `len` bytes is worth leaving out of the
  // datagram (sent from the message's buffer) rather than copying.
  bool LeavesTailUncopied(uint32_t len) const {
    return len >= cfg_.min_uncopied_payload;
  }
  // The path of the next datagram: the current spray run's while it lasts
  // (and its path is healthy and not `avoid`), else a fresh PathSet::Pick
  // that starts a new run.
  wire::PathId NextSprayPath(TimeNs now, int avoid, bool healthy_only);
  // Datagrams NextSprayPath would still send on the current run's path
  // without picking again (when that path is not avoided).
  uint32_t SprayRunFollowers() const {
    return run_left_ > 0 && paths_.stats(run_path_).health ==
                                multipath::PathHealth::kHealthy
               ? run_left_
               : 0;
  }
  // A data frame header for a fragment of `m` at `offset` on `path`, with
  // `flags` (kDataFlagPlaced added for a placed message): all but psn and
  // path_seq, which come from its transmission.
  wire::DataHeader DataFrameHeader(const OutMessage& m, wire::PathId path,
                                   uint8_t flags, uint32_t offset) const;
  // The one builder of new data: records the first transmissions of m's
  // next `count` fragments of `plen` bytes each, back to back on `path`
  // (the message, the sent-packet manager, the path and the counters
  // advance), and writes their frame headers (wire::WriteDataHeaderRun:
  // the first at first.data(), fragment i `stride` * i bytes after it with
  // a copy of the `lead` bytes in front of the first). `first` must hold
  // the header. Calls `each(i, frame, payload)` once a fragment's header is
  // written, with its plen bytes in the message: the caller places them
  // (copies, defers or sends them as the datagram's tail). Returns the
  // header bytes of each frame. Building fragments one at a time (count 1)
  // or as one run gives the same bytes and the same state. Defined (and
  // inlined) in peer_data_frames.cc.
  template <typename EachFrame>
  uint32_t WriteNewFragments(OutMessage& m, wire::PathId path, uint32_t plen,
                             uint32_t count, TimeNs now,
                             absl::Span<uint8_t> first, size_t stride,
                             size_t lead, EachFrame&& each);
  // WriteNewFragments, out of line, for its test.
  uint32_t WriteNewFragmentsForTesting(
      OutMessage& m, wire::PathId path, uint32_t plen, uint32_t count,
      TimeNs now, absl::Span<uint8_t> first, size_t stride, size_t lead,
      absl::FunctionRef<void(uint32_t, uint8_t*, const uint8_t*)> each);
  // If nothing more can be sent for now, asks for an immediate ack in the
  // data frame at `frame` (the last one written) and returns true.
  bool AskAckIfLastForNow(uint8_t* frame);
  void FlushCcEvents(TimeNs now);
  void TrackOldestUnacked(TimeNs now);

  // Receive-side helpers (peer_receive.cc).
  void ResetReceiveSide(uint32_t session, wire::Psn base);
  wire::Psn CreditLimit(uint64_t queue_room) const;
  size_t WriteAck(TimeNs now, absl::Span<uint8_t> out);
  bool AckWanted(TimeNs now) const;
  void Deliver(reorder::CompletedMessage&& m);

  PeerConfig cfg_;
  NetAddr addr_;
  uint8_t local_ = 0;  // see local()
  PeerHost* host_;
  uint64_t peer_inc_ = 0;  // 0 until the peer has spoken
  std::array<uint64_t, 4> retired_incs_{};
  size_t retired_next_ = 0;
  TimeNs last_activity_;

  // ---- Send side ----
  multipath::PathSet paths_;
  retransmit::SentPacketManager sent_;
  std::unique_ptr<cc::CongestionControl> cc_;
  // What sent_'s last OnAck / OnTimer returned; reused (keeps its storage).
  retransmit::SenderOutcome outcome_;
  // Transmissions given up on without blaming their path (a tail probe's
  // original, an RTO with no evidence against its path): if the packet's
  // re-send on another path is then acked while they never were, their
  // path lost them after all (RememberUnblamed / BlameIfResentElsewhere).
  // Without this a path that drops everything was never penalised when
  // only one packet at a time is in flight (a ping-pong: 2 of 4 spines
  // blackholed cost a re-send on half the round trips, for good).
  struct Unblamed {
    wire::Psn psn;
    wire::PathId path = 0;
    bool valid = false;
  };
  std::array<Unblamed, 8> unblamed_{};
  size_t unblamed_next_ = 0;
  void RememberUnblamed(wire::Psn psn, wire::PathId path);
  void BlameIfResentElsewhere(wire::Psn psn, wire::PathId acked_path,
                              TimeNs now);

  wire::PathId run_path_ = 0;  // path of the current spray run
  uint16_t run_left_ = 0;      // datagrams left in it
  DeferredPayload deferred_;
  // The last ack written was urgent (AckScheduler::Echo::urgent).
  bool last_ack_urgent_ = false;
  // A second copy of an urgent ack-only datagram is due, on another path
  // than ack_copy_avoid_ (ProtocolOptions::duplicate_urgent_acks).
  bool ack_copy_due_ = false;
  wire::PathId ack_copy_avoid_ = 0;
  bool last_ack_echo_dup_ = false;  // the last ack written flagged ECHO_DUP
  bool ack_copy_echo_dup_ = false;  // so must its copy
  // Congestion signals (RTT, CE, loss) withheld from congestion control
  // because their path was being steered away from (PathSet::SteeredAway).
  uint64_t steered_signals_ = 0;
  // RTT samples of acks that came back on a slow return path (not taken for
  // the data path's delay, nor Swift's).
  uint64_t slow_return_samples_ = 0;
  // The path of the last datagram that carried an ack, blamable once if
  // the peer re-sends data we had acked (BlameLastAckPath): data received
  // before that ack, i.e. outside the PSN range received since.
  wire::PathId last_ack_path_ = 0;
  bool last_ack_blamable_ = false;
  bool rx_since_ack_ = false;  // new data arrived since the last ack
  wire::Psn rx_since_ack_lo_, rx_since_ack_hi_;
  uint64_t return_path_losses_ = 0;
  multipath::ReturnPaths return_paths_;
  // Rings keep their storage: no allocation per message once grown.
  // Pointers into them are valid only until the next push.
  Ring<OutMessage> queued_;     // accepted, not started
  Ring<OutMessage> inflight_;   // started; front has msg_seq inflight_base_
  uint32_t inflight_base_ = 0;  // msg_seq of inflight_.front()
  size_t inflight_count_ = 0;   // not yet completed among inflight_
  // Ordered messages in inflight_ all acked but not yet known delivered.
  uint32_t awaiting_delivery_ = 0;
  uint32_t next_msg_seq_ = 0;
  std::vector<uint32_t> stream_next_seq_;  // per stream id, this session
  uint32_t session_ = 1;
  wire::Psn session_base_;
  bool session_confirmed_ = false;
  wire::Psn credit_limit_;  // peer lets us send PSN < this
  uint32_t last_ce_count_ = 0;
  TimeNs last_ack_progress_;  // for the peer_timeout deadline
  // The oldest unacknowledged PSN and since when it has been the oldest: a
  // packet the peer keeps refusing fails its session after peer_timeout even
  // while other packets are acked.
  wire::Psn oldest_unacked_;
  TimeNs oldest_unacked_since_ = TimeNs::Infinite();
  TimeNs next_probe_;
  bool probe_due_ = false;
  bool credit_blocked_ = false;
  // Aggregated per ack for the congestion controller.
  cc::AckEvent pending_ack_event_{};
  cc::LossEvent pending_loss_event_{};
  bool have_ack_event_ = false;
  bool have_loss_event_ = false;
  bool spurious_rto_ = false;  // undo the last RTO's cut at the next flush

  // ---- Receive side ----
  bool rx_synced_ = false;
  uint32_t rx_session_ = 0;
  std::array<uint32_t, 4> retired_sessions_{};
  size_t retired_session_next_ = 0;
  reorder::ReceiveWindow window_;
  reorder::AckScheduler acks_;
  reorder::Reassembler reassembler_;
  reorder::OrderedRelease ordered_;
  std::vector<reorder::CompletedMessage> released_;  // scratch
  wire::Psn granted_;         // credit limit we advertised
  bool nak_pending_ = false;  // go-back-N: out-of-order seen at cum
  bool nak_sent_for_cum_ = false;
  bool need_sync_reply_ = false;
  bool window_update_ = false;
  // Next expected per-path sequence from the peer: a jump is a loss on that
  // path, which the sender learns fastest from an immediate ack.
  std::array<uint32_t, 256> rx_path_next_{};
  std::array<bool, 256> rx_path_seen_{};

  // ---- Counters ----
  ReliabilityStats rel_;
  uint64_t packets_sent_ = 0, bytes_sent_ = 0;
  uint64_t packets_received_ = 0, bytes_received_ = 0;
  uint64_t messages_sent_ = 0, messages_failed_ = 0, messages_received_ = 0;
  uint64_t acks_sent_ = 0, acks_received_ = 0;
  uint64_t ecn_marks_received_ = 0, ecn_echoes_ = 0;
  uint64_t credit_blocked_count_ = 0;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_PEER_H_

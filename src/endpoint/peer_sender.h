// The sender half of a peer: what we send to one remote endpoint. Sessions,
// the messages queued and in flight, the sent-packet manager, the paths and
// congestion control; it builds data frames and applies the acks that come
// back. I/O-free: `now` is passed in. The Peer that owns it joins it with
// the receiver half (PeerReceiver) in one datagram.
//
// Sessions. Our packets to one peer form a session: a PSN space that starts
// at `base` with stream sequence numbers starting at 0. Until the receiver
// acknowledges the session, every datagram with data carries a SYNC frame
// first (WriteSync). A session restarts (new number, base = the next unused
// PSN) when its messages fail: the peer went silent, restarted, or lost our
// state. Only the messages in flight at that moment fail; queued ones flow
// in the new one.
#ifndef BRAID_ENDPOINT_PEER_SENDER_H_
#define BRAID_ENDPOINT_PEER_SENDER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "braid/stats.h"
#include "braid/time.h"
#include "cc/congestion_control.h"
#include "endpoint/out_message.h"
#include "endpoint/peer_link.h"
#include "endpoint/ring.h"
#include "endpoint/tx_batch.h"
#include "multipath/path_set.h"
#include "multipath/return_paths.h"
#include "retransmit/sent_packet_manager.h"
#include "wire/frames.h"

namespace braid::endpoint {

class PeerSender {
 public:
  // `link` (the owning Peer's) must outlive the sender.
  PeerSender(PeerLink* link, uint64_t seed, TimeNs now);
  ~PeerSender();
  PeerSender(const PeerSender&) = delete;
  PeerSender& operator=(const PeerSender&) = delete;

  // --- Messages -----------------------------------------------------------
  // Queues a message. The endpoint has already checked size and limits.
  // `now()` is read only when the sender goes from idle to busy.
  void Enqueue(OutMessage&& m, absl::FunctionRef<TimeNs()> now);
  void Enqueue(OutMessage&& m, TimeNs now) {
    Enqueue(std::move(m), [now] { return now; });
  }
  // Messages queued or in flight (not yet completed).
  size_t pending_messages() const { return queued_.size() + inflight_count_; }
  // Fails every queued and in-flight send with `cause`.
  void FailAll(FailureCause cause, TimeNs now);
  // Starts a new session. In-flight messages fail with `cause`, or — with
  // kNone (the receiver evicted our idle context) — are sent again.
  void RestartSession(FailureCause cause, TimeNs now);
  // The peer evicted our idle session (NEED_SYNC): what we sent since was
  // dropped unseen and is sent again in a new session. (Unconfirmed: our
  // SYNCs are already on their way; nothing to do.)
  // The receiver holds no session for our data at `psn`: if `psn` is of
  // this session and the session was confirmed, restart it (re-sending
  // what was in flight). False if `psn` is not of this session (stale).
  bool OnNeedSync(TimeNs now, wire::Psn psn);

  // --- Acks in (peer_sender_ack.cc) ----------------------------------------
  // An ack (already parsed and validated by wire/). `return_port`: the UDP
  // source port its datagram came from (the receiver's entropy for it), 0
  // if unknown; see multipath::ReturnPaths. `arrival`: when it reached
  // this host, if known (Infinite = now).
  void OnAck(TimeNs now, const wire::AckHeader& h, const uint8_t* sack,
             DropStats* drops, TimeNs arrival = TimeNs::Infinite(),
             uint16_t return_port = 0);
  // Loss timers, the peer timeout and the credit probe. Does nothing before
  // TimerDeadline().
  void OnTimer(TimeNs now);
  // The receiver refused what we sent (Peer::OnFirstContactRefused): queue
  // the packets in flight for a re-send now (SentPacketManager::
  // ResendRefused). True if any packet was queued.
  bool OnFirstContactRefused(TimeNs now);
  // Earliest time OnTimer has work; Infinite if none.
  TimeNs TimerDeadline() const;
  // An ack-only datagram we sent on `path` was lost (see
  // PeerReceiver::TakeReturnLoss): the path's return route is judged.
  void OnReturnLoss(wire::PathId path, TimeNs now);

  // --- Building datagrams ---------------------------------------------------
  // A re-send waits, or new data may go now (window, ack reach, credit).
  bool HasSendable() const;
  // The session is acknowledged by the receiver (no SYNC needed).
  bool session_confirmed() const { return session_confirmed_; }
  // A PROBE frame (credit-blocked, nothing in flight) is due.
  bool probe_due() const { return probe_due_; }
  // The path for a datagram with data: the path a re-send must take if one
  // waits (a healthy one, not its last), else the path of the next new
  // data's flow (OutMessage::flow, see FlowPath), else the spray run's.
  // New data of a hinted message then goes only in a datagram whose path
  // was chosen for its flow (WriteDataFrames ends the datagram before it).
  wire::PathId DataPath(TimeNs now);
  // A path for a datagram without data (not `avoid` unless it is the only
  // usable one).
  wire::PathId PickPath(TimeNs now, int avoid) {
    return paths_.Pick(now, avoid);
  }
  size_t path_count() const { return paths_.size(); }
  wire::Entropy entropy(wire::PathId p) const { return paths_.entropy(p); }
  // Write a SYNC (announcing the session) / PROBE frame into `out`; return
  // its size. WriteProbe clears probe_due().
  size_t WriteSync(absl::Span<uint8_t> out) const;
  size_t WriteProbe(absl::Span<uint8_t> out);
  // Writes data frames into `out` (peer_data_frames.cc). The last frame's
  // payload is not copied yet: FinishPayload copies it or leaves it out.
  size_t WriteDataFrames(TimeNs now, absl::Span<uint8_t> out,
                         wire::PathId path);
  // What WriteResend did with the first packet waiting to be re-sent.
  enum class ResendStep {
    kNone,     // none waits: new data may follow
    kWritten,  // written at the start of `out` (*written bytes)
    kSkipped,  // its message had completed: dropped from the queue
    kStop,     // it does not go in this datagram: the datagram is done
  };
  // Writes the first waiting re-send into `out` on `path` (the datagram
  // already holds `frames` frames), its payload left pending as
  // WriteDataFrames' are.
  ResendStep WriteResend(TimeNs now, absl::Span<uint8_t> out, wire::PathId path,
                         int frames, size_t* written);
  // The message the next new fragment of a datagram comes from, with
  // `room` bytes left after `frames` frames: the one in progress, else the
  // next queued one (started here); null when none may start in it.
  OutMessage* NextNewMessage(size_t room, int frames);
  // Copies a payload WriteDataFrames left pending (before anything else is
  // written behind it).
  void CopyDeferred();
  // Ends the payloads of a datagram that ends at `end`: a large last
  // payload that ends it is left out and returned in *tail (if `tail` is
  // non-null; it then follows the datagram on the wire, a span of the
  // message's own buffer valid until acks are next processed); otherwise
  // it is copied and *tail is empty. Returns the bytes left out.
  // *hold (if given) is set to the hold of the message the tail points
  // into (OutMessage::hold) when a tail is left out.
  size_t FinishPayload(const uint8_t* end, absl::Span<const uint8_t>* tail,
                       backend::TxHold** hold = nullptr);
  // See Peer::BuildFullDatagrams: the sender's part, once the receiver half
  // has nothing to put in front of the data.
  size_t BuildFullDatagrams(TimeNs now, TxBatch* batch, size_t max,
                            absl::Span<const uint8_t> preamble, bool uncopied);
  // Cheap, inline part of BuildFullDatagrams' conditions: a message in
  // progress has bytes not yet sent.
  bool MayBuildFull() const {
    return session_confirmed_ && !inflight_.empty() &&
           inflight_.back().HasUnsent();
  }
  // Whether the next datagram of new data starts a spray run that `room`
  // more datagrams cannot hold whole (see Peer::RunWouldSplit).
  bool RunWouldSplit(size_t room) const {
    return run_left_ == 0 && cfg().proto.spray_run > 1 &&
           room < cfg().proto.spray_run && HasNewData();
  }

  // --- State and counters ---------------------------------------------------
  // Anything sent is not acknowledged yet.
  bool HasUnacked() const { return sent_.HasUnacked(); }
  // Nothing queued, in flight or unacknowledged.
  bool Idle() const {
    return queued_.empty() && inflight_count_ == 0 && !sent_.HasUnacked();
  }
  // The send-side fields of *s (counters, RTT, window, paths).
  void FillStats(PeerStats* s, bool with_paths) const;
  const ReliabilityStats& reliability() const { return rel_; }
  uint32_t session() const { return session_; }

  // Where a sender that replaces this idle one goes on (Peer::Sleep): the
  // next session number and the next unused PSN, so the receiver sees a
  // new session (its SYNC rides on the first data) and no PSN is reused.
  struct Resume {
    uint32_t session = 0;
    wire::Psn next_psn;
  };
  Resume TakeResume() const { return {session_ + 1, sent_.next_psn()}; }
  // On a new sender, before anything is queued: goes on from `r`.
  void ApplyResume(const Resume& r);

 private:
  // Reaches the data frame builder from its test.
  friend struct PeerDataFramesTestAccess;

  const PeerConfig& cfg() const { return link_->cfg(); }

  // Applies what the sent-packet manager's OnAck or OnTimer just returned
  // in outcome_ (peer_sender_ack.cc), in the order it happened: to the
  // path set, the congestion events, the messages. `return_port`: of the
  // ack's datagram (see OnAck), 0 for a timer.
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
  // The credit probe: credit-blocked with nothing in flight, ask the
  // receiver for an ack every RTO.
  void ScheduleCreditProbe(TimeNs now);

  bool CanSendNew() const;
  // How many new datagrams of `bytes` each CanSendNew would allow in a row,
  // with no ack in between (window, ack reach and credit), capped at `cap`.
  uint32_t NewDatagramBudget(uint32_t bytes, uint32_t cap) const;
  // Bytes not yet sent for the first time are queued or in flight.
  bool HasNewData() const;
  // Room for frames in a datagram that carries nothing else (a SYNC frame
  // in front until the session is confirmed).
  size_t WholeDatagramRoom() const {
    return cfg().max_datagram - cfg().lead -
           (session_confirmed_ ? 0 : wire::kCtrlFrameSize);
  }
  OutMessage* MessageForTag(uint64_t tag);
  // `count` more fragments of the message `tag` names are acked; completes
  // the message when they were its last (or marks an ordered one as
  // awaiting delivery).
  void OnFragmentsAcked(uint64_t tag, uint32_t count, TimeNs now);
  void StartMessage(OutMessage& m);
  void CompleteMessage(OutMessage& m, TimeNs now);
  // Hands a finished message's completion, bytes and hold to the host.
  void FinishSend(OutMessage& m, Completion&& c);
  // Completes the ordered messages awaiting delivery that every ack so far
  // shows the receiver has released (see OutMessage::awaiting_delivery).
  void CompleteDelivered(TimeNs now);
  void FailMessage(OutMessage& m, FailureCause cause);
  // A SendOwned message's buffer goes into its completion `c` (the caller's
  // again); other messages keep theirs.
  void GiveBackBuffer(OutMessage& m, Completion* c);
  void PopFinishedMessages();
  // A payload whose copy into the datagram is still due.
  struct DeferredPayload {
    uint8_t* dst = nullptr;
    const uint8_t* src = nullptr;
    uint32_t len = 0;
    backend::TxHold* hold = nullptr;  // of the message `src` points into
  };
  // Copies the deferred payload, then defers `len` bytes from `src` to
  // `dst` (a frame's payload, written later or left out as the tail).
  void DeferPayload(uint8_t* dst, const uint8_t* src, uint32_t len,
                    backend::TxHold* hold);
  // Whether the tail payload of `len` bytes is worth leaving out of the
  // datagram (sent from the message's buffer) rather than copying.
  bool LeavesTailUncopied(uint32_t len) const {
    return len >= cfg().min_uncopied_payload;
  }
  // The path of the next datagram: the current spray run's while it lasts
  // (and its path is healthy and not `avoid`), else a fresh PathSet::Pick
  // that starts a new run.
  wire::PathId NextSprayPath(TimeNs now, int avoid, bool healthy_only);
  // The path of new data hinted `flow` (non-zero): PathSet::PickHinted's,
  // or while that path may not carry data, a sprayed one (avoiding it).
  // Leaves the spray run as it was. Records `flow` as the datagram's.
  wire::PathId FlowPath(TimeNs now, uint32_t flow);
  // Whether new data hinted `flow` may go in the datagram being built:
  // unhinted data goes on any path; hinted data only in a datagram whose
  // path was chosen for its flow or one on the same path index.
  bool FlowFits(uint32_t flow) const {
    return flow == 0 || (data_flow_ != 0 &&
                         flow % paths_.size() == data_flow_ % paths_.size());
  }
  // The message the next new fragment would come from (the one in
  // progress, else the first queued), or null.
  const OutMessage* NextNewCandidate() const {
    if (!inflight_.empty() && inflight_.back().HasUnsent()) {
      return &inflight_.back();
    }
    return queued_.empty() ? nullptr : &queued_.front();
  }
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
  void RememberUnblamed(wire::Psn psn, wire::PathId path, wire::PathSeq seq);
  void BlameIfResentElsewhere(wire::Psn psn, wire::PathId acked_path,
                              TimeNs now);

  PeerLink* link_;
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
    wire::PathSeq seq;  // its per-path sequence
    bool valid = false;
  };
  std::array<Unblamed, 8> unblamed_{};
  size_t unblamed_next_ = 0;

  wire::PathId run_path_ = 0;  // path of the current spray run
  uint16_t run_left_ = 0;      // datagrams left in it
  // The flow the current datagram's path was chosen for (FlowPath); 0 when
  // it was sprayed or chosen for a re-send.
  uint32_t data_flow_ = 0;
  DeferredPayload deferred_;
  // Congestion signals (RTT, CE, loss) withheld from congestion control
  // because their path was being steered away from (PathSet::SteeredAway).
  uint64_t steered_signals_ = 0;
  // RTT samples of acks that came back on a slow return path (not taken for
  // the data path's delay, nor Swift's).
  uint64_t slow_return_samples_ = 0;
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

  // ---- Counters ----
  ReliabilityStats rel_;
  uint64_t packets_sent_ = 0, bytes_sent_ = 0;
  uint64_t messages_sent_ = 0, messages_failed_ = 0;
  uint64_t acks_received_ = 0, ecn_echoes_ = 0;
  uint64_t credit_blocked_count_ = 0;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_PEER_SENDER_H_

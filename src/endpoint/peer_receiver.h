// The receiver half of a peer: what we receive from one remote endpoint.
// The receive window and duplicate filter, reassembly, ordered release,
// the acks to send (coalescing, urgent copies, NAKs) and the credit we
// grant. I/O-free: `now` is passed in. The Peer that owns it joins it with
// the sender half (PeerSender) in one datagram.
#ifndef BRAID_ENDPOINT_PEER_RECEIVER_H_
#define BRAID_ENDPOINT_PEER_RECEIVER_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "braid/stats.h"
#include "braid/time.h"
#include "endpoint/peer_link.h"
#include "reorder/ack_scheduler.h"
#include "reorder/ordered_release.h"
#include "reorder/reassembler.h"
#include "reorder/receive_window.h"
#include "wire/frames.h"

namespace braid::endpoint {

class PeerReceiver {
 public:
  // `link` (the owning Peer's) must outlive the receiver.
  explicit PeerReceiver(PeerLink* link);
  PeerReceiver(const PeerReceiver&) = delete;
  PeerReceiver& operator=(const PeerReceiver&) = delete;

  // --- Frames in ------------------------------------------------------------
  // A data frame (already parsed and validated by wire/). `arrival`: when
  // the datagram reached this host, if known (Infinite = now); the ack
  // delay we report counts from it. Duplicates, frames beyond the credit
  // and unsynced data are dropped and counted in *drops.
  void OnData(TimeNs now, const wire::DataHeader& h, const uint8_t* payload,
              bool ce, DropStats* drops, TimeNs arrival = TimeNs::Infinite());
  // SYNC: a new session from the sender (a late duplicate of the current or
  // a retired one is ignored).
  void OnSync(const wire::CtrlFrame& c);
  // PROBE: the sender is credit-blocked; answer with a window update.
  void OnProbe(const wire::CtrlFrame& c);
  // The peer restarted (a new incarnation): forget its sessions. Complete
  // ordered messages held for an earlier one are delivered if
  // `deliver_held` (they were acknowledged to a life that was the peer),
  // else dropped (that life was taken on trust and is now known not to be
  // the peer's: perhaps a forger's).
  void OnPeerRestarted(bool deliver_held);
  // After a duplicate re-send arrived (OnData): whether it proves the last
  // ack-only datagram we sent lost (the peer re-sent data that ack covered;
  // once per ack sent). `sender_idle`: our own sender has nothing
  // unacknowledged (else its paths are judged by its own outcomes). Sets
  // *path to the path that ack went on and counts the loss.
  bool TakeReturnLoss(bool sender_idle, wire::PathId* path);

  // --- Acks out -------------------------------------------------------------
  // An ack must go now: due by the scheduler, a NAK, or a window update.
  bool AckWanted(TimeNs now) const;
  // Data arrived that no ack has covered yet (an ack may ride on data).
  bool AckPending() const { return acks_.pending(); }
  // Anything that must precede new data in a datagram: a NEED_SYNC reply,
  // an ack copy, a pending or due ack.
  bool HasFrontMatter(TimeNs now) const {
    return need_sync_reply_ || ack_copy_due_ || acks_.pending() ||
           AckWanted(now);
  }
  // The sender sent data we hold no session for: a NEED_SYNC is due. It
  // names the PSN of that data, so the sender can tell which session it
  // is about.
  bool need_sync_reply() const { return need_sync_reply_; }
  // Writes the NEED_SYNC frame into `out` (clears need_sync_reply()).
  size_t WriteNeedSync(absl::Span<uint8_t> out);
  // A second copy of an urgent ack-only datagram is due, on another path
  // than ack_copy_avoid() (ProtocolOptions::duplicate_urgent_acks).
  bool ack_copy_due() const { return ack_copy_due_; }
  wire::PathId ack_copy_avoid() const { return ack_copy_avoid_; }
  // Writes an ack frame into `out` (cum, SACK, echo, credit); returns its
  // size, 0 if it does not fit or there is no session.
  size_t WriteAck(TimeNs now, absl::Span<uint8_t> out);
  // The first ack of a datagram, in front of its data: WriteAck if `due`
  // (AckWanted or an ack copy), and the ack copy is no longer due.
  size_t WriteDueAck(TimeNs now, absl::Span<uint8_t> out, bool due);
  // A datagram was built: `ack_bytes` of ack in it (0 if none), all of it
  // if `ack_only`, sent on `path`; `copy` if it was the copy of an urgent
  // ack, `other_paths` if another path could carry a copy. Arms the next
  // copy (an urgent ack alone in its datagram) and remembers the ack's path
  // (TakeReturnLoss).
  void OnDatagramBuilt(wire::PathId path, size_t ack_bytes, bool ack_only,
                       bool copy, bool other_paths);
  // When an ack next becomes due; Infinite if none.
  TimeNs NextAckTime() const { return acks_.NextAckTime(); }

  // --- Credit ----------------------------------------------------------------
  // The application freed receive space: send a window update.
  void OnReceiveSpaceFreed() { window_update_ = true; }
  // True once after an ack granted less credit than the receive budget
  // because the application's receive queue was short of room: the caller
  // then calls OnReceiveSpaceFreed when the application polls, so the
  // credit grows again without waiting for data to arrive.
  bool TakeCreditSqueezed() {
    const bool s = credit_squeezed_;
    credit_squeezed_ = false;
    return s;
  }

  // --- Setting an idle receiver aside ---------------------------------------
  // Ordered streams a Resume can carry; a receiver that has used more stays.
  static constexpr size_t kResumeStreams = 4;
  // What an idle receiver must remember to be rebuilt later as if it had
  // stayed (Peer::Sleep): the sender's session, where it stands (cum: no
  // data above it), the credit we granted, the session numbers we retired
  // and where each ordered stream stands. The sender's next datagram then
  // continues its session: nothing is delivered twice, no NEED_SYNC.
  struct Resume {
    bool synced = false;
    uint8_t retired_next = 0;
    uint8_t streams = 0;
    uint32_t session = 0;
    wire::Psn cum, granted;
    std::array<uint32_t, 4> retired{};
    std::array<std::pair<uint16_t, uint32_t>, kResumeStreams> stream_seq{};
  };
  // Fills *r and returns true if this receiver can be rebuilt from it: it
  // is Idle, holds nothing above cum (a sender that still owes what lies
  // below would resend data we delivered) and has used at most
  // kResumeStreams ordered streams.
  bool TakeResume(Resume* r) const;
  // On a new receiver: goes on from `r` (TakeResume of the one it replaces).
  void ApplyResume(const Resume& r);

  // --- State and counters ---------------------------------------------------
  // Nothing partially received, held or unacknowledged.
  bool Idle() const {
    return reassembler_.partial_messages() == 0 &&
           ordered_.held_messages() == 0 && !acks_.pending();
  }
  // The receive-side fields of *s (counters, placement, acks sent).
  void FillStats(PeerStats* s) const;
  bool synced() const { return rx_synced_; }
  size_t partial_messages() const { return reassembler_.partial_messages(); }
  wire::Psn cum() const { return window_.cum(); }
  // The credit limit we last advertised.
  wire::Psn granted() const { return granted_; }

 private:
  // Compares whole peers' state in the data frame builder's test.
  friend struct PeerDataFramesTestAccess;

  const PeerConfig& cfg() const { return link_->cfg(); }
  void ResetReceiveSide(uint32_t session, wire::Psn base,
                        bool deliver_held = true);
  wire::Psn CreditLimit(uint64_t queue_room) const;
  void Deliver(reorder::CompletedMessage&& m);
  // Hands a data frame's fragment to the reassembler (placing it where the
  // endpoint's placement handler says, for a placed message).
  reorder::FragResult Reassemble(const wire::DataHeader& h,
                                 const uint8_t* payload,
                                 reorder::CompletedMessage* done);
  // Notes path seq `seq` from path `p`; true if it jumps past the next
  // expected one (a loss on that path: ack at once).
  bool NotePathSeq(wire::PathId p, wire::PathSeq seq);

  PeerLink* link_;
  bool rx_synced_ = false;
  uint32_t rx_session_ = 0;
  std::array<uint32_t, 4> retired_sessions_{};
  uint8_t retired_session_next_ = 0;
  reorder::ReceiveWindow window_;
  reorder::AckScheduler acks_;
  reorder::Reassembler reassembler_;
  reorder::OrderedRelease ordered_;
  std::vector<reorder::CompletedMessage> released_;  // scratch
  wire::Psn granted_;         // credit limit we advertised
  bool nak_pending_ = false;  // go-back-N: out-of-order seen at cum
  bool nak_sent_for_cum_ = false;
  bool need_sync_reply_ = false;
  wire::Psn need_sync_psn_;  // the unsynced data's PSN (NEED_SYNC's value)
  bool window_update_ = false;
  bool credit_squeezed_ = false;  // see TakeCreditSqueezed
  // Next expected per-path sequence from the peer: a jump is a loss on that
  // path, which the sender learns fastest from an immediate ack.
  std::array<uint32_t, 256> rx_path_next_{};
  std::array<bool, 256> rx_path_seen_{};
  // The last ack written was urgent (AckScheduler::Echo::urgent).
  bool last_ack_urgent_ = false;
  bool ack_copy_due_ = false;  // see ack_copy_due()
  wire::PathId ack_copy_avoid_ = 0;
  bool last_ack_echo_dup_ = false;  // the last ack written flagged ECHO_DUP
  bool ack_copy_echo_dup_ = false;  // so must its copy
  // The path of the last datagram that carried an ack, blamable once if
  // the peer re-sends data we had acked (TakeReturnLoss): data received
  // before that ack, i.e. outside the PSN range received since.
  wire::PathId last_ack_path_ = 0;
  bool last_ack_blamable_ = false;
  bool rx_since_ack_ = false;  // new data arrived since the last ack
  wire::Psn rx_since_ack_lo_, rx_since_ack_hi_;
  // A re-send of data we hold arrived (OnData) and awaits TakeReturnLoss.
  bool resent_dup_ = false;
  wire::Psn resent_dup_psn_;

  // ---- Counters ----
  uint64_t packets_received_ = 0, bytes_received_ = 0;
  uint64_t messages_received_ = 0;
  uint64_t acks_sent_ = 0;
  uint64_t ecn_marks_received_ = 0;
  uint64_t return_path_losses_ = 0;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_PEER_RECEIVER_H_

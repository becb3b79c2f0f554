// Sender-side reliability for one peer pair: which PSNs are in flight, what
// an ack acknowledges, what is lost, what to re-send, and when to wake up.
// I/O-free and clock-free: every entry point takes `now`.
//
// Model. Every packet gets a PSN, consecutive at first transmission. Every
// transmission (first or re-send) goes on a path p with the next per-path
// seq of p. Paths are FIFO, so a gap in one path's seqs is a loss, while
// disorder across paths is normal.
//
// Loss detection, in order of speed:
//  * Per-path gap (kPathGap). When transmission (p, s) is known to have
//    arrived, every earlier transmission on p that is still the live copy of
//    an unacked packet is lost. A transmission is known to have arrived if
//    the ack echoes it, or if its packet is newly acked by cum/SACK and it is
//    that packet's latest copy. (For cum/SACK we cannot tell which copy
//    arrived, so we assume the latest one did -- but only if every earlier
//    copy was declared lost by path gap or NAK, i.e. is certainly gone. A
//    packet re-sent after a time/RTO/probe loss may be acked via its old
//    copy; its cum/SACK ack is ambiguous and nothing is inferred from it.)
//    An old copy superseded by a newer transmission is dead: it is never
//    declared lost.
//    "Earlier" means at least gap_threshold() seqs earlier: 1 while paths
//    are FIFO. A gap loss proven wrong (an ack echoes the copy declared
//    lost: reordering inside a path) raises it to the displacement seen + 1
//    (up to max_gap_threshold); the time rule judges what it leaves, and
//    re-sends of gap losses are then ambiguous too. It halves per 64 srtt
//    without such proof. A re-send of a gap loss reported as a duplicate
//    doubles it instead (the displacement is unknown), but not while the
//    network is seen duplicating first transmissions (then the re-send of
//    a packet really lost may arrive twice).
//  * Time (kTime, RACK-like). A live transmission sent at an earlier time
//    than some transmission known to have arrived is lost once
//    now >= sent + W(path):
//      W = path_srtt * (1 + (tol + extra)/8) + 2 * path_rttvar
//          + min_reorder_window.
//    Send *times* are compared, not send order: packets built in one burst
//    share a time and never judge each other, because a backend may put a
//    burst on the wire grouped by source port rather than in build order.
//    `extra` is learnt: a time loss later proven wrong (the copy declared
//    lost arrived) adds 4/8 (at most once per srtt, up to 32/8); it decays
//    by 1/8 per 16 srtt of acks without such proof.
//    Using the candidate's own path srtt keeps paths with very different
//    delays from causing spurious losses; the rttvar term absorbs a path's
//    queueing variation (added by the lead after simulator runs).
//    A path without an RTT sample uses rto() as its window instead, so a
//    slow path is not judged by the fast paths' srtt before its first sample.
//  * RTO (kRto). A live transmission on path p is lost once
//    now >= max(sent, last progress, last RTO) + PathRto(p), PathRto(p) =
//    max(rto(), the path's own srtt + 4 * rttvar) with the exponential backoff
//    applied,
//    <= max_rto. An RTO declares lost only the oldest live transmission of
//    each expired path (a whole window of re-sends after a mere stall would
//    mostly duplicate); the rest is found by the time rule once a re-send
//    is acknowledged, or by the next, backed-off RTO — a whole PathRto after
//    this one (counting from the last RTO too: otherwise, with the front
//    popped, the next packet of a window sent long ago would be overdue at
//    once and a dead peer would get the whole window every max_rto, a
//    path at a time). "Last progress" is the
//    last ack that newly acknowledged
//    data: like TCP's restarted retransmission timer, the RTO fires only
//    after a whole RTO without progress. While other paths make progress,
//    a dead path's packets are found by the time rule instead. If an ack
//    later echoes a transmission the RTO declared lost, the RTO was
//    premature (spurious_rtos): the backoff is undone and the outcome's
//    spurious_rto tells the caller, whose congestion control may restore its
//    window. When it fires, every such transmission is declared lost and the
//    backoff doubles; it resets when an ack newly acknowledges something. In
//    go-back-N mode everything in flight is declared lost.
//  * NAK (kNak, go-back-N only). Every in-flight PSN >= cum is lost. A repeat
//    NAK for the same cum after that PSN was re-sent is ignored.
// A PSN at or beyond the reach of the latest ack (cum + 1 + 64 * words) is
// "unknown" to the receiver's report and is never declared lost by the gap
// or time rules (only by RTO or NAK).
//
// Tail loss probe: after pto() (about 1.5 response srtt + max_ack_delay; see
// pto() and RTT below)
// without new data sent and
// without an ack that newly acknowledged data, with packets in flight and no
// retransmission pending, the newest in-flight packet is put into the
// retransmit queue once, reported as a LostPacket with cause
// kTailProbe (congestion control should not treat that cause as a loss).
// Since the probe's original copy may still arrive, a probed packet's
// arrival via cum/SACK is treated as ambiguous (see above). One probe per
// episode: the next needs new data sent or an ack with progress.
//
// RTT. Each path keeps a log of its recent transmissions (seq -> send time,
// PSN), so an echoed (path, seq) names exactly one transmission: samples are
// unambiguous even for re-sent packets (no Karn problem). Sample =
// now - sent - ack_delay; taken at most once per transmission; rejected if
// not positive. srtt/rttvar per RFC 6298, for the peer and for each path;
// these drive the loss rules and congestion control. The timers (RTO, tail
// probe) use a third estimate, the response time: samples now - sent with
// the ack delay left in, because a receiver that holds acks (coalescing, or
// a busy host draining a large receive batch) delays them all the same.
// RTO = clamp(response srtt + 4 * rttvar, floor, max_rto) (see rto()).
// Ownership: this manager is the one owner of the per-path srtt/rttvar
// (path_srtt(), ReorderWindow(), PathRto()): every sample of the session on
// that path id, forgotten only by Reset(). Nothing else estimates them. The
// caller passes each RttSample on to multipath::PathSet, which keeps a
// different quantity, the delay of the path's current route (PathStats::
// srtt/min_rtt: restarted when the entropy is recycled, without samples of
// stale transmissions or of acks from slow return paths), for its steering
// rules; the loss rules never read it, and PathSet never reads these.
//
// Costs. OnFirstSent/OnRetransmitted are O(1) amortized (O(log paths) when
// a path goes from idle to busy). OnAck is O((newly acked + newly lost +
// paths whose arrival mark moved or whose timer is due) * log paths + bitmap
// words): paths are looked at through PathTimerQueue, not all per ack. The
// RTO check walks all busy paths, but only when the (cached) RTO deadline
// comes due, about once per RTO. Go-back-N NAK/RTO and choosing the probe
// packet are O(window), rare events. Memory grows only when the window or a
// path's log grows; there is no allocation per packet in steady state.
//
// Reporting. OnAck and OnTimer return what they found in a SenderOutcome the
// caller owns (sender_outcome.h): acked packets and runs, losses with their
// cause and transmission, the RTT sample, spurious re-sends and RTOs. The
// manager calls nothing back; the caller applies the outcome after the call
// returns and tells the manager what followed from it (OnPathRerouted) with
// ordinary calls. A reroute reported that way applies to the transmissions
// made before it, as if it had been reported during the call.
#ifndef BRAID_RETRANSMIT_SENT_PACKET_MANAGER_H_
#define BRAID_RETRANSMIT_SENT_PACKET_MANAGER_H_

#include <cstdint>
#include <vector>

#include "braid/time.h"
#include "retransmit/path_timer_queue.h"
#include "retransmit/path_tx_log.h"
#include "retransmit/retransmit_types.h"
#include "retransmit/rtt_estimator.h"
#include "retransmit/sender_outcome.h"
#include "wire/psn.h"

namespace braid::retransmit {

class SentPacketManager {
 public:
  explicit SentPacketManager(const RetransmitOptions& opts = {});

  // PSN the next new packet must use.
  wire::Psn next_psn() const { return next_; }
  // Forgets all packets, paths and RTT state; next_psn() = base. Counters
  // are kept.
  void Reset(wire::Psn base);

  // Records the first transmission of next_psn() (which then advances).
  // `tag` is opaque (the core encodes message and fragment in it).
  void OnFirstSent(uint64_t tag, uint32_t bytes, wire::PathId path,
                   wire::PathSeq seq, TimeNs now) {
    OnFirstSentRun(tag, 0, bytes, path, seq, 1, now);
  }
  // Records `count` first transmissions sent back to back on one path (a
  // GSO run): the same as `count` OnFirstSent calls, the i-th (from 0) with
  // tag first_tag + i * tag_step and path seq seq + i, all of `bytes`.
  void OnFirstSentRun(uint64_t first_tag, uint64_t tag_step, uint32_t bytes,
                      wire::PathId path, wire::PathSeq seq, uint32_t count,
                      TimeNs now);
  // Records a re-send of `psn`: of a packet declared lost (normally just
  // popped with PopRetransmit), or of one still in flight (the caller's own
  // probe; counted as kTailProbe and treated as ambiguous). Ignored and
  // counted if `psn` is not outstanding.
  void OnRetransmitted(wire::Psn psn, wire::PathId path, wire::PathSeq seq,
                       TimeNs now);

  // Applies an ack: reports newly acked packets, the RTT sample, spurious
  // retransmissions and losses (path gap, time, NAK). Returns false and
  // changes nothing if the ack refers to PSNs never sent (cum or a SACK bit
  // beyond next_psn()).
  // What happened is written to *out (cleared first; empty on false).
  bool OnAck(const AckInfo& ack, TimeNs now, SenderOutcome* out);
  // Timer: time-based losses, then RTO (with backoff) or the tail probe
  // (which is queued for PopRetransmit).
  // Safe to call at any time; does nothing that is not due. The losses are
  // written to *out (cleared first).
  void OnTimer(TimeNs now, SenderOutcome* out);
  // The receiver refused what we sent (it challenged our first contact
  // instead of taking it in: docs/protocol.md §13). Every packet in flight
  // is queued for a re-send at once (cause kRefused: nothing was lost in
  // the network, so no path or window is blamed), except those sent since
  // the last refusal, so that a burst of
  // refusals (one per refused datagram) re-sends each packet once; later
  // rounds are left to the RTO. Writes the re-sends to *out (cleared
  // first); returns how many.
  size_t ResendRefused(SenderOutcome* out);
  // When OnTimer next may have work; TimeNs::Infinite() if nothing is in
  // flight. May be early (OnTimer then finds nothing due), never late.
  TimeNs NextTimerTime() const;

  // Pops the lowest lost PSN waiting to be re-sent (tail probes included);
  // false if none. The caller should re-send it now and call
  // OnRetransmitted; a popped packet that is never re-sent stays
  // outstanding until acked or failed via ForEachUnacked/Reset.
  bool PopRetransmit(wire::Psn* psn, uint64_t* tag, uint32_t* bytes,
                     wire::PathId* last_path);
  // Like PopRetransmit but leaves the packet queued. (Drops stale queue
  // entries, hence not const.)
  bool PeekRetransmit(wire::Psn* psn, uint64_t* tag, uint32_t* bytes,
                      wire::PathId* last_path);
  // True if a lost packet waits to be re-sent.
  bool HasRetransmit() const { return lost_pending_ > 0; }

  // Bytes / packets sent and neither acked nor declared lost.
  uint64_t bytes_in_flight() const { return bytes_in_flight_; }
  uint32_t packets_in_flight() const { return packets_in_flight_; }
  // True if anything sent is not acked yet (lost-not-resent included).
  bool HasUnacked() const { return base_ != next_; }
  // Lowest PSN not yet acked; next_psn() if none.
  wire::Psn lowest_unacked() const { return base_; }

  // Peer-wide RTT estimate (all paths).
  DurationNs srtt() const { return rtt_.srtt(); }
  DurationNs min_rtt() const { return rtt_.min_rtt(); }
  DurationNs rttvar() const { return rtt_.rttvar(); }
  // clamp(srtt + 4 * rttvar, floor, max_rto) of the response time (RTT
  // samples with the receiver's ack delay left in), without backoff. The
  // floor starts at min_rto and doubles with each RTO proven premature
  // (up to max_rto / 4), halving after 256 floors without one.
  DurationNs rto() const { return response_.Rto(rto_floor_, opts_.max_rto); }
  // The RTO floor in force (see rto()).
  DurationNs rto_floor() const { return rto_floor_; }
  // The tail-probe timeout: max(1.5 x response srtt, response srtt + 4 x
  // its rttvar once sampled) + max_ack_delay, doubled per recent spurious
  // probe when max_pto_shift allows (never above rto() then).
  DurationNs pto() const { return Pto(); }
  // rto() with the current exponential backoff applied (<= max_rto).
  DurationNs current_rto() const;
  // srtt of `p`; the peer srtt if the path has no sample yet.
  DurationNs path_srtt(wire::PathId p) const;
  // Time-based loss threshold of path `p` (see class comment).
  DurationNs ReorderWindow(wire::PathId p) const;
  // Seqs a path must deliver past a transmission before the gap rule
  // declares it lost: 1 unless reordering inside a path was seen (see
  // RetransmitOptions::max_gap_threshold).
  uint32_t gap_threshold() const { return gap_thresh_; }
  // RTO of transmissions on path `p`, backoff included (see class comment).
  DurationNs PathRto(wire::PathId p) const;
  // RTOs fired since an ack last acknowledged something new (or since
  // Reset), the one just fired included. Unlike the backoff, not capped by
  // max_rto.
  uint32_t rtos_since_progress() const { return rtos_since_progress_; }

  // Tells the manager that path `p` now takes a different route (its entropy
  // was recycled): transmissions made on p before this call are no longer
  // FIFO-ordered with later ones, so arrivals after the change do not
  // declare them lost by gap (time and RTO still apply).
  void OnPathRerouted(wire::PathId p);

  // Calls fn(wire::Psn psn, uint64_t tag, uint32_t bytes) for every packet
  // sent and not acked (in flight or lost), lowest PSN first. Use before
  // Reset() to fail the messages of a dead peer.
  template <class Fn>
  void ForEachUnacked(Fn fn) const {
    for (wire::Psn p = base_; p != next_; ++p) {
      const Packet& pkt = ring_[p.value() & mask_];
      if (pkt.state == State::kInFlight || pkt.state == State::kLost) {
        fn(p, pkt.tag, pkt.bytes);
      }
    }
  }

  const SenderCounters& counters() const { return counters_; }
  const RetransmitOptions& options() const { return opts_; }

 private:
  enum class State : uint8_t { kEmpty, kInFlight, kLost, kAcked };
  struct Packet {
    uint64_t tag = 0;
    uint64_t tx_index = 0;  // global send index of the latest transmission
    TimeNs sent;            // latest transmission
    wire::PathSeq seq;      // latest transmission
    uint32_t bytes = 0;
    uint16_t tx_count = 0;
    wire::PathId path = 0;  // latest transmission
    State state = State::kEmpty;
    LossCause last_loss = LossCause::kPathGap;
    bool in_queue = false;   // waiting in the retransmit heap
    bool ambiguous = false;  // re-sent while an earlier copy may arrive
    bool spurious_reported = false;
    bool loss_disproved = false;  // the copy declared lost arrived after all
  };
  struct PathState {
    explicit PathState(const RetransmitOptions& o)
        : log(o.initial_path_log), rtt(o.initial_rtt) {}
    PathTxLog log;
    RttEstimator rtt;
    wire::PathSeq hwm;  // highest seq known to have arrived
    wire::PathSeq last_seq;
    wire::PathSeq barrier;  // first seq after the last reroute
    wire::PathSeq pre_hwm;  // highest arrived seq before the barrier
    bool has_pre_hwm = false;
    bool has_hwm = false;
    bool has_last = false;
    bool has_barrier = false;
    bool active = false;   // listed in active_paths_
    bool touched = false;  // listed in touched_paths_
  };

  // The packet of `psn`; nullptr unless base_ <= psn < next_. Inline: the
  // loss rules look up every transmission they pass.
  Packet* Get(wire::Psn psn) {
    if (psn < base_ || psn >= next_) return nullptr;
    return &ring_[psn.value() & mask_];
  }
  const Packet* Get(wire::Psn psn) const {
    if (psn < base_ || psn >= next_) return nullptr;
    return &ring_[psn.value() & mask_];
  }
  // Path p's state, created (with those below it) on first use. The common
  // case is inline: it runs twice per packet.
  PathState& Path(wire::PathId p) {
    return p < paths_.size() ? paths_[p] : AddPaths(p);
  }
  PathState& AddPaths(wire::PathId p);
  // The per-path part of recording `count` transmissions sent back to back
  // with path seqs from `seq`: BeginPathSends before they enter ps.log
  // (returns whether the path was idle), EndPathSends after.
  bool BeginPathSends(PathState& ps, wire::PathSeq seq, uint32_t count);
  void EndPathSends(PathState& ps, wire::PathId path, bool was_idle,
                    TimeNs now);
  void Grow();
  // `repairs`: TxRecord::kFirstSend, or the LossCause a re-send repairs.
  void RecordTransmission(Packet& pkt, wire::Psn psn, wire::PathId path,
                          wire::PathSeq seq, TimeNs now, uint8_t repairs);
  // Notes that (p, seq), sent at `sent`, arrived.
  void NoteArrival(wire::PathId p, wire::PathSeq seq, TimeNs sent);
  // True if no SACK bit names a PSN `span` or more past cum (never sent).
  static bool SackWithin(absl::Span<const uint64_t> sack, uint64_t span);
  // The echoed transmission: RTT sample, proof of arrival, what it proves
  // about earlier loss declarations; sets the echo_* scratch.
  void ProcessEcho(const AckInfo& ack, TimeNs now, SenderOutcome& out);
  // The echoed copy `rec` had been superseded by a re-send: that re-send
  // was spurious (reported once per packet).
  void OnSupersededEchoed(TxRecord& rec, Packet* pkt, wire::PathId echo_path,
                          TimeNs now, SenderOutcome& out);
  // Acks the PSNs the SACK bitmap adds to the memo (bit i of word j of the
  // ack is bit memo_shift + 64 j + i of the memo; < 0: no memo applies).
  void AckSacked(const AckInfo& ack, int32_t memo_shift, bool runs, TimeNs now,
                 SenderOutcome& out);
  // The ack newly acknowledged data: the RTO restarts, learnt tolerances
  // decay, the tail probe re-arms.
  void OnAckProgress(TimeNs now);
  void TakeRttSample(wire::PathId p, TxRecord& rec, DurationNs ack_delay,
                     TimeNs now, SenderOutcome& out);
  void MarkAcked(Packet& pkt, wire::Psn psn, TimeNs now, SenderOutcome& out);
  // Marks every PSN in [from, to) acked (those not acked yet), in PSN order:
  // runs of packets that qualify (see AckedPackets) as one entry
  // when `runs`, the others one by one.
  void AckRange(wire::Psn from, wire::Psn to, bool runs, TimeNs now,
                SenderOutcome& out);
  // The longest AckedRun reported at once (a GSO run is at most 64).
  static constexpr uint32_t kMaxAckedRun = 64;
  // How many packets from `p` (before `end`) form an AckedRun, at most
  // kMaxAckedRun: 0 if p's packet cannot start one.
  uint32_t AckedRunLength(wire::Psn p, wire::Psn end) const;
  void DeclareLost(Packet& pkt, wire::Psn psn, LossCause cause,
                   SenderOutcome& out);
  // Looks at path p's oldest unresolved transmissions: drops dead ones,
  // declares gap and time losses, and schedules or parks the path in
  // path_timers_ for its next look.
  void ProcessPath(wire::PathId p, TimeNs now, SenderOutcome& out);
  // Processes paths whose arrival mark moved, that were released by new
  // arrivals or this ack, and whose timers are due.
  void ProcessPathTimers(TimeNs now, bool after_ack, SenderOutcome& out);
  // Oldest live unresolved transmission of p (dropping dead ones); nullptr
  // if none.
  TxRecord* LiveFront(PathState& ps);
  // RTO check over all active paths: declares expired transmissions lost
  // (returns true if any did) and recomputes rto_deadline_.
  bool RtoScan(TimeNs now, SenderOutcome& out);
  void RecomputeRtoDeadline();
  bool IsGapLost(const PathState& ps, const TxRecord& rec) const;
  // Declares every in-flight packet with PSN >= from lost.
  void DeclareAllLost(wire::Psn from, LossCause cause, SenderOutcome& out);
  void ProcessNak(wire::Psn cum, SenderOutcome& out);
  void MaybeScheduleProbe(TimeNs now, SenderOutcome& out);
  DurationNs Pto() const;
  // Pto(), but at least the newest first send's path srtt + 4 rttvar (+ ack
  // delay) once that path has samples.
  DurationNs ProbeTimeout() const;
  void PushRetransmit(wire::Psn psn);
  // The last RTO was premature: reset the backoff, count, report.
  void UndoRto(SenderOutcome& out);
  // An ack echoed `rec`, on `path`, a copy that `cause` had declared lost:
  // learn from the mistake (widen the reorder window or the gap threshold,
  // undo the RTO).
  void OnLossDisproved(LossCause cause, wire::PathId path, const TxRecord& rec,
                       TimeNs now, SenderOutcome& out);
  // The echoed transmission `rec` (of packet `pkt`, nullptr if it left the
  // window) arrived as a duplicate: undo what the unneeded re-send implied.
  void OnDuplicateArrival(const TxRecord& rec, Packet* pkt, TimeNs now,
                          SenderOutcome& out);
  // A time loss turned out spurious: widen the reorder window.
  void OnSpuriousTimeLoss(TimeNs now);
  // Shrinks the learnt reorder tolerance by one step per 16 srtt.
  void DecayReorderWindow(TimeNs now);
  // How many seqs of path p known to have arrived come after `rec`. For a
  // late copy just echoed: the receiver acks it at once (it fills a hole or
  // is a duplicate), so these are the seqs that overtook it.
  uint32_t Overtaken(wire::PathId p, const TxRecord& rec) const {
    return static_cast<uint32_t>(std::max(paths_[p].hwm - rec.seq, 0));
  }
  // A path-gap loss turned out spurious: the declared-lost copy was echoed
  // after `displacement` later seqs of its path. Raises gap_thresh_.
  void OnSpuriousGapLoss(uint32_t displacement, TimeNs now);
  // Halves the gap threshold once per 64 srtt without a spurious gap loss.
  void DecayGapThreshold(TimeNs now);

  RetransmitOptions opts_;
  std::vector<Packet> ring_;  // indexed by psn & mask_
  uint32_t mask_ = 0;
  wire::Psn base_;   // lowest unacked
  wire::Psn next_;   // next PSN to assign
  wire::Psn reach_;  // PSNs below were reportable by the latest ack
  uint64_t tx_counter_ = 0;
  // Latest send time of a transmission known to have arrived (RACK).
  TimeNs rack_sent_ = TimeNs::Zero();
  bool has_rack_ = false;
  // Last ack that newly acknowledged data (or the first send after idle):
  // the RTO counts from here, so it fires only after an RTO without progress.
  TimeNs last_progress_ = TimeNs::Zero();
  // Set by an RTO; a later echo of a transmission that RTO declared lost
  // proves it spurious (reported once).
  bool rto_undo_armed_ = false;
  TimeNs rto_at_ = TimeNs::Infinite();  // when the last RTO fired
  // The same, but Zero before any: an RTO deadline counts from it too, so
  // the next RTO comes a whole (backed-off) RTO after the last one even for
  // packets sent long before it.
  TimeNs rto_restart_ = TimeNs::Zero();
  // Where a live transmission's RTO counts from: the latest of its send,
  // the last progress and the last RTO.
  TimeNs RtoBase(TimeNs sent) const {
    return Max(Max(sent, last_progress_), rto_restart_);
  }
  // This ack newly acknowledged a packet sent once, before the last RTO
  // (see OnAck: the F-RTO rule).
  bool acked_pre_rto_original_ = false;
  std::vector<wire::Psn> rto_lost_;  // PSNs the last RTO declared lost
  // Extra reorder tolerance (eighths of srtt) learnt from spurious time
  // losses; decays while none are seen.
  int reo_extra_eighths_ = 0;
  TimeNs reo_changed_ = TimeNs::Zero();
  // Seqs a path must deliver past a transmission before the gap rule
  // declares it lost (1 = strict FIFO); learnt from spurious gap losses.
  uint32_t gap_thresh_ = 1;
  TimeNs gap_changed_ = TimeNs::Zero();
  // Until then a duplicate re-send proves no reorder: kNetDupQuietSrtts
  // after a first transmission last arrived twice (the network duplicates).
  TimeNs net_dup_quiet_until_ = TimeNs::Zero();
  static constexpr int64_t kNetDupQuietSrtts = 256;
  // The probe timeout is (2 srtt + max_ack_delay) << pto_shift_: a tail
  // probe proven spurious (a host whose scheduling delays answers) doubles
  // it, up to 8x; one step back per 256 srtt without one.
  int pto_shift_ = 0;
  TimeNs pto_changed_ = TimeNs::Zero();
  void DecayPto(TimeNs now);
  uint64_t bytes_in_flight_ = 0;
  uint32_t packets_in_flight_ = 0;
  uint32_t lost_pending_ = 0;
  std::vector<wire::Psn> heap_;  // min-heap of lost PSNs (lazy deletion)
  std::vector<PathState> paths_;
  std::vector<wire::PathId> active_paths_;   // paths with unresolved tx
  std::vector<wire::PathId> touched_paths_;  // arrival mark moved this ack
  std::vector<wire::PathId> scratch_paths_;
  PathTimerQueue path_timers_;
  RttEstimator rtt_;
  // RTT including the receiver's ack delay: what the sender waits for.
  RttEstimator response_;
  DurationNs rto_floor_;
  TimeNs rto_floor_changed_ = TimeNs::Zero();
  int backoff_ = 0;
  uint32_t rtos_since_progress_ = 0;
  // Earliest RTO expiry; exact after RtoScan, lowered by new sends, may be
  // early (then RtoScan finds nothing and recomputes).
  TimeNs rto_deadline_ = TimeNs::Infinite();
  // The send time and path of the last transmission that lowered
  // rto_deadline_ to at most sent + PathRto(path): the next one on that
  // path at that time (a burst) can skip the computation. Forgotten by
  // everything that may change PathRto or raise rto_deadline_ (acks,
  // timers, Reset, RecomputeRtoDeadline).
  TimeNs rto_memo_sent_ = TimeNs::Infinite();
  wire::PathId rto_memo_path_ = 0;
  TimeNs tlp_base_ = TimeNs::Infinite();  // last new send / ack progress
  wire::PathId tlp_path_ = 0;             // path of the newest first send
  bool tlp_armed_ = false;
  // The SACK bitmap of the newest ack processed (by cum): every PSN it
  // names is acked already, so a later ack walks only the bits it adds.
  // With a hole in front, each ack repeats every bit after the hole (up to
  // 64 words), and walking those packet by packet was the sender's largest
  // ack cost under 1 % loss (perf). Empty after Reset.
  wire::Psn sack_memo_cum_;
  std::vector<uint64_t> sack_memo_;
  // Bits [off, off + 64) of sack_memo_ (0 beyond it).
  uint64_t SackMemoBits(uint64_t off) const;
  bool nak_active_ = false;  // last NAK's cum and the send index then
  wire::Psn nak_cum_;
  uint64_t nak_tx_mark_ = 0;
  bool refused_ = false;  // ResendRefused ran; its send index then
  uint64_t refused_tx_mark_ = 0;
  // Scratch of the ack being processed: the packet whose copy was echoed.
  bool echo_active_ = false;
  wire::Psn echo_psn_;
  wire::PathId echo_path_ = 0;
  wire::PathSeq echo_seq_;
  bool echo_outstanding_ = false;  // the echoed copy was not declared lost
  SenderCounters counters_;
};

}  // namespace braid::retransmit

#endif  // BRAID_RETRANSMIT_SENT_PACKET_MANAGER_H_

// Queue pairs of braid0: RC (reliable connected) and UD (unreliable
// datagram).
//
// An RC QP is an ordered stream of the context's braid endpoint to the
// remote QP's endpoint: requests (SEND, WRITE, READ, atomics) travel on it
// in post order, the responder answers with ACK / READ response / atomic
// response / NAK on its own stream, and every message piggy-backs the
// sender's cumulative acknowledgement of the reverse direction. Completions
// are generated in post order (RC ordering) from the head of the send
// queue. Errors follow the IB spec (the WR completes in error, the QP
// moves to ERR and flushes every later WR, send and receive, with
// IBV_WC_WR_FLUSH_ERR), with one deliberate exception: a remote access
// violation (rkey, bounds, access flags) completes only its WR with
// IBV_WC_REM_ACCESS_ERR, and both QPs keep working, so a peer guessing
// rkeys cannot stop the QP (docs/verbs.md). Code says why a WR ended
// (WcCause); WcStatus (wc_status.h) picks the status.
//
// Methods are called with the context lock held. The implementation is
// split by job: qp_state.cc (create, modify, query), qp_rc.cc (RC
// requester and responder), qp_ud.cc (UD), qp_post.cc (post_send /
// post_recv validation and queueing), qp_ex.cc (the ibv_wr_* API).
#ifndef BRAID_VERBS_COMPAT_QP_H_
#define BRAID_VERBS_COMPAT_QP_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "braid/address.h"
#include "braid/endpoint.h"
#include "braid/time.h"
#include "verbs_compat/recv_queue.h"
#include "verbs_compat/shell.h"
#include "verbs_compat/verbs_wire.h"
#include "verbs_compat/wc_status.h"

namespace braid::verbs_compat {

enum class AccessResult : uint8_t;
class Context;
class Cq;
class Pd;
class Srq;

struct SendWqe {
  uint64_t wr_id = 0;
  ibv_wr_opcode opcode = IBV_WR_SEND;
  unsigned send_flags = 0;
  uint32_t imm = 0;  // raw, as the app gave it (network order)
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  absl::InlinedVector<ibv_sge, 4> sge;
  std::vector<uint8_t> inline_data;
  bool is_inline = false;
  uint64_t length = 0;  // bytes the WR moves
  uint32_t psn = 0;
  // UD destination.
  NetAddr ud_dest;
  uint32_t ud_qpn = 0;
  uint32_t ud_qkey = 0;
  uint32_t ud_flow = 0;  // the AH's flow label: the send's path hint
  // Progress.
  bool sent = false;
  bool done = false;
  TimeNs sent_at = TimeNs::Zero();  // last (re)transmission (RC)
  // The transport acknowledged every byte of the request (RC).
  bool delivered = false;
  TimeNs delivered_at = TimeNs::Zero();
  // Endpoint sends of this WR still reading the application's buffer (the
  // payload went without a copy): the WR does not complete while > 0, so
  // the buffer is the application's again when its completion is polled.
  uint16_t zero_copy_pending = 0;
  ibv_wc_status status = IBV_WC_SUCCESS;
  uint8_t rnr_left = 0;
};

// How the payload after a message's verbs header arrived: in the message,
// or placed directly by the endpoint (see verbs_wire.h, direct placement).
struct Arrival {
  PlacementStatus placement = PlacementStatus::kNone;
  PlacementDescriptor descriptor;
  uint32_t placed_len = 0;  // payload bytes placed (or refused), not in msg
};

// The affiliated asynchronous event a QP that enters ERR raises (IB spec
// 11.6.3.1), as real devices (mlx5, rxe) raise them: an error a
// completion reports raises none.
enum class QpErrorEvent : uint8_t {
  // A completion reports it: requester errors (remote NAKs, retries or RNR
  // retries exceeded, local protection / length errors), a responder error
  // on a receive WR, or ibv_modify_qp to ERR.
  kNone,
  // IBV_EVENT_QP_FATAL: no WR reports it (its CQ overran, or braid's
  // transport failed a response, with no WR outstanding).
  kFatal,
  kReqErr,  // IBV_EVENT_QP_REQ_ERR: responder, an invalid request
  // (A remote access violation raises no event: the QP stays as it is.)
};

// Counters of one QP (printed by BRAID_VERBS_STATS=1 at close).
struct QpCounters {
  uint64_t requests_sent = 0;
  uint64_t requests_received = 0;
  uint64_t acks_sent = 0;
  uint64_t rnr_naks_sent = 0;
  uint64_t rnr_naks_received = 0;
  uint64_t rnr_retries = 0;
  uint64_t access_errors = 0;  // remote accesses refused (responder)
  uint64_t dropped_out_of_sequence = 0;
  uint64_t dropped_wrong_source = 0;
  uint64_t dropped_bad_state = 0;
  uint64_t dropped_bad_qkey = 0;
  uint64_t dropped_no_recv = 0;   // UD: no receive posted
  uint64_t dropped_too_long = 0;  // UD: message larger than the receive
  uint64_t unexpected_responses = 0;
  uint64_t retry_timeouts = 0;  // timeout x (retry_cnt + 1) without an ACK
  // UC: messages the responder dropped (no receive posted, access or
  // length error), where RC would NAK.
  uint64_t uc_dropped = 0;
};

class Qp {
 public:
  // `attr` has been validated by Create (qp_state.cc).
  Qp(Context* ctx, Pd* pd, const ibv_qp_init_attr_ex& attr, uint32_t qpn);
  ~Qp();

  ibv_qp* ibv() { return &shell_.ibv.qp_base; }
  ibv_qp_ex* ibv_ex() { return &shell_.ibv; }
  static Qp* From(const ibv_qp* p) {
    return Shell<ibv_qp_ex, Qp>::OwnerOf(reinterpret_cast<const ibv_qp_ex*>(p));
  }
  static Qp* FromEx(const ibv_qp_ex* p) {
    return Shell<ibv_qp_ex, Qp>::OwnerOf(p);
  }

  // Validates create attributes against device limits and the objects'
  // ownership. Returns 0 or an errno; fills the actual caps into attr.
  static int CheckCreate(Context* ctx, ibv_qp_init_attr_ex* attr);

  uint32_t qpn() const { return qpn_; }
  ibv_qp_type type() const { return type_; }
  ibv_qp_state state() const { return state_; }
  Pd* pd() const { return pd_; }
  Cq* send_cq() const { return send_cq_; }
  Cq* recv_cq() const { return recv_cq_; }
  Srq* srq() const { return srq_; }
  const QpCounters& counters() const { return counters_; }

  // ibv_modify_qp / ibv_query_qp (qp_state.cc). Return 0 or an errno.
  int Modify(const ibv_qp_attr& attr, int mask);
  int Query(ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) const;

  // ibv_post_send / ibv_post_recv (qp_post.cc). Return 0 or an errno and
  // set *bad to the first WR not queued; the WRs before it are queued and
  // executed (sent, or flushed in ERR) as if posted alone.
  int PostSend(ibv_send_wr* wr, ibv_send_wr** bad);
  int PostRecv(ibv_recv_wr* wr, ibv_recv_wr** bad);

  // A verbs message for this QP arrived from `from`.
  void OnMessage(const NetAddr& from, const VerbsHeader& h,
                 absl::Span<const uint8_t> payload, const Arrival& arrival);
  // The endpoint's placement handler, for a fragment of a message to this
  // QP (qp_access.cc): validates the target (peer and stream, QP state, rkey /
  // MR bounds / access flags, or the READ WR) for every fragment before a
  // byte is written. Returns false to refuse.
  bool PlaceTarget(const PlacementRequest& req, absl::Span<uint8_t>* dest);
  // The transport gave up on a message this QP sent (cookie's psn), for
  // `cause`.
  void OnTransportFailure(uint32_t psn, bool was_response, FailureCause cause);
  // Transmits queued WRs whose turn has come. A WR posted with
  // IBV_SEND_FENCE, and every WR after it, waits until each earlier READ /
  // atomic has its response (ResumeFenced pumps again). Returns true if
  // work remains (transport backpressure or a running RNR timer); a fence
  // wait is not such work.
  bool Pump(TimeNs now);
  // Sends a standalone ACK if the responder completed requests that no
  // message has acknowledged yet.
  void FlushAck();
  // Requester, local ACK timeout (4.096 us x 2^timeout x (retry_cnt + 1);
  // timeout 0 = infinite, IB spec), in two steps (qp_rc.cc).
  // RetryCandidate: the transport delivered the oldest outstanding request
  // (braid's own retransmission and peer_timeout govern until then), and
  // since its delivery — or the last verbs ACK / response / RNR NAK — that
  // long has passed without an answer. ResolveRetry, given the count of
  // packets received from the peer: for a READ / atomic, packets since the
  // last look mean the response may be under way, and restart the wait;
  // otherwise the request completes with IBV_WC_RETRY_EXC_ERR and the QP
  // goes to ERR.
  bool RetryCandidate(TimeNs now) const;
  void ResolveRetry(TimeNs now, uint64_t peer_packets);
  // The endpoint no longer reads the application buffer of one zero-copy
  // send of the WR with this PSN (it completed or failed): the WR may
  // complete.
  void ReleaseZeroCopy(uint32_t psn);
  // The transport delivered the request with this PSN (its send completed).
  void OnRequestDelivered(uint32_t psn, TimeNs now);
  const NetAddr& remote() const { return remote_; }
  bool ack_owed() const {
    return PsnDiff(PsnAdd(expected_psn_, kPsnMask), last_ack_sent_) > 0;
  }

  // Moves to ERR and flushes every outstanding WR (qp_state.cc), and
  // raises `event` (none if kNone) when the QP was not in ERR yet. A QP
  // attached to an SRQ also raises IBV_EVENT_QP_LAST_WQE_REACHED then (IB
  // spec; MPI and UCX wait for it before destroying such a QP).
  void EnterError(QpErrorEvent event);

  // Flags used by the context's work lists.
  bool in_pump_list = false;
  bool in_ack_list = false;

  // Staging area of the ibv_wr_* API (qp_ex.cc).
  struct StagedWr {
    ibv_send_wr wr;
    size_t sge_begin;  // into ex_sges (pointers are fixed at complete)
  };
  std::vector<StagedWr> ex_wrs;
  std::vector<ibv_sge> ex_sges;
  std::vector<std::vector<uint8_t>> ex_inline;
  int ex_error = 0;

 private:
  friend class QpTestPeer;

  enum class TxResult : uint8_t { kSent, kRetry, kError };

  // qp_rc.cc
  void RcOnRequest(const VerbsHeader& h, absl::Span<const uint8_t> payload,
                   const Arrival& arrival);
  void RcOnResponse(const VerbsHeader& h, absl::Span<const uint8_t> payload,
                    const Arrival& arrival);
  // RcOnRequest for WRITE / WRITE_IMM. Returns false if it already answered
  // (NAK) and the request is not complete.
  bool RcOnWrite(const VerbsHeader& h, absl::Span<const uint8_t> payload,
                 const Arrival& arrival);
  void RcAckUpTo(uint32_t psn);
  TxResult RcTransmit(SendWqe& w);
  // `place`: send `data` with a placement descriptor (a READ response the
  // requester asked to be placed).
  void RcSendResponse(VerbsOp op, uint32_t psn, uint8_t syndrome, uint32_t imm,
                      absl::Span<const uint8_t> data, uint64_t orig,
                      bool place = false);
  // A request the responder refuses: RC sends a NAK and enters ERR,
  // raising `event` (kReqErr, or kNone when a receive WR's completion
  // reports the error); UC drops it (UcDrop).
  void RcResponderError(NakCode code, uint32_t psn, QpErrorEvent event);
  // qp_access.cc. Checks a remote access to [addr, addr + len) under
  // `rkey`: the QP grants `need` (IBV_ACCESS_REMOTE_*), and so does a
  // region of the QP's PD holding the range. On kOk sets *out.
  AccessResult RemoteAccess(uint32_t rkey, uint64_t addr, uint64_t len,
                            int need, uint8_t** out) const;
  // A WRITE / READ / atomic the responder refuses for `why`: counts it,
  // and RC answers with a remote access NAK and skips the request (the QP
  // stays in its state, unlike RC), UC drops it (UcDrop).
  void RcAccessError(AccessResult why, uint32_t psn);
  // A SEND or WRITE_IMM found no receive posted: RC sends an RNR NAK (the
  // requester retries), UC drops it.
  void RcNoReceive(uint32_t psn);
  void UcDrop(uint32_t psn);
  // Scatters `parts` into a receive WQE's SGEs. Returns kSuccess,
  // kLocalLength or kLocalProtection; touches nothing on error.
  WcCause Scatter(const RecvWqe& w,
                  std::initializer_list<absl::Span<const uint8_t>> parts);
  // The next receive WQE (SRQ or RQ), or nullptr; PopRecv consumes it.
  RecvWqe* PeekRecv();
  void PopRecv();
  // Sends a response/ACK on this QP's stream, or queues it behind earlier
  // queued ones (endpoint backpressure). Keeps stream order.
  void SendOrQueue(absl::Span<const uint8_t> msg, uint64_t cookie,
                   const std::optional<PlacementDescriptor>& placement = {});
  // Sends queued responses; true if all went.
  bool DrainPending();
  // True if a READ / atomic request is still waiting for its response.
  bool ResponsePending();
  // A READ / atomic response arrived: if a fenced WR is next to transmit,
  // asks the context to pump this QP.
  void ResumeFenced();
  void CompleteRecv(const RecvWqe& w, WcCause cause, ibv_wc_opcode op,
                    uint32_t byte_len, bool with_imm, uint32_t imm,
                    uint32_t src_qp, uint16_t slid, bool grh, bool solicited);

  // qp_ud.cc
  void UdOnMessage(const NetAddr& from, const VerbsHeader& h,
                   absl::Span<const uint8_t> payload);
  TxResult UdTransmit(SendWqe& w);

  // Shared: gathers a WQE's payload after `header_len` bytes of scratch.
  // Returns kSuccess or kLocalProtection.
  WcCause Gather(const SendWqe& w, size_t header_len,
                 std::vector<uint8_t>* out);
  // Completes WQEs at the head of the send queue in order.
  void CompleteSendHead();
  // Completes `w` in error (its status: WcStatus(cause, transport)).
  void FailWqe(SendWqe& w, WcCause cause,
               FailureCause transport = FailureCause::kNone);
  SendWqe& Wqe(uint64_t index) { return sq_[index % sq_.size()]; }
  // Index of the outstanding (sent, not completed) WQE carrying `psn`, or
  // -1.
  int64_t IndexOfPsn(uint32_t psn);
  uint32_t LastProcessedPsn() const { return PsnAdd(expected_psn_, kPsnMask); }
  void ResetQueues();

  Shell<ibv_qp_ex, Qp> shell_;
  Context* ctx_;
  Pd* pd_;
  Cq* send_cq_;
  Cq* recv_cq_;
  Srq* srq_;
  ibv_qp_type type_;
  uint32_t qpn_;
  ibv_qp_state state_ = IBV_QPS_RESET;
  bool sq_sig_all_;
  ibv_qp_cap cap_;
  ibv_qp_attr attr_{};  // the attributes set so far

  // Connection (RC): the remote endpoint and QP.
  NetAddr remote_;
  uint16_t stream_;

  // Send queue: monotonic counters, slot = counter % size.
  std::vector<SendWqe> sq_;
  uint64_t sq_head_ = 0;  // oldest WQE not yet completed
  uint64_t sq_ack_ = 0;   // oldest WQE not yet acknowledged (RC)
  uint64_t sq_send_ = 0;  // next WQE to transmit
  uint64_t sq_tail_ = 0;  // next free slot
  uint32_t next_psn_ = 0;
  TimeNs rnr_until_ = TimeNs::Zero();
  TimeNs ack_progress_at_ = TimeNs::Zero();  // last ACK/response/NAK
  TimeNs transport_progress_at_ = TimeNs::Zero();
  uint64_t last_peer_packets_ = 0;  // packets from the peer, last look

  // Receive queue (unused with an SRQ).
  RecvQueue rq_;

  // Responses that met endpoint backpressure, in stream order.
  struct PendingOut {
    std::vector<uint8_t> msg;
    uint64_t cookie = 0;
    std::optional<PlacementDescriptor> placement;
  };
  std::deque<PendingOut> pending_out_;

  // Responder.
  uint32_t expected_psn_ = 0;
  uint32_t last_ack_sent_ = 0;

  QpCounters counters_;
};

// Cookie of a message a QP sends: qpn, whether it is a response, psn, and
// whether its payload is read from application memory (zero-copy).
inline constexpr int kCookieZeroCopyBit = 30;
inline uint64_t MakeCookie(uint32_t qpn, bool response, uint32_t psn,
                           bool zero_copy = false) {
  return (uint64_t{qpn} << 32) | (response ? 1ull << 31 : 0) |
         (zero_copy ? 1ull << kCookieZeroCopyBit : 0) | (psn & kPsnMask);
}

// The RNR timer a min_rnr_timer code (0..31) stands for.
DurationNs RnrDelay(uint8_t code);

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_QP_H_

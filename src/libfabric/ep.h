// An FI_EP_RDM endpoint: one braid Endpoint, the matching queues, and the
// translation of braid completions into CQ entries. Every method runs
// with the domain lock held (the fi_ops glue in ep_ops.cc takes it).
//
// Progress is manual: Progress() (called by every read of a CQ the
// endpoint is bound to, and by fi_cq_sread/fi_trywait) polls braid once,
// matches arrived messages to posted receives (or queues them as
// unexpected, without loss: past FI_BRAID_UNEXPECTED_MB it stops taking
// messages from braid, which keeps them in its bounded receive queue and
// then holds the senders back by credit), and turns send completions into
// CQ entries. Messages are sent on one ordered braid stream per peer
// (FI_ORDER_SAS); a send completes when braid reports it acknowledged and
// released to the peer's completion queue, and a failure names the peer
// and the cause. RMA (rma.cc) travels on the same stream: see
// wire_header.h for its messages and RmaOp for when an operation
// completes.
#ifndef BRAID_LIBFABRIC_EP_H_
#define BRAID_LIBFABRIC_EP_H_

#include <rdma/fi_atomic.h>
#include <sys/uio.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "braid/completion.h"
#include "braid/endpoint.h"
#include "libfabric/atomic_math.h"
#include "libfabric/config.h"
#include "libfabric/match_queue.h"
#include "libfabric/mr_table.h"
#include "libfabric/objects.h"
#include "libfabric/wire_header.h"

namespace braid::libfabric {

// Every message goes on this one ordered braid stream: FI_ORDER_SAS.
inline constexpr uint16_t kStream = 1;
// Sends at least this large (and with a completion) go from the
// application's buffer; smaller ones are copied (cheaper than tracking).
inline constexpr size_t kZeroCopyMin = 16384;
// braid send cookies: a TxRequest's index + 1; kRmaCookie | an RMA
// request id; kResponseCookie for a target's answers (no completion).
inline constexpr uint64_t kRmaCookie = 1ull << 63;
inline constexpr uint64_t kResponseCookie = 1ull << 62;

// The libfabric error of a braid send failure.
int ErrnoOf(FailureCause c);
size_t IovBytes(const iovec* iov, size_t count);
// True if `caps` allow the RMA direction `bit` (FI_READ, FI_WRITE,
// FI_REMOTE_READ, FI_REMOTE_WRITE): FI_RMA, and either no direction bit
// (all are implied) or that one.
bool RmaAllowed(uint64_t caps, uint64_t bit);
// The same for FI_ATOMIC and the direction bits `bits` (all of them).
bool AtomicAllowed(uint64_t caps, uint64_t bits);

// A send that will produce a completion (cookie = index + 1).
struct TxRequest {
  void* context = nullptr;
  uint64_t flags = 0;  // CQ entry flags
  size_t len = 0;
  uint64_t tag = 0;
  uint64_t data = 0;
  bool want_completion = false;
};

// An RMA operation this endpoint started (its request id: RmaId). A
// write completes when the target's answer (kRmaResp) and braid's send
// completion of the write are both in (braid may read the source buffer
// until the latter); a read when its response (placed into `iov`) or a
// refusal arrives. A send failure ends either with the peer and cause; so
// does a target that has taken the request and then says nothing (no
// answer, no fragment of a read response) for the peer timeout.
struct RmaOp {
  uint32_t gen = 0;  // bumped at every reuse of the slot
  bool live = false;
  bool is_read = false;
  bool is_atomic = false;  // completes on its answer, as a read does
  AtomicKind atomic_kind = AtomicKind::kWrite;
  bool want_completion = false;
  bool sent = false;      // braid acknowledged the request message
  bool answered = false;  // the target's verdict arrived (writes)
  RmaStatus status = RmaStatus::kOk;
  // Once sent: when the target's silence fails the operation, and the
  // read response's fragments placed (each one moves the deadline on).
  std::chrono::steady_clock::time_point deadline;
  uint32_t placed = 0;
  uint32_t placed_seen = 0;
  void* context = nullptr;
  NetAddr peer;
  uint64_t addr = 0;  // the target address (for error texts)
  size_t len = 0;
  // Reads: the destination; one iov is placed into directly, several go
  // through `bounce`. Fetching atomics: where the old values go.
  std::array<iovec, kIovLimit> iov{};
  size_t iov_count = 0;
  std::vector<uint8_t> bounce;
};

// A target's answer that braid's send queue had no room for yet.
struct PendingResponse {
  NetAddr peer;
  std::vector<uint8_t> buf;  // header (+ read data)
  std::optional<PlacementDescriptor> placement;
};

struct EpCounters {
  std::array<uint64_t, kHeaderErrorCount> dropped{};  // by HeaderError
  uint64_t dropped_placed = 0;  // a message with a placement descriptor
  uint64_t unexpected = 0;      // messages that waited for a receive
  uint64_t send_failures = 0;
  uint64_t backpressure_polls = 0;  // polls that took no messages
  // RMA this endpoint refused as target, by RmaStatus; answers that name
  // no operation of ours (stale or forged); RMA messages that break the
  // protocol (an unplaced write, a placed read request).
  std::array<uint64_t, kRmaStatusCount> rma_refused{};
  uint64_t rma_stale = 0;
  uint64_t rma_malformed = 0;
};

struct Ep {
  fid_ep fid;
  Domain* domain = nullptr;
  uint64_t caps = 0;
  Av* av = nullptr;
  Cq* tx_cq = nullptr;
  Cq* rx_cq = nullptr;
  bool tx_selective = false;
  bool rx_selective = false;
  uint64_t tx_op_flags = 0;
  uint64_t rx_op_flags = 0;
  bool enabled = false;
  std::unique_ptr<Endpoint> endpoint;
  // The application's calls that drive this endpoint (CQ reads that poll
  // it, sends, receives), and the count the progress thread last saw: it
  // steps in only when they stay equal for a period.
  uint64_t app_calls = 0;
  uint64_t app_calls_seen = 0;
  EpCounters counters;

  // One send. `iov`/`count`: the payload; `dest`: an AV address. `flags`:
  // the operation's (FI_INJECT, FI_COMPLETION, FI_REMOTE_CQ_DATA, ...).
  // `inject_call`: fi_inject / fi_injectdata, which never complete (FI_INJECT
  // on fi_sendmsg only lets the caller reuse the buffer at once).
  // Returns 0, -FI_EAGAIN (braid's send queue is full: read the CQ and
  // retry), -FI_EINVAL (bad address or length), -FI_EMSGSIZE,
  // -FI_EOPBADSTATE (not enabled).
  ssize_t Send(MsgKind kind, const iovec* iov, size_t count, fi_addr_t dest,
               uint64_t tag, uint64_t data, void* context, uint64_t flags,
               bool inject_call = false);
  // One receive. Matches the oldest unexpected message at once, else
  // queues. Tagged receives also take FI_PEEK (report the oldest matching
  // unexpected message, or FI_ENOMSG, in the CQ), FI_PEEK | FI_CLAIM (and
  // set it aside for a later FI_CLAIM receive with the same context) and
  // FI_DISCARD (drop it). Returns 0, -FI_EINVAL, -FI_EOPBADSTATE,
  // -FI_EBADFLAGS.
  ssize_t Recv(MsgKind kind, const iovec* iov, size_t count, fi_addr_t src,
               uint64_t tag, uint64_t ignore, void* context, uint64_t flags);
  // Cancels a posted receive: it completes with FI_ECANCELED. 0 or
  // -FI_ENOENT.
  ssize_t Cancel(void* context);
  // One RMA write of the iov's bytes to `addr` in the region `key` of
  // `dest` (fi_write*, fi_inject_write, fi_writedata: FI_REMOTE_CQ_DATA in
  // `flags` sends `data`). Returns as Send, and -FI_EOPNOTSUPP without
  // the FI_RMA / FI_WRITE capability.
  ssize_t Write(const iovec* iov, size_t count, fi_addr_t dest, uint64_t addr,
                uint64_t key, uint64_t data, void* context, uint64_t flags,
                bool inject_call = false);
  // One RMA read of the iov's length from `addr` in the region `key` of
  // `src` into the iov. Returns as Write (FI_READ).
  ssize_t Read(const iovec* iov, size_t count, fi_addr_t src, uint64_t addr,
               uint64_t key, void* context, uint64_t flags);
  // One atomic operation of `kind` (fi_atomic*, fi_fetch_atomic*,
  // fi_compare_atomic*): `op` on `dt` elements at `addr` in the region
  // `key` of `dest`, operands from `buf`, compare values from `cmp`, the
  // old values into `res` (the counts of cmp and res must match buf's).
  // Returns 0, -FI_EOPNOTSUPP (pair not offered, or no FI_ATOMIC),
  // -FI_EINVAL (counts, size over kMaxAtomicBytes), -FI_EAGAIN,
  // -FI_EOPBADSTATE.
  ssize_t Atomic(AtomicKind kind, const fi_ioc* buf, size_t buf_count,
                 const fi_ioc* cmp, size_t cmp_count, const fi_ioc* res,
                 size_t res_count, fi_addr_t dest, uint64_t addr, uint64_t key,
                 int dt, int op, void* context, uint64_t flags,
                 bool inject_call = false);
  // The braid placement handler (runs inside Poll, domain lock held): a
  // write's fragment goes into the region its key names if the access is
  // allowed, a read response's into the buffer of the read it answers if
  // it comes from that read's peer with the right length.
  bool Place(const PlacementRequest& req, absl::Span<uint8_t>* dest);
  // Polls braid once (see the file comment).
  void Progress();
  // Before the caller blocks on the endpoint's wait fd: transmits what
  // braid holds and arms its timer.
  void Flush();
  // Closes the braid endpoint; unexpected messages are dropped.
  void Close();
  int wait_fd() const { return endpoint ? endpoint->wait_fd() : -1; }
  NetAddr local_address() const { return endpoint->local_address(); }

 private:
  const char* KindName(MsgKind k) const;
  void HandleRecv(Completion& c);
  void HandleSendDone(const Completion& c);
  void Deliver(const PostedRecv& r, MsgKind kind, const NetAddr& peer,
               const MsgHeader& h, absl::Span<const uint8_t> payload);
  uint64_t AllocTx(const TxRequest& r);
  // The checks every send and RMA write makes of its arguments: iovec
  // count, destination, length, inject size. Returns 0 and fills *peer,
  // *len (bytes in the iovecs) and *inject, or the negative fi errno.
  ssize_t CheckTx(const iovec* iov, size_t count, fi_addr_t dest,
                  uint64_t flags, bool inject_call, const NetAddr** peer,
                  size_t* len, bool* inject) const;
  // Sends `hdr` followed by the `count` iovecs (`len` bytes) to `peer` as
  // one message: without a copy if `zero_copy` and it is large
  // (kZeroCopyMin), else copied. `o.prefix` is set here when needed.
  absl::Status SendWithHeader(const NetAddr& peer,
                              absl::Span<const uint8_t> hdr, const iovec* iov,
                              size_t count, size_t len, bool zero_copy,
                              SendOptions& o);
  // Appends the receive completion of a message from `peer` with header
  // `h` and `len` bytes for the receive with `context`.
  void PushRecvEntry(void* context, MsgKind kind, const MsgHeader& h,
                     size_t len, const NetAddr& peer);
  // RMA (rma.cc).
  void HandleRma(const Completion& c, const MsgHeader& h);
  void TargetWrite(const Completion& c, const MsgHeader& h);
  void TargetRead(const Completion& c, const MsgHeader& h);
  void ReadResponse(const Completion& c, const MsgHeader& h);
  void RmaAnswer(const Completion& c, const MsgHeader& h);
  void TargetAtomic(const Completion& c, const MsgHeader& h);
  void AtomicResponse(const Completion& c, const MsgHeader& h);
  void RmaSendDone(const Completion& c);
  // The live operation with request id `id`, or nullptr.
  RmaOp* FindOp(uint64_t id);
  uint64_t AllocOp();
  // Frees an operation that was never sent.
  void DropOp(uint64_t id);
  // How an operation ended.
  struct RmaEnd {
    RmaStatus status = RmaStatus::kOk;         // the target's verdict
    FailureCause cause = FailureCause::kNone;  // braid's send failure
    bool timed_out = false;  // the target took the request, then silence
  };
  // Completes (or fails) and frees the operation.
  void FinishOp(uint64_t id, RmaEnd end);
  // Fails the operations whose target has been silent past the peer
  // timeout (looks at most once a millisecond).
  void ExpireOps();
  void MaybeFinishWrite(uint64_t id);
  bool TargetAllows(uint64_t remote_cap) const;
  // Sends a target's answer (kRmaResp with `status`) or read response.
  void Answer(const NetAddr& peer, uint64_t id, RmaStatus status);
  void Respond(PendingResponse&& r);
  void FlushResponses();
  ssize_t Peek(const PostedRecv& r);
  ssize_t Claim(const PostedRecv& r);
  void PushRecvError(const PostedRecv& r, int err, int prov_errno,
                     std::string text);

  PostedQueue posted_[2];
  UnexpectedQueue unexpected_[2];
  std::vector<Completion> polled_;
  std::vector<TxRequest> tx_;
  std::vector<uint32_t> tx_free_;
  // Messages set aside by FI_PEEK | FI_CLAIM, by the peek's context.
  absl::flat_hash_map<void*, UnexpectedMsg> claimed_;
  std::vector<RmaOp> ops_;
  std::vector<uint32_t> ops_free_;
  size_t live_ops_ = 0;
  std::chrono::steady_clock::time_point next_expiry_scan_;
  std::deque<PendingResponse> responses_;
};

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_EP_H_

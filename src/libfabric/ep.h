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
// and the cause.
#ifndef BRAID_LIBFABRIC_EP_H_
#define BRAID_LIBFABRIC_EP_H_

#include <sys/uio.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "braid/completion.h"
#include "braid/endpoint.h"
#include "libfabric/match_queue.h"
#include "libfabric/objects.h"
#include "libfabric/wire_header.h"

namespace braid::libfabric {

// A send that will produce a completion (cookie = index + 1).
struct TxRequest {
  void* context = nullptr;
  uint64_t flags = 0;  // CQ entry flags
  size_t len = 0;
  uint64_t tag = 0;
  uint64_t data = 0;
  bool want_completion = false;
};

struct EpCounters {
  std::array<uint64_t, kHeaderErrorCount> dropped{};  // by HeaderError
  uint64_t dropped_placed = 0;  // a message with a placement descriptor
  uint64_t unexpected = 0;      // messages that waited for a receive
  uint64_t send_failures = 0;
  uint64_t backpressure_polls = 0;  // polls that took no messages
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
  // Appends the receive completion of a message from `peer` with header
  // `h` and `len` bytes for the receive with `context`.
  void PushRecvEntry(void* context, MsgKind kind, const MsgHeader& h,
                     size_t len, const NetAddr& peer);
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
};

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_EP_H_

// braid's native datagram API.
//
// An Endpoint owns one local address (IP + UDP port) and talks to any number
// of peers, named by address, with no handshake: the first Send to a peer
// creates its state on both sides. Messages (0 bytes .. max_message_bytes)
// are delivered exactly once and complete, or the sender gets a kSendFailed
// completion naming the cause. By default messages are unordered; messages
// sent on the same non-zero `stream` to the same peer are delivered in send
// order.
//
// Threading: one thread owns an Endpoint (no internal locks). Progress
// happens inside Poll(): busy-poll it, or block on fd() with poll/epoll and
// call Poll() when it is readable.
//
// Batching: the first Send after a Poll transmits at once (a reply goes out
// without delay and carries the acks that Poll held back). Further Sends
// before the next Poll or Wait are queued and leave together at that call,
// small messages sharing datagrams, one syscall per burst. A program that
// has called fd() gets every Send transmitted at once.
//
// Acks wait for answers: when a Poll hands out received messages and the
// program usually answers them quickly (within twice its usual answer
// time, at most ProtocolOptions::ack_delay), the acks owed for them wait
// through later Polls for the program's next Send, which carries them; at
// the end of that window, or at Wait, they go alone. A program that does
// not answer messages gets its acks sent at once. Likewise an ack that
// arrives together with a message is applied after that Poll's caller has
// answered (its first Send) or when the window ends, so the answer is not
// delayed by it: the send completions it produces (kSendDone) can come a
// few Polls later than the message. Not for programs that have called
// fd().
//
//   braid::EndpointOptions opts;
//   opts.bind = "10.0.0.1:7000";
//   auto ep = braid::Endpoint::Open(opts).value();
//   auto peer = braid::NetAddr::Parse("10.0.0.2:7000").value();
//   absl::Status s = ep->Send(peer, bytes, {.cookie = 42});
//   std::vector<braid::Completion> done;
//   while (done.empty()) ep->Poll(&done);
//   ...                      // use done[i].data
//   ep->Recycle(&done);      // buffers back for the next receives; clears
//
// Memory: a received message arrives in a std::vector the endpoint takes
// from a bounded pool; Recycle() returns it (optional, see there). A
// sender that builds messages in buffers of its own hands them over with
// SendOwned (no copy) and gets each back in its send's completion.
#ifndef BRAID_ENDPOINT_H_
#define BRAID_ENDPOINT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "braid/address.h"
#include "braid/completion.h"
#include "braid/options.h"
#include "braid/stats.h"
#include "braid/time.h"

namespace braid {

struct SendOptions {
  uint16_t stream = 0;  // 0: unordered; n: ordered stream n to this peer
  uint64_t cookie = 0;  // returned in the send's completion
  // Set: the receiver places the message directly (every fragment carries
  // the descriptor; placed fragments hold 24 bytes less payload).
  std::optional<PlacementDescriptor> placement = std::nullopt;
  // Bytes sent in front of the message, always copied (at most
  // kMaxPrefixBytes): with SendZeroCopy an upper-layer header travels with
  // a caller-owned body and neither is copied into one buffer first. The
  // receiver sees one message of prefix + message bytes (a placement
  // descriptor's head_bytes counts the prefix).
  absl::Span<const uint8_t> prefix = {};
  // Path hint (0: none, the packets are sprayed over the peer's paths).
  // Non-zero: every first transmission of the message leaves on one path,
  // path flow % (the peer's path count), the same for every message with
  // this hint (so a flow keeps one UDP source port, as a RoCE NIC derives
  // the port from the GRH flow label). While that path is penalised or
  // probing with its probe out, the message is sprayed; a recycled path
  // keeps its index and gets a fresh source port. Re-sends of lost packets
  // go on another healthy path, as every re-send does (the path that lost
  // a packet is the likeliest to lose it again).
  uint32_t flow = 0;
};
inline constexpr uint32_t kMaxPrefixBytes = 4096;

// What the receiver's placement handler is asked, once per arriving
// fragment of a placed message that carries bytes past the head.
struct PlacementRequest {
  NetAddr peer;
  uint16_t stream = 0;
  PlacementDescriptor descriptor;
  uint32_t msg_len = 0;  // placed part: msg_len - descriptor.head_bytes
};
// Returns true and sets *dest to at least msg_len - head_bytes writable
// bytes (the message's placed part goes to dest[0..]); or false to refuse.
// Runs on the endpoint's thread inside Poll, per fragment: it must not call
// the Endpoint. A refusal is final for the message: nothing more of it is
// written, and it completes with PlacementStatus::kRefused.
using PlacementHandler =
    std::function<bool(const PlacementRequest& req, absl::Span<uint8_t>* dest)>;

class Endpoint {
 public:
  // Opens an endpoint. Errors: InvalidArgument (bad options or address,
  // naming the field; an address not on this host), AlreadyExists (e.g.
  // "port 7000 in use"), PermissionDenied (a privileged port without root),
  // ResourceExhausted (out of file descriptors or memory), Unavailable
  // (any other socket error, with its errno text).
  static absl::StatusOr<std::unique_ptr<Endpoint>> Open(
      const EndpointOptions& options);

  // Closes (see Close()).
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // The bound address, the port resolved if 0 was asked. Bound to an
  // any-address (0.0.0.0, [::]) it is that address: peers send to one of
  // this host's addresses with this port.
  NetAddr local_address() const;

  // Sends a copy of `message`; the caller may reuse its buffer at once.
  // An IPv4-mapped `peer` ([::ffff:a.b.c.d]:p) is the IPv4 peer a.b.c.d:p
  // (completions name it so). Errors: InvalidArgument (bad address: port 0,
  // an any-address, multicast or broadcast; wrong family, message larger than
  // max_message_bytes, placement head longer than the message or than
  // kMaxPlacementHeadBytes, prefix over kMaxPrefixBytes; sizes count the
  // prefix), ResourceExhausted (send queue or peer table full:
  // retry after Poll), FailedPrecondition (endpoint closed).
  absl::Status Send(const NetAddr& peer, absl::Span<const uint8_t> message,
                    const SendOptions& opts = {});

  // Like Send, but without the copy: `message` must stay valid and unchanged
  // until this send's completion (done or failed) has been returned by Poll.
  absl::Status SendZeroCopy(const NetAddr& peer,
                            absl::Span<const uint8_t> message,
                            const SendOptions& opts = {});

  // Like Send, but takes `buffer` (the whole message, buffer.size() bytes)
  // instead of copying it: the endpoint sends from it and hands it back,
  // bytes unchanged, in this send's completion (Completion::data of its
  // kSendDone or kSendFailed, also after Close), so a caller that builds
  // each message in a buffer of its own copies nothing and, giving the
  // buffers back with Recycle and taking new ones with TakeBuffer,
  // allocates nothing per message. Refused (any error), it leaves `buffer`
  // untouched with the caller: a retry allocates nothing. Errors: as Send
  // (a message over max_message_bytes, a placement head longer than the
  // message or than kMaxPlacementHeadBytes, a bad address: InvalidArgument;
  // send queue or peer table full: ResourceExhausted; closed:
  // FailedPrecondition), and InvalidArgument for a non-empty
  // SendOptions::prefix (put the prefix in the buffer).
  absl::Status SendOwned(const NetAddr& peer, std::vector<uint8_t>&& buffer,
                         const SendOptions& opts = {});

  // An empty buffer (size 0) with capacity for at least `capacity` bytes,
  // from the pool that Recycle fills (allocated when none of that size is
  // pooled): where to build a message for SendOwned. Valid after Close too.
  std::vector<uint8_t> TakeBuffer(size_t capacity);

  // Installs the receiver-side placement handler (replacing any earlier
  // one; an empty function refuses every placed message). Fragments of a
  // placed message are copied from the datagram straight to the handler's
  // destination, in any arrival order; only the head is buffered, and no
  // receive budget is charged for the placed bytes. The message's
  // completion keeps stream order and carries no data beyond the head.
  void SetPlacementHandler(PlacementHandler handler);

  // Makes progress (receive, timers, transmit) and appends up to `max`
  // completions to `out`. Never blocks. Returns the number appended.
  // With max 0 it only makes progress (acks go out at once, completions
  // wait for a later Poll): a single-threaded program in the middle of long
  // work, e.g. consuming a message of many MiB, calls it every few hundred
  // microseconds so that its peers' timers see acks and do not re-send.
  size_t Poll(std::vector<Completion>* out, size_t max = 256);

  // Gives a buffer back (a Completion::data: a received message's, or the
  // one a SendOwned completion returned), so a later receive or TakeBuffer
  // reuses it instead of allocating: a receiver that returns every buffer
  // allocates nothing per message in the steady state.
  // Optional: a buffer never given back stays the caller's and is freed by
  // it as usual; nothing leaks. Any vector may be given (its capacity is
  // what counts); the endpoint keeps a bounded number of buffers (at most
  // 16,384 per power-of-two size class, none over 16 MiB, 32 MiB in all) and
  // frees the rest at once. `buffer` is left empty. Valid after Close too.
  void Recycle(std::vector<uint8_t>&& buffer);

  // Recycles the data of every completion in `*completions` (see above) and
  // clears it, keeping its capacity: use it in place of
  // completions->clear() before the next Poll(completions).
  void Recycle(std::vector<Completion>* completions);

  // Registers [region.data(), region.data() + region.size()) with the
  // backend so that SendZeroCopy payloads inside it leave without a copy on
  // a backend whose NIC reads only registered memory (verbs_ud; stats().ud
  // counts zero-copy and copied sends). Other backends need nothing and
  // return OK. The region must stay mapped until DeregisterMemory. Errors:
  // InvalidArgument (empty), AlreadyExists (overlaps a registered region),
  // ResourceExhausted (the NIC cannot pin it).
  absl::Status RegisterMemory(absl::Span<const uint8_t> region);
  // Forgets the region that starts at `start`, waiting for the NIC to finish
  // sends from it. NotFound if none starts there.
  absl::Status DeregisterMemory(const void* start);

  // A file descriptor (epoll) that becomes readable when Poll has work:
  // inbound packets, or a protocol timer due. Never read from it. Watch it
  // level-triggered (poll, select, epoll without EPOLLET): it stays
  // readable while work is left, and Poll takes at most `max` completions
  // per call. const, but from the first call on the endpoint transmits
  // every Send at once and holds no acks, so the caller may sleep after
  // any call (wait_fd() below has no such switch).
  // -1 for a backend that must be busy-polled (BackendKind::kDpdk): it has
  // no descriptor to wake on, so call Poll in a loop.
  int fd() const;

  // The same descriptor as fd(), without fd()'s switch of the endpoint to
  // "the caller may sleep after any call" (every Send transmitted at once,
  // no acks held, the timer re-armed after each Poll and Send). For a
  // caller that busy-polls most of the time and blocks only now and then:
  // it must call Wait(DurationNs::Zero()) (transmits what is held, arms the
  // timer for the next protocol deadline) right before each block.
  int wait_fd() const;

  // Blocks until fd() is readable or `timeout` passes; then call Poll.
  // With a busy-polled backend (fd() == -1) it transmits what is held and
  // returns at once.
  void Wait(DurationNs timeout);

  // Fails every pending send with FailureCause::kClosed (their completions
  // are returned by a last Poll) and stops all I/O. Idempotent.
  void Close();

  uint32_t max_message_bytes() const;
  EndpointStats stats() const;
  std::vector<PeerStats> peer_stats(bool with_paths = false) const;

  class Impl;

 private:
  explicit Endpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace braid

#endif  // BRAID_ENDPOINT_H_

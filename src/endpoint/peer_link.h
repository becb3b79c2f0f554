// What both halves of a peer (PeerSender, PeerReceiver) share: the
// endpoint-wide settings, the host that takes completions, and the peer's
// identity (address, incarnation, last activity), which the Peer that joins
// the halves owns.
#ifndef BRAID_ENDPOINT_PEER_LINK_H_
#define BRAID_ENDPOINT_PEER_LINK_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "backend/backend.h"
#include "braid/address.h"
#include "braid/completion.h"
#include "braid/options.h"
#include "braid/time.h"
#include "reorder/buffer_pool.h"
#include "reorder/reassembly_budget.h"
#include "wire/frames.h"

namespace braid::endpoint {

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
  virtual reorder::BufferPool* buffer_pool() = 0;
  // The endpoint-wide account of reassembly memory; null = none.
  virtual reorder::ReassemblyBudget* reassembly_budget() { return nullptr; }
  // Where the placed part of a message from `peer` goes (the endpoint's
  // placement handler); false = refused.
  virtual bool Place(const NetAddr& peer, uint16_t stream,
                     const wire::PlacementExt& ext, uint32_t msg_len,
                     absl::Span<uint8_t>* dest) = 0;
  // Takes back the copy of a finished copying send, for reuse by a later
  // one (Send then allocates nothing). The default frees it.
  virtual void RecycleBuffer(std::vector<uint8_t>&& b) {}
  // A hold for a message whose tails the backend may keep (TxHold), or
  // null when the backend copies every packet. Released by CompleteSend.
  virtual backend::TxHold* AcquireHold() { return nullptr; }
  // A send finished (done or failed): `c` for the application, `buffer` the
  // endpoint's copy of the bytes (empty if none or given back in c.data),
  // `hold` the message's hold (may be null). The host delivers `c` and
  // recycles `buffer` once the backend holds no reference to the bytes.
  virtual void CompleteSend(Completion&& c, std::vector<uint8_t>&& buffer,
                            backend::TxHold* hold) {
    Complete(std::move(c));
    RecycleBuffer(std::move(buffer));
  }
};

// Fixed settings of every peer of one endpoint.
struct PeerConfig {
  ProtocolOptions proto;
  // Bytes of one datagram, less what packet protection appends (its tag).
  uint32_t max_datagram = 1472;
  // Bytes in front of a datagram's frames: the preamble, and with packet
  // protection its security header (EndpointCore writes both).
  uint32_t lead = wire::kPreambleSize;
  uint32_t mss = 1424;  // payload bytes of one data frame
  uint32_t entropy_count = 16384;
  uint32_t min_uncopied_payload = 8192;  // see CoreConfig
  // PSNs past the lowest unacked one that new data may reach: what one of
  // our ack-only datagrams can report (wire::AckReachIn(max_datagram)).
  uint32_t ack_reach = wire::kAckReach;
  bool acked_runs = true;                     // see CoreConfig
  uint32_t fragment_copy_limit = UINT32_MAX;  // see CoreConfig
};

// The settings a PeerLink points to when it is given none (tests of one
// half).
const PeerConfig& DefaultPeerConfig();

// The peer's identity and liveness, owned by its Peer; each half reads it
// and stamps last_activity.
struct PeerLink {
  // The endpoint's settings, shared by all its peers (not a copy per peer:
  // an idle peer must stay small); they outlive the peer.
  const PeerConfig& cfg() const { return *config; }

  const PeerConfig* config = &DefaultPeerConfig();
  NetAddr addr;
  PeerHost* host = nullptr;
  // The backend's tag of the local address this peer last reached us at
  // (see Peer::local()).
  uint8_t local = 0;
  // The incarnation we present to this peer (EndpointSecret::
  // PairIncarnation: one per peer, so what one peer learns of us says
  // nothing of what another must name).
  uint64_t our_inc = 0;
  uint64_t peer_inc = 0;  // the peer's incarnation; 0 until it has spoken
  // peer_inc came from a frame that named our_inc (or a proof), not only
  // from dst-0 frames anyone could have sent (Peer::CheckIncarnation).
  bool peer_inc_confirmed = false;
  TimeNs last_activity;  // last frame from or datagram to the peer
  // The peer has shown it receives what we send to its address: a valid
  // ack of our current send session arrived (or it answered a challenge).
  // Peers that have not are evicted first under pressure.
  bool proven = false;
  // peer_inc is provisional and another life has claimed this address
  // since (a SYNC or STALE from another incarnation, being challenged):
  // frames of peer_inc that do not name us are dropped until one of the
  // two proves itself (Peer::CheckIncarnation, AdoptIncarnation).
  bool contested = false;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_PEER_LINK_H_

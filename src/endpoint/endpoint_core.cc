#include "endpoint/endpoint_core.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

// Control replies to strangers are bounded so a flood cannot grow memory.
constexpr size_t kMaxCtrlReplies = 64;
// A challenge nonce is valid in the epoch (~1.07 s) it was issued in and
// the next: an answer takes a round trip, not seconds.
constexpr int kChallengeEpochShift = 30;
// Recycled copy buffers kept for copying sends: at most this many, none
// larger than kMaxCopyBuffer, at most kMaxCopyPoolBytes in all.
constexpr size_t kMaxCopyBuffers = 256;
constexpr size_t kMaxCopyBuffer = 256 << 10;
constexpr size_t kMaxCopyPoolBytes = 8 << 20;

}  // namespace

EndpointCore::EndpointCore(const CoreConfig& cfg)
    : cfg_(cfg),
      secret_(cfg.secret),
      guard_(cfg.guard),
      rng_(cfg.seed),
      budget_(cfg.proto.max_reassembly_bytes),
      peers_(std::max<uint32_t>(1, cfg.proto.max_peers)) {
  // Packet protection puts a security header between the preamble and the
  // frames and a tag after them: frames get that much less room.
  const uint32_t tag = guard_ ? PacketGuard::kTagBytes : 0;
  lead_ = static_cast<uint32_t>(wire::kPreambleSize +
                                (guard_ ? PacketGuard::kHeaderBytes : 0));
  peer_cfg_.proto = cfg.proto;
  peer_cfg_.max_datagram = cfg.max_datagram - tag;
  peer_cfg_.lead = lead_;
  peer_cfg_.ack_reach =
      wire::AckReachIn(cfg.max_datagram - tag - lead_ + wire::kPreambleSize);
  // Sealing reads the whole datagram from its slot: no payload may stay
  // in the message's buffer.
  peer_cfg_.min_uncopied_payload =
      guard_ ? UINT32_MAX : cfg.min_uncopied_payload;
  peer_cfg_.acked_runs = cfg.acked_runs;
  peer_cfg_.fragment_copy_limit = cfg.fragment_copy_limit;
  // A data frame always leaves room for a SYNC frame in front of it: until
  // the receiver confirms a session every datagram must carry one (see
  // peer.h), so full-size fragments must still fit.
  peer_cfg_.mss =
      peer_cfg_.max_datagram - lead_ -
      static_cast<uint32_t>(wire::kDataHeaderSize + wire::kCtrlFrameSize);
  peer_cfg_.entropy_count = cfg.entropy_count;
}

EndpointCore::~EndpointCore() = default;

std::vector<uint8_t> EndpointCore::TakeBuffer(size_t n) {
  // LIFO: the most recently freed buffer is warm in cache, and with a steady
  // message size it already has the right capacity.
  if (free_copies_.empty()) return {};
  if (free_copies_.back().capacity() < n) {
    // Too small for this size: free it, so that a pool filled with small
    // buffers turns over to the size now in use.
    free_copy_bytes_ -= free_copies_.back().capacity();
    free_copies_.pop_back();
    return {};
  }
  std::vector<uint8_t> b = std::move(free_copies_.back());
  free_copies_.pop_back();
  free_copy_bytes_ -= b.capacity();
  return b;
}

void EndpointCore::RecycleBuffer(std::vector<uint8_t>&& b) {
  if (b.capacity() == 0 || b.capacity() > kMaxCopyBuffer ||
      free_copies_.size() >= kMaxCopyBuffers ||
      free_copy_bytes_ + b.capacity() > kMaxCopyPoolBytes) {
    return;  // freed by the caller
  }
  if (free_copies_.capacity() == 0) free_copies_.reserve(kMaxCopyBuffers);
  b.clear();
  free_copy_bytes_ += b.capacity();
  free_copies_.push_back(std::move(b));
}

absl::Status EndpointCore::Send(TimeNs now, const NetAddr& to, OutMessage&& m) {
  return Send([now] { return now; }, to, std::move(m));
}

absl::Status EndpointCore::Send(absl::FunctionRef<TimeNs()> now,
                                const NetAddr& to_in, OutMessage&& m) {
  if (closed_) return absl::FailedPreconditionError("endpoint is closed");
  if (!to_in.valid() || to_in.port == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad peer address ", to_in.ToString()));
  }
  if (to_in.IsWildcard() || to_in.IsMulticastOrBroadcast()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad peer address ", to_in.ToString(),
        ": an any-address, multicast or broadcast address names no peer"));
  }
  // One peer, one key: replies from [::ffff:a.b.c.d] arrive as a.b.c.d.
  const NetAddr to = to_in.Canonical();
  if (m.len > cfg_.proto.max_message_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("message of ", m.len, " bytes exceeds max_message_bytes (",
                     cfg_.proto.max_message_bytes, ")"));
  }
  if (m.placed && (m.placement.head_len > m.len ||
                   m.placement.head_len > kMaxPlacementHeadBytes ||
                   m.placement.offset + (m.len - m.placement.head_len) <
                       m.placement.offset)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad placement descriptor: head of ", m.placement.head_len,
        " bytes exceeds the ", m.len,
        "-byte message or kMaxPlacementHeadBytes (", kMaxPlacementHeadBytes,
        "), or offset ", m.placement.offset, " + placed bytes wraps 2^64"));
  }
  if (pending_sends_ >= cfg_.proto.max_pending_sends) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "send queue full: ", pending_sends_,
        " messages pending (max_pending_sends); poll completions and retry"));
  }
  PeerEntry* peer = FindPeer(to);
  if (peer == nullptr) peer = CreatePeer(now(), to);
  if (peer == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("peer table full: ", peers_.size(),
                     " peers (max_peers), none idle for peer_timeout (",
                     cfg_.proto.peer_timeout.ns() / 1000000,
                     " ms) and none unproven without sends of ours; retry "
                     "once a peer has been idle that long"));
  }
  ++pending_sends_;
  peer->peer.Enqueue(std::move(m), now);
  Touch(peer);
  return absl::OkStatus();
}

PeerEntry* EndpointCore::FindPeer(const NetAddr& addr) {
  // A ping-pong or a stream talks to one peer over and over: compare with
  // the last one found before hashing the address.
  if (last_peer_ != nullptr && last_peer_->peer.addr() == addr)
    return last_peer_;
  PeerEntry* p = peers_.Find(addr);
  if (p != nullptr) last_peer_ = p;
  return p;
}

PeerEntry* EndpointCore::FindOrCreatePeer(TimeNs now, const NetAddr& addr,
                                          Claimant claimant, uint64_t our_inc) {
  if (PeerEntry* p = FindPeer(addr)) return p;
  return CreatePeer(now, addr, claimant, our_inc);
}

PeerEntry* EndpointCore::CreatePeer(TimeNs now, const NetAddr& addr,
                                    Claimant claimant, uint64_t our_inc) {
  last_peer_ = nullptr;  // Insert may evict (free) it
  if (our_inc == 0) our_inc = OurIncarnationFor(addr);
  PeerEntry* p =
      peers_.Insert(std::make_unique<PeerEntry>(peer_cfg_, addr, rng_.Next(),
                                                our_inc, this, now),
                    now, cfg_.proto.peer_timeout, claimant,
                    [this](PeerEntry* evicted) { Forget(evicted); });
  last_peer_ = p;
  return p;
}

void EndpointCore::RelieveReassemblyPressure(TimeNs now) {
  const uint64_t target = budget_.max_bytes() / 8 * 3;
  last_peer_ = nullptr;  // an eviction may free it
  while (budget_.committed() > target &&
         peers_.EvictForMemory(now, cfg_.proto.peer_timeout,
                               [this](PeerEntry* p) { Forget(p); })) {
  }
}

void EndpointCore::CountParseError(wire::ParseError e) {
  using wire::ParseError;
  switch (e) {
    case ParseError::kTruncated:
      ++drops_.truncated;
      break;
    case ParseError::kBadVersion:
      ++drops_.bad_version;
      break;
    case ParseError::kBadType:
      ++drops_.bad_type;
      break;
    case ParseError::kBadFlags:
      ++drops_.bad_flags;
      break;
    case ParseError::kReservedNonZero:
      ++drops_.reserved_nonzero;
      break;
    case ParseError::kZeroIncarnation:
      ++drops_.zero_incarnation;
      break;
    case ParseError::kFragmentBounds:
      ++drops_.fragment_bounds;
      break;
    case ParseError::kEmptyFragment:
      ++drops_.empty_fragment;
      break;
    case ParseError::kSackTooLong:
      ++drops_.sack_too_long;
      break;
    case ParseError::kBadCtrlType:
      ++drops_.bad_ctrl_type;
      break;
    case ParseError::kBadPreamble:
      ++drops_.bad_preamble;
      break;
    case ParseError::kBadPlacement:
      ++drops_.bad_placement;
      break;
    case ParseError::kNone:
    case ParseError::kCount:
      break;
  }
}

namespace {

// The incarnations a frame names, and whether it is one its sender may send
// before it knows ours (data, SYNC, PROBE: `dst` may then be 0).
struct FrameAddress {
  uint64_t src = 0;
  uint64_t dst = 0;
  bool by_sender = false;
};

FrameAddress AddressOf(const wire::Frame& f) {
  switch (f.type) {
    case wire::FrameType::kData:
      return {f.data.src_incarnation, f.data.dst_incarnation, true};
    case wire::FrameType::kAck:
      return {f.ack.src_incarnation, f.ack.dst_incarnation, false};
    case wire::FrameType::kCtrl:
      return {f.ctrl.src_incarnation, f.ctrl.dst_incarnation,
              f.ctrl.type == wire::CtrlType::kSync ||
                  f.ctrl.type == wire::CtrlType::kProbe};
  }
  return {};
}

// A frame that may announce a new incarnation of its sender.
bool MayAnnounce(const wire::Frame& f) {
  return f.type == wire::FrameType::kCtrl &&
         (f.ctrl.type == wire::CtrlType::kSync ||
          f.ctrl.type == wire::CtrlType::kStale);
}

}  // namespace

[[gnu::always_inline]] inline bool EndpointCore::AddressedToUs(
    uint64_t src, uint64_t dst, bool by_sender, const NetAddr& from,
    uint8_t local, uint64_t our_inc) {
  if (dst != 0 && dst == our_inc) return true;
  if (dst == 0 && by_sender) return true;
  ++drops_.stale_incarnation;
  if (!by_sender || dst == 0) return false;
  // Meant for an earlier life of ours: tell the sender once.
  wire::CtrlFrame c;
  c.type = wire::CtrlType::kStale;
  c.src_incarnation = our_inc;
  c.dst_incarnation = src;
  QueueCtrlReply(from, local, c);
  return false;
}

void EndpointCore::QueueCtrlReply(const NetAddr& to, uint8_t local,
                                  const wire::CtrlFrame& c) {
  if (!ctrl_replies_.empty()) {
    const CtrlReply& last = ctrl_replies_.back();
    if (last.to == to && last.frame.type == c.type &&
        last.frame.dst_incarnation == c.dst_incarnation) {
      return;  // the same answer to the same address, back to back
    }
  }
  if (ctrl_replies_.size() >= kMaxCtrlReplies) {
    ++drops_.ctrl_reply_overflow;
    return;
  }
  ctrl_replies_.push_back({to, local, c});
}

void EndpointCore::Challenge(TimeNs now, PeerEntry* peer, uint64_t claimed,
                             uint8_t local) {
  ++drops_.unproven_claim;
  QueueChallenge(now, peer->peer.addr(), peer->peer.our_incarnation(), claimed,
                 wire::ChallengeKind::kIncarnation, local);
}

bool EndpointCore::QueueChallenge(TimeNs now, const NetAddr& to,
                                  uint64_t our_inc, uint64_t inc,
                                  wire::ChallengeKind kind, uint8_t local) {
  wire::CtrlFrame c;
  c.type = wire::CtrlType::kChallenge;
  c.kind = kind;
  c.src_incarnation = our_inc;
  c.dst_incarnation = inc;
  c.nonce = secret_.ChallengeNonce(
      static_cast<uint64_t>(now.ns()) >> kChallengeEpochShift, our_inc, to, inc,
      static_cast<uint8_t>(kind));
  const size_t before = ctrl_replies_.size();
  QueueCtrlReply(to, local, c);
  if (ctrl_replies_.size() == before) return false;
  ++challenges_sent_;
  return true;
}

bool EndpointCore::FirstContactPressure() const {
  const uint64_t max_peers = std::max<uint32_t>(1, cfg_.proto.max_peers);
  return peers_.size() * 4 >= max_peers * 3 ||
         budget_.committed() * 4 >= budget_.max_bytes();
}

void EndpointCore::ChallengeIfUnproven(TimeNs now, PeerEntry* peer,
                                       uint8_t local) {
  const bool pressure =
      peers_.size() * 2 >= std::max<uint32_t>(1, cfg_.proto.max_peers) ||
      budget_.committed() * 4 >= budget_.max_bytes();
  if (pressure && !peer->peer.proven()) ChallengeCurrent(now, peer, local);
}

void EndpointCore::ChallengeCurrent(TimeNs now, PeerEntry* peer,
                                    uint8_t local) {
  constexpr DurationNs kReprove = DurationNs::Millis(1);
  const uint64_t inc = peer->peer.peer_incarnation();
  if (inc == 0 || (peer->challenged_at != PeerEntry::kNever &&
                   now - peer->challenged_at < kReprove)) {
    return;
  }
  if (QueueChallenge(now, peer->peer.addr(), peer->peer.our_incarnation(), inc,
                     wire::ChallengeKind::kIncarnation, local)) {
    peer->challenged_at = now;
  }
}

void EndpointCore::OnChallengeFrame(TimeNs now, PeerEntry* peer,
                                    const wire::CtrlFrame& c,
                                    const NetAddr& from, uint8_t local,
                                    uint64_t our_inc, PeerEntry** created) {
  if (c.type == wire::CtrlType::kChallenge) {
    // Someone asks whether we are `our_inc` at this address: we are (the
    // frame named it). Answering needs no state of ours: a challenge after
    // our restart comes from a peer we may not know yet.
    wire::CtrlFrame r;
    r.type = wire::CtrlType::kChallengeReply;
    r.kind = c.kind;
    r.src_incarnation = our_inc;
    r.dst_incarnation = c.src_incarnation;
    r.nonce = c.nonce;
    const size_t before = ctrl_replies_.size();
    QueueCtrlReply(from, local, r);
    if (ctrl_replies_.size() > before) ++challenges_answered_;
    // A first contact challenged is a first contact dropped: re-send it
    // right behind the answer (which goes out first: PollTx), not at the
    // RTO. The challenge names the incarnation we show that address, so
    // only that address could have sent it.
    if (c.kind == wire::ChallengeKind::kFirstContact && peer != nullptr &&
        peer->peer.OnFirstContactRefused(now)) {
      Touch(peer);  // lists it to send
    }
    return;
  }
  // An answer to a challenge of ours: genuine iff it echoes the nonce we
  // would have issued for this address and claim, this epoch or the last.
  const uint64_t epoch =
      static_cast<uint64_t>(now.ns()) >> kChallengeEpochShift;
  const uint64_t claimed = c.src_incarnation;
  const uint8_t kind = static_cast<uint8_t>(c.kind);
  const bool genuine =
      c.nonce == secret_.ChallengeNonce(epoch, our_inc, from, claimed, kind) ||
      (epoch > 0 && c.nonce == secret_.ChallengeNonce(epoch - 1, our_inc, from,
                                                      claimed, kind));
  if (!genuine) {
    ++drops_.bad_challenge_reply;
    return;
  }
  if (peer == nullptr) {
    // The answer to a first contact we challenged instead of taking it in
    // (FirstContactPressure): the peer is proven before it gets state.
    if (c.kind != wire::ChallengeKind::kFirstContact) {
      ++drops_.stale_incarnation;  // a peer we have forgotten since
      return;
    }
    if (peers_.Silenced(from, claimed, now)) {
      ++drops_.evicted_peer;
      return;
    }
    peer = FindOrCreatePeer(now, from, Claimant::kInbound, our_inc);
    if (peer == nullptr) {
      ++drops_.no_peer_slot;
      return;
    }
    *created = peer;
  }
  // It received what we sent to its address.
  peer->peer.set_proven();
  switch (peer->peer.AdoptIncarnation(now, claimed)) {
    case Peer::Adopted::kNothing:
      return;
    case Peer::Adopted::kRestarted:
      ++peer_restarts_;
      break;
    case Peer::Adopted::kReplacedProvisional:
      ++provisional_replaced_;
      break;
    case Peer::Adopted::kFirst:
      break;
  }
  peer->peer.set_local(local);
  Touch(peer);
}

[[gnu::always_inline]] inline void EndpointCore::OnAckFrame(
    PeerEntry* peer, TimeNs now, const wire::Frame& f, TimeNs at,
    uint16_t return_port) {
  // Two acks in one datagram: the first goes before the second.
  if (peer->ack_deferred) ApplyDeferredAckOf(peer, now);
  if (!defer_acks_ || f.ack.sack_words > kMaxDeferredSackWords) {
    peer->peer.OnAck(now, f.ack, f.sack, &drops_, at, return_port);
    return;
  }
  DeferredAck& d = deferred_.emplace_back();
  d.peer = peer;
  d.h = f.ack;
  d.arrival = at;
  d.return_port = return_port;
  if (f.ack.sack_words > 0) {  // f.sack may be null otherwise
    std::memcpy(d.sack, f.sack, size_t{f.ack.sack_words} * 8);
  }
  peer->ack_deferred = true;
}

void EndpointCore::OnDatagram(TimeNs now, const NetAddr& src,
                              absl::Span<const uint8_t> bytes, bool ce,
                              TimeNs arrival, uint8_t local) {
  const TimeNs at = !arrival.IsInfinite() && arrival <= now ? arrival : now;
  ++datagrams_received_;
  bytes_received_ += bytes.size();
  if (closed_) return;
  wire::ParseError perr;
  const uint16_t reply_port = wire::ParsePreamble(bytes, &perr);
  if (reply_port == 0) {
    CountParseError(perr);
    return;
  }
  // Acks stay in order: one held from an earlier datagram goes first.
  if (!deferred_.empty()) ApplyDeferredAcks(now);
  NetAddr from = src;
  from.port = reply_port;
  // The port the datagram left from: the peer's entropy (its return path).
  const uint16_t return_port = src.port;
  PeerEntry* peer = FindPeer(from);
  // The incarnation we present to `from`: computed (a keyed hash) only for
  // a stranger's frame that names one.
  uint64_t our_inc = peer != nullptr ? peer->peer.our_incarnation() : 0;
  absl::Span<const uint8_t> frames = bytes.subspan(wire::kPreambleSize);
  crypto::SecurityHeader sealed;  // packet protection: who sealed it for whom
  if (guard_ != nullptr &&
      !OpenDatagram(now, bytes, from, peer, &our_inc, &sealed, &frames)) {
    return;
  }
  wire::FrameReader reader(frames);
  wire::Frame f;
  bool data = false;  // the datagram carried a data frame for `peer`
  while (reader.Next(&f)) {
    const FrameAddress a = AddressOf(f);
    if (guard_ != nullptr &&
        (a.src != sealed.src_incarnation || a.dst != sealed.dst_incarnation)) {
      // A frame must name the incarnations its datagram was sealed for.
      ++drops_.auth_mismatch;
      continue;
    }
    if (our_inc == 0 && a.dst != 0) our_inc = OurIncarnationFor(from);
    if (!AddressedToUs(a.src, a.dst, a.by_sender, from, local, our_inc)) {
      // Another life at the address of one we took on trust, naming an
      // incarnation of ours it can only have from a forger (or an earlier
      // life of ours): a rival all the same (Peer::Contest).
      if (peer != nullptr && a.dst != 0) peer->peer.Contest(a.src);
      continue;
    }
    if (f.type == wire::FrameType::kCtrl &&
        wire::IsChallengeType(f.ctrl.type)) {
      OnChallengeFrame(now, peer, f.ctrl, from, local, our_inc, &peer);
      continue;
    }
    if (peer == nullptr) {
      if (!a.by_sender) {
        ++drops_.stale_incarnation;  // reply from a peer we no longer know
        return;
      }
      if (peers_.Silenced(from, a.src, now)) {
        ++drops_.evicted_peer;
        return;
      }
      if (a.dst == 0 && FirstContactPressure()) {
        // No state for a stranger while strangers crowd us: ask it to prove
        // its address first. Its answer creates the peer, and its loss
        // recovery sends again what this datagram carried. (A frame naming
        // the incarnation we show this address is proof already.)
        if (our_inc == 0) our_inc = OurIncarnationFor(from);
        QueueChallenge(now, from, our_inc, a.src,
                       wire::ChallengeKind::kFirstContact, local);
        ++drops_.first_contact_challenged;
        return;
      }
      peer = FindOrCreatePeer(now, from, Claimant::kInbound, our_inc);
      if (peer == nullptr) {
        ++drops_.no_peer_slot;
        return;
      }
      our_inc = peer->peer.our_incarnation();
    }
    switch (peer->peer.CheckIncarnation(a.src, MayAnnounce(f), a.dst != 0,
                                        &drops_)) {
      case Peer::Claim::kKnown:
        break;
      case Peer::Claim::kStale:
        continue;
      case Peer::Claim::kContested:
        ChallengeCurrent(now, peer, local);
        continue;
      case Peer::Claim::kRestart:
        Challenge(now, peer, a.src, local);
        // A life we took on trust is contested: it must prove itself too
        // (a genuine peer that has not heard from us yet can).
        if (peer->peer.contested()) ChallengeCurrent(now, peer, local);
        continue;
    }
    peer->peer.set_local(local);  // a frame of the peer's current life
    // Naming the incarnation we show only this address proves the sender
    // receives what we send there.
    if (a.dst != 0 && !peer->peer.proven()) peer->peer.set_proven();
    switch (f.type) {
      case wire::FrameType::kData:
        peer->peer.OnData(now, f.data, f.payload, ce, &drops_, at);
        data = true;
        break;
      case wire::FrameType::kAck:
        OnAckFrame(peer, now, f, at, return_port);
        break;
      case wire::FrameType::kCtrl:
        peer->peer.OnCtrl(now, f.ctrl, &drops_);
        break;
    }
  }
  if (reader.error() != wire::ParseError::kNone)
    CountParseError(reader.error());
  if (peer != nullptr) {
    // Held only for an answer to this datagram's data.
    if (peer->ack_deferred && !data) ApplyDeferredAckOf(peer, now);
    if (data) ChallengeIfUnproven(now, peer, local);
    Touch(peer);
  }
  if (budget_.TakePressure()) RelieveReassemblyPressure(now);
}

bool EndpointCore::OpenDatagram(TimeNs now, absl::Span<const uint8_t> bytes,
                                const NetAddr& from, PeerEntry* peer,
                                uint64_t* our_inc, crypto::SecurityHeader* h,
                                absl::Span<const uint8_t>* frames) {
  // Our incarnation towards a stranger is a keyed hash: computed only if
  // the datagram names one (not for a first contact under the initial key).
  if (*our_inc == 0 && crypto::ParseSecurityHeader(bytes, h) &&
      !h->initial_key()) {
    *our_inc = OurIncarnationFor(from);
  }
  switch (guard_->Open(now, bytes, *our_inc,
                       peer != nullptr ? peer->peer.peer_incarnation() : 0,
                       peer != nullptr ? KeysOf(peer) : nullptr, h, frames)) {
    case PacketGuard::OpenResult::kOk:
      return true;
    case PacketGuard::OpenResult::kFailed:
      ++drops_.auth_failed;
      return false;
    case PacketGuard::OpenResult::kNoKey:
      ++drops_.auth_no_key;
      return false;
  }
  return false;
}

void EndpointCore::Seal(TimeNs now, TxBatch* batch, size_t from, PeerEntry* p) {
  absl::Span<backend::TxPacket> pkts = batch->mutable_packets();
  for (size_t i = from; i < pkts.size(); ++i) {
    backend::TxPacket& pk = pkts[i];
    uint8_t* d = const_cast<uint8_t*>(pk.data);  // the batch's own slot
    uint64_t src, dst;
    PeerKeyCache* keys = nullptr;
    if (p != nullptr) {
      src = p->peer.our_incarnation();
      dst = p->peer.peer_incarnation();
      keys = KeysOf(p);
    } else {
      wire::FrameReader r(absl::MakeConstSpan(d + lead_, pk.len - lead_));
      wire::Frame f;
      r.Next(&f);  // a control reply we wrote
      src = f.ctrl.src_incarnation;
      dst = f.ctrl.dst_incarnation;
      if (PeerEntry* q = FindPeer(pk.dst)) keys = KeysOf(q);
    }
    const size_t n = guard_->Seal(now, d, pk.len, src, dst, keys);
    if (n == 0) {
      ++seal_failures_;
      pk.len = wire::kPreambleSize;  // carries nothing; dropped on arrival
    } else {
      pk.len = static_cast<uint32_t>(n);
    }
  }
}

void EndpointCore::ApplyDeferredAck(size_t i, TimeNs now) {
  DeferredAck d = deferred_[i];
  deferred_[i] = deferred_.back();
  deferred_.pop_back();
  d.peer->ack_deferred = false;
  d.peer->peer.OnAck(now, d.h, d.sack, &drops_, d.arrival, d.return_port);
  Touch(d.peer);
}

void EndpointCore::ApplyDeferredAckOf(PeerEntry* p, TimeNs now) {
  if (!p->ack_deferred) return;
  for (size_t i = 0; i < deferred_.size(); ++i) {
    if (deferred_[i].peer == p) {
      ApplyDeferredAck(i, now);
      return;
    }
  }
}

void EndpointCore::ApplyDeferredAcks(TimeNs now) {
  // Back to front: at most one per peer, so the order across peers is
  // immaterial.
  while (!deferred_.empty()) ApplyDeferredAck(deferred_.size() - 1, now);
}

void EndpointCore::Touch(PeerEntry* p) {
  if (p->peer.awake()) active_.MoveToBack(p);
  if (!p->tx_listed) {
    p->tx_listed = true;
    ready_.push_back(p);
  }
  WakeChanged(p);
}

void EndpointCore::FlushWakes() const {
  for (PeerEntry* p : wake_dirty_) {
    p->wake_dirty = false;
    wakes_.Set(p, p->peer.NextWake());
  }
  wake_dirty_.clear();
}

void EndpointCore::Forget(PeerEntry* p) {
  wakes_.Remove(p);
  active_.Remove(p);
  if (p->ack_deferred) {
    p->ack_deferred = false;
    deferred_.erase(
        std::find_if(deferred_.begin(), deferred_.end(),
                     [p](const DeferredAck& d) { return d.peer == p; }));
  }
  if (p->wake_dirty) {
    p->wake_dirty = false;
    wake_dirty_.erase(std::find(wake_dirty_.begin(), wake_dirty_.end(), p));
  }
  if (p->credit_squeezed) {
    squeezed_.erase(std::find(squeezed_.begin(), squeezed_.end(), p));
  }
  if (p->tx_listed) {
    p->tx_listed = false;
    for (size_t i = 0; i < ready_.size(); ++i) {
      if (ready_[i] == p) {
        ready_[i] = ready_.back();
        ready_.pop_back();
        break;
      }
    }
  }
}

void EndpointCore::OnTimer(TimeNs now) {
  due_.clear();
  FlushWakes();
  wakes_.PopDue(now, &due_);
  for (PeerEntry* p : due_) {
    // A held ack first, if the peer's own timers (not just an ack it owes)
    // are due: what it acknowledges must not be retransmitted.
    if (p->ack_deferred && p->peer.TimerDeadline() <= now) {
      ApplyDeferredAckOf(p, now);
    }
    p->peer.OnTimer(now);
    Touch(p);
  }
  SleepIdlePeers(now);
}

void EndpointCore::SleepIdlePeers(TimeNs now) {
  for (int i = 0; i < kSleepsPerTimer; ++i) {
    PeerEntry* p = active_.front();
    if (p == nullptr || SleepCheckAt(p) > now) return;
    // Idle, and nothing of the core's pending for it: not listed to send,
    // no wake time, no held ack, no credit to restore.
    const bool unlisted = !p->tx_listed && !p->wake_dirty &&
                          p->heap_pos == kNotInHeap && !p->ack_deferred &&
                          !p->credit_squeezed;
    const bool aged = now - p->peer.last_activity() >= cfg_.proto.peer_timeout;
    if (unlisted && aged && peers_.Sleep(p)) {
      active_.Remove(p);
      continue;
    }
    // Busy, or it cannot be rebuilt exactly (PeerReceiver::TakeResume):
    // look again a peer_timeout from now.
    p->act_checked = now;
    active_.MoveToBack(p);
  }
}

bool EndpointCore::WantsToSend(TimeNs now) const {
  if (!ctrl_replies_.empty()) return true;
  // A peer that is not listed has had nothing to send since its last
  // event; one whose timers are due may have (OnTimer lists it).
  if (NextWake() <= now) return true;
  for (PeerEntry* p : ready_) {
    if (p->peer.WantsToSend(now)) return true;
  }
  return false;
}

size_t EndpointCore::PollTx(TimeNs now, TxBatch* batch, bool hold_acks,
                            bool uncopied_payloads) {
  size_t n = 0;
  while (!ctrl_replies_.empty() && !batch->full()) {
    const CtrlReply r = ctrl_replies_.back();
    ctrl_replies_.pop_back();
    absl::Span<uint8_t> slot = batch->next_slot();
    wire::WritePreamble(cfg_.local_port, slot);
    const size_t len = lead_ + wire::WriteCtrl(r.frame, slot.subspan(lead_));
    batch->Commit(r.to, 0, static_cast<uint32_t>(len), false, {}, r.local);
    if (guard_ != nullptr) Seal(now, batch, batch->size() - 1, nullptr);
    ++n;
  }
  if (guard_ != nullptr) uncopied_payloads = false;  // sealed in the slot
  // Round-robin over the peers that may have something to send, a few
  // datagrams each per turn, so one busy peer cannot starve the others
  // within a burst. A peer whose turn ends with nothing left to send leaves
  // the list until its next event (Touch).
  // A peer alone on the list keeps its turn as long as it has datagrams.
  constexpr size_t kPerTurn = 4;
  // The preamble, and room for a security header (Seal writes it).
  uint8_t preamble[wire::kPreambleSize + PacketGuard::kHeaderBytes] = {};
  wire::WritePreamble(cfg_.local_port, absl::MakeSpan(preamble));
  size_t idle_turns = 0;
  while (!batch->full() && !ready_.empty() && idle_turns < ready_.size()) {
    if (rr_next_ >= ready_.size()) rr_next_ = 0;
    PeerEntry* p = ready_[rr_next_];
    ++tx_peer_visits_;
    const size_t turn = ready_.size() == 1 ? batch->capacity() : kPerTurn;
    size_t sent = 0;
    while (sent < turn && !batch->full()) {
      if (cfg_.full_datagram_fast_path && p->peer.MayBuildFull()) {
        const size_t k = p->peer.BuildFullDatagrams(
            now, batch, turn - sent, absl::MakeConstSpan(preamble, lead_),
            uncopied_payloads);
        if (guard_ != nullptr && k > 0) Seal(now, batch, batch->size() - k, p);
        sent += k;
        full_datagrams_ += k;
        if (k > 0 || batch->full()) continue;  // full: it closed the batch
      }
      if (batch->size() > 0 && p->peer.RunWouldSplit(batch->room())) {
        batch->Close();  // the run starts whole in the next batch
        break;
      }
      wire::Entropy e = 0;
      absl::Span<uint8_t> slot =
          batch->next_slot().subspan(0, peer_cfg_.max_datagram);
      absl::Span<const uint8_t> tail;
      backend::TxHold* hold = nullptr;
      const size_t len =
          p->peer.BuildDatagram(now, slot.subspan(lead_), &e, hold_acks,
                                uncopied_payloads ? &tail : nullptr, &hold);
      if (p->peer.TakeCreditSqueezed() && !p->credit_squeezed) {
        p->credit_squeezed = true;
        squeezed_.push_back(p);
      }
      if (len == 0) break;
      wire::WritePreamble(cfg_.local_port, slot);
      batch->Commit(p->peer.addr(), e, static_cast<uint32_t>(len + lead_), true,
                    tail, p->peer.local(), 0, tail.empty() ? nullptr : hold);
      if (guard_ != nullptr) Seal(now, batch, batch->size() - 1, p);
      ++sent;
    }
    n += sent;
    // Sending armed timers (RTO, tail probe).
    WakeChanged(p);
    if (sent < turn && !batch->full() && !p->peer.WantsToSend(now)) {
      p->tx_listed = false;
      ready_[rr_next_] = ready_.back();
      ready_.pop_back();
      continue;  // the slot now holds another peer
    }
    idle_turns = sent == 0 ? idle_turns + 1 : 0;
    ++rr_next_;
  }
  for (size_t i = batch->size() - n; i < batch->size(); ++i) {
    ++datagrams_sent_;
    bytes_sent_ += batch->packets()[i].size();
  }
  return n;
}

bool EndpointCore::Place(const NetAddr& peer, uint16_t stream,
                         const wire::PlacementExt& ext, uint32_t msg_len,
                         absl::Span<uint8_t>* dest) {
  if (!placement_handler_) return false;
  PlacementRequest req;
  req.peer = peer;
  req.stream = stream;
  req.descriptor.key = ext.key;
  req.descriptor.offset = ext.offset;
  req.descriptor.head_bytes = ext.head_len;
  req.msg_len = msg_len;
  return placement_handler_(req, dest);
}

void EndpointCore::Complete(Completion&& c) {
  if (c.type == CompletionType::kRecv) {
    unpolled_bytes_ += c.data.size();
    ++unpolled_messages_;
  } else if (pending_sends_ > 0) {
    --pending_sends_;
  }
  completions_.push_back(std::move(c));
}

void EndpointCore::CompleteSend(Completion&& c, std::vector<uint8_t>&& buffer,
                                backend::TxHold* hold) {
  if (held_.MustWait(hold)) {
    held_.Park(std::move(c), std::move(buffer), hold);
    return;
  }
  Complete(std::move(c));
  RecycleBuffer(std::move(buffer));
  held_.Release(hold);
}

bool EndpointCore::ReceiveQueueFull() const {
  return unpolled_bytes_ >= cfg_.proto.receive_queue_bytes;
}

uint64_t EndpointCore::ReceiveQueueRoom() const {
  return ReceiveQueueFull() ? 0
                            : cfg_.proto.receive_queue_bytes - unpolled_bytes_;
}

size_t EndpointCore::PollCompletions(std::vector<Completion>* out, size_t max) {
  const uint64_t unpolled_before = unpolled_bytes_;
  held_.Drain([this](Completion&& c, std::vector<uint8_t>&& buffer) {
    Complete(std::move(c));
    RecycleBuffer(std::move(buffer));
  });
  size_t n = 0;
  while (n < max && !completions_.empty()) {
    Completion& c = completions_.front();
    if (c.type == CompletionType::kRecv) {
      unpolled_bytes_ -= c.data.size();
      --unpolled_messages_;
    }
    out->push_back(std::move(c));
    completions_.pop_front();
    ++n;
  }
  if (unpolled_bytes_ < unpolled_before && !squeezed_.empty()) {
    // Only the peers whose credit the queue held down (a full queue holds
    // down every peer that acks meanwhile): their next ack grants more.
    for (PeerEntry* p : squeezed_) {
      p->credit_squeezed = false;
      p->peer.OnReceiveSpaceFreed();
      Touch(p);
    }
    squeezed_.clear();
  }
  return n;
}

void EndpointCore::Close(TimeNs now) {
  if (closed_) return;
  ApplyDeferredAcks(now);
  for (const auto& p : peers_.all()) {
    p->peer.FailAll(FailureCause::kClosed, now);
    Touch(p.get());
  }
  closed_ = true;
}

std::vector<PeerStats> EndpointCore::peer_stats(bool with_paths) const {
  std::vector<PeerStats> v;
  v.reserve(peers_.size());
  for (const auto& p : peers_.all()) {
    v.emplace_back();
    p->peer.FillStats(&v.back(), with_paths);
  }
  return v;
}

EndpointStats EndpointCore::stats() const {
  PeerStats sum = peers_.retired();
  uint64_t asleep = 0;
  for (const auto& p : peers_.all()) {
    asleep += !p->peer.awake();
    PeerStats s;
    p->peer.FillStats(&s, false);
    AccumulatePeerCounters(s, &sum);
  }
  EndpointStats e;
  e.incarnation = cfg_.incarnation;
  e.datagrams_sent = datagrams_sent_;
  e.datagrams_received = datagrams_received_;
  e.packets_sent = sum.packets_sent;
  e.packets_received = sum.packets_received;
  e.bytes_sent = bytes_sent_;
  e.bytes_received = bytes_received_;
  e.messages_sent = sum.messages_sent;
  e.messages_failed = sum.messages_failed;
  e.messages_received = sum.messages_received;
  e.messages_placed = sum.messages_placed;
  e.messages_refused = sum.messages_refused;
  e.ordered_refused = sum.ordered_refused;
  e.bytes_placed = sum.bytes_placed;
  e.bytes_reassembled = sum.bytes_reassembled;
  e.acks_sent = sum.acks_sent;
  e.acks_received = sum.acks_received;
  e.ecn_marks_received = sum.ecn_marks_received;
  e.peers = peers_.size();
  e.peers_created = peers_.created();
  e.peers_evicted = peers_.evicted();
  e.peers_evicted_idle = peers_.evicted_idle();
  e.peers_evicted_unproven = peers_.evicted_unproven();
  e.peers_evicted_memory = peers_.evicted_memory();
  e.peers_asleep = asleep;
  e.peers_slept = peers_.slept();
  e.reassembly_bytes = budget_.committed();
  e.reassembly_peak_bytes = budget_.peak();
  e.reassembly_max_bytes = budget_.max_bytes();
  e.peer_restarts = peer_restarts_;
  e.provisional_replaced = provisional_replaced_;
  e.challenges_sent = challenges_sent_;
  e.challenges_answered = challenges_answered_;
  e.seal_failures = seal_failures_;
  e.key_derivations_refused =
      guard_ != nullptr ? guard_->derivations_refused() : 0;
  e.tx_peer_visits = tx_peer_visits_;
  e.penalties = sum.penalties;
  e.recycles = sum.recycles;
  e.reliability = sum.reliability;
  e.drops = drops_;
  return e;
}

}  // namespace braid::endpoint

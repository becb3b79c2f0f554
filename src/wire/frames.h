// Wire format v1: the frames a braid datagram carries. See docs/wire-format.md
// for byte diagrams. All multi-byte fields are big-endian. A datagram is one
// or more frames back to back; each frame's length follows from its header.
#ifndef BRAID_WIRE_FRAMES_H_
#define BRAID_WIRE_FRAMES_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/types/span.h"
#include "wire/psn.h"

namespace braid::wire {

inline constexpr uint8_t kVersion = 1;

enum class FrameType : uint8_t { kData = 1, kAck = 2, kCtrl = 3 };

// Data frame flags.
inline constexpr uint8_t kDataFlagAckNow = 0x01;  // receiver: ack at once
inline constexpr uint8_t kDataFlagRetransmit =
    0x02;  // not a first transmission
// The message is placed directly by the receiver: a 24-byte placement
// extension (PlacementExt) follows the 48-byte header in every fragment.
inline constexpr uint8_t kDataFlagPlaced = 0x04;
inline constexpr uint8_t kDataFlagsKnown = 0x07;

// Ack frame flags.
inline constexpr uint8_t kAckFlagNak = 0x01;     // go-back-N: resend from cum
inline constexpr uint8_t kAckFlagEchoCe = 0x02;  // the echoed packet had CE
// The echoed transmission arrived as a duplicate (its PSN had already been
// received): the sender learns that a re-send was unnecessary (D-SACK).
inline constexpr uint8_t kAckFlagEchoDup = 0x04;
inline constexpr uint8_t kAckFlagsKnown = 0x07;

enum class CtrlType : uint8_t {
  kProbe = 1,  // "please ack now" (credit-blocked or silent sender)
  kStale = 2,  // "your packet named an incarnation of mine that is gone"
  kSync = 3,   // "my send session `session` to you starts at PSN `value`"
  // "I hold no session state for you: send kSync" (`value`: the PSN of the
  // data that found none).
  kNeedSync = 4,
  // "Prove that `dst_incarnation` is you, at the address I send this to":
  // sent in answer to a frame that claims a new incarnation of a known peer
  // (a restart). Carries a nonce only that address receives.
  kChallenge = 5,
  // "It is": the answer to a kChallenge, echoing its kind and nonce.
  kChallengeReply = 6,
};

// What a kChallenge asks (ctrl byte 3). Unknown kinds are malformed.
enum class ChallengeKind : uint8_t {
  kIncarnation = 1,  // dst_incarnation is the receiver's current one
  // The same question, asked instead of accepting a first contact while
  // the asker is under pressure: it holds nothing of the receiver's yet,
  // and will once the answer comes.
  kFirstContact = 2,
};

// Every datagram starts with a 4-byte preamble: magic, version, and the UDP
// port the sending endpoint receives on. The receiver names the peer by
// (source IP, that port) — the datagram's own source port is an entropy
// value and says nothing about who sent it.
inline constexpr uint8_t kPreambleMagic = 0xb7;
inline constexpr size_t kPreambleSize = 4;
inline constexpr size_t kDataHeaderSize = 48;
inline constexpr size_t kAckHeaderSize = 48;
inline constexpr size_t kCtrlFrameSize = 32;
// Placement extension of a data frame (kDataFlagPlaced): key, offset,
// head length, reserved.
inline constexpr size_t kPlacementExtSize = 24;
// Header bytes of a data frame with these flags (before the payload).
inline constexpr size_t DataHeaderBytes(uint8_t flags) {
  return kDataHeaderSize + ((flags & kDataFlagPlaced) ? kPlacementExtSize : 0);
}
// An ack reports PSNs up to 64 * kMaxSackWords beyond cum (4096); a sender
// keeps its new data within that reach of its lowest unacked PSN (see
// Peer::CanSendNew). 16 words (1024 PSNs) was less than a loopback bulk
// sender's window: under 1 % loss, packets beyond the reach of a hole at cum
// could not be acked, and every few milliseconds the transfer stalled into
// an RTO (braid-perf --stats at 1 % loss on loopback).
inline constexpr size_t kMaxSackWords = 64;
// PSNs past the lowest unacked one whose state one ack can report.
inline constexpr uint32_t kAckReach = 64 * kMaxSackWords;
// The same for an ack alone in a datagram of `datagram_bytes`: less than
// kAckReach when the datagram cannot hold kMaxSackWords SACK words (below
// ~564 bytes), at least one word's worth.
inline constexpr uint32_t AckReachIn(size_t datagram_bytes) {
  const size_t header = kPreambleSize + kAckHeaderSize;
  const size_t words =
      datagram_bytes > header + 8 ? (datagram_bytes - header) / 8 : 1;
  return 64 *
         static_cast<uint32_t>(words < kMaxSackWords ? words : kMaxSackWords);
}
static_assert(AckReachIn(1472) == kAckReach);
static_assert(AckReachIn(256) == 64 * 25);
// A receiver accepts at least this many PSNs past the start of a new session
// before its first ack grants credit explicitly.
inline constexpr uint32_t kInitialCreditPackets = 256;

// Direct data placement descriptor carried by every fragment of a placed
// message (like a DDP tagged buffer). `key` and `offset` are opaque to the
// transport: the receiver's placement handler interprets them. The first
// `head_len` bytes of the message are not placed; they are delivered with
// the completion (an upper-layer header), the rest is placed.
struct PlacementExt {
  uint64_t key = 0;
  uint64_t offset = 0;
  uint32_t head_len = 0;  // <= msg_len
  bool operator==(const PlacementExt&) const = default;
};

struct DataHeader {
  uint8_t flags = 0;
  PathId path_id = 0;
  uint16_t stream_id = 0;  // 0: unordered; otherwise an ordered stream
  uint16_t payload_len = 0;
  uint64_t src_incarnation = 0;  // sender's; never 0
  uint64_t dst_incarnation =
      0;  // receiver's as the sender knows it; 0 = unknown
  Psn psn;
  PathSeq path_seq;
  MsgSeq msg_seq;            // message number per peer pair
  uint32_t stream_seq = 0;   // message number within stream_id
  uint32_t msg_len = 0;      // total message bytes
  uint32_t frag_offset = 0;  // this fragment's offset in the message
  PlacementExt placement;    // valid iff flags & kDataFlagPlaced
};

struct AckHeader {
  uint8_t flags = 0;
  PathId echo_path_id = 0;
  uint16_t sack_words = 0;
  uint64_t src_incarnation = 0;  // acker's
  uint64_t dst_incarnation = 0;  // data sender's incarnation (echo)
  Psn cum_psn;                   // every PSN < cum_psn was received
  PathSeq echo_path_seq;      // path seq of the packet that triggered the ack
  uint32_t ack_delay_ns = 0;  // time the acker held the echoed packet
  Psn credit_psn;             // sender may send PSNs < credit_psn
  uint32_t ce_count = 0;      // CE-marked data packets received, cumulative
  uint32_t session = 0;       // data sender's send session being acked (echo)
};

struct CtrlFrame {
  CtrlType type = CtrlType::kProbe;
  uint64_t src_incarnation = 0;
  uint64_t dst_incarnation = 0;
  uint32_t session = 0;  // sender's send-session number (kSync, kProbe)
  uint32_t value = 0;    // kSync: first PSN of the session; kNeedSync: PSN
  // kChallenge / kChallengeReply only (zero on the wire otherwise): what is
  // asked, and the challenger's nonce (bytes 24..31, in place of `value`).
  ChallengeKind kind = ChallengeKind::kIncarnation;
  uint64_t nonce = 0;
};
// Whether a ctrl frame of this type carries kind and nonce.
inline constexpr bool IsChallengeType(CtrlType t) {
  return t == CtrlType::kChallenge || t == CtrlType::kChallengeReply;
}

static_assert(kDataHeaderSize <= 48, "data header must stay within 48 bytes");

// Why a frame was rejected. Counted per reason by the endpoint.
enum class ParseError : uint8_t {
  kNone = 0,
  kTruncated,  // fewer bytes than the header or the declared payload
  kBadVersion,
  kBadType,
  kBadFlags,  // unknown flag bits set
  kReservedNonZero,
  kZeroIncarnation,  // src_incarnation must be non-zero
  kFragmentBounds,   // frag_offset + payload_len > msg_len
  kEmptyFragment,    // payload_len == 0 but msg_len != 0
  kSackTooLong,      // sack_words > kMaxSackWords
  kBadCtrlType,
  kBadPreamble,   // not a braid datagram (magic/version), or port 0
  kBadPlacement,  // placement extension truncated, reserved bits set, head
                  // longer than the message, or offset range wraps 2^64
  kCount,
};
const char* ParseErrorName(ParseError e);

// One parsed frame; pointers alias the datagram buffer.
struct Frame {
  FrameType type = FrameType::kData;
  DataHeader data;
  const uint8_t* payload = nullptr;  // data frames: payload_len bytes
                                     // (after the extension, if any)
  AckHeader ack;
  const uint8_t* sack = nullptr;  // ack frames: sack_words * 8 big-endian bytes
  CtrlFrame ctrl;
};

// Reads the frames of one datagram in order. Never reads past `bytes`,
// whatever they contain.
class FrameReader {
 public:
  explicit FrameReader(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}
  // Parses the next frame. Returns false at the end of the datagram or on a
  // malformed frame (then error() says why; the rest is not parsed).
  bool Next(Frame* out);
  ParseError error() const { return error_; }

 private:
  absl::Span<const uint8_t> bytes_;
  size_t pos_ = 0;
  ParseError error_ = ParseError::kNone;
};

// Writes the datagram preamble; returns kPreambleSize, or 0 if `out` is
// too small.
size_t WritePreamble(uint16_t reply_port, absl::Span<uint8_t> out);
// Validates the preamble of `datagram` and returns the sender's reply port,
// or 0 (with *error set) if it is missing or wrong.
uint16_t ParsePreamble(absl::Span<const uint8_t> datagram, ParseError* error);

// Decodes word i of an ack's SACK bitmap (big-endian on the wire).
uint64_t SackWord(const uint8_t* sack, size_t i);

// Serializers. Each returns bytes written, or 0 if `out` is too small. They
// write exactly what the matching parser accepts. WriteData writes the
// placement extension iff h.flags has kDataFlagPlaced.
size_t WriteData(const DataHeader& h, absl::Span<const uint8_t> payload,
                 absl::Span<uint8_t> out);
// The header (and placement extension) of a data frame whose `payload_len`
// payload bytes the caller places right after it (or sends as a separate
// piece that follows on the wire). Returns the header bytes written, 0 if
// `out` is too small or payload_len > 0xffff.
size_t WriteDataHeader(const DataHeader& h, size_t payload_len,
                       absl::Span<uint8_t> out);
// Where WriteDataHeader puts the flags (AddDataFlags) and the fields
// PatchDataHeader rewrites.
inline constexpr size_t kDataOffsetFlags = 2;
inline constexpr size_t kDataOffsetPsn = 24;
inline constexpr size_t kDataOffsetPathSeq = 28;
inline constexpr size_t kDataOffsetFragOffset = 44;
// Rewrites psn, path_seq and frag_offset of a data frame header that
// WriteDataHeader wrote at `frame`: the fields in which consecutive
// full-size fragments of one message, sent on one path, differ. A sender
// building a run of them copies the first header and patches the copies.
inline void PatchDataHeader(uint8_t* frame, Psn psn, PathSeq path_seq,
                            uint32_t frag_offset) {
  // Big-endian stores as one byte swap and one 4-byte store each. (Written
  // byte by byte, GCC 12 fused the two adjacent fields into one 8-byte value
  // assembled by shifts: ~30 instructions per datagram instead of ~6.)
  const auto put = [](uint8_t* p, uint32_t v) {
    if constexpr (std::endian::native == std::endian::little) {
      v = __builtin_bswap32(v);
    }
    std::memcpy(p, &v, sizeof(v));
  };
  put(frame + kDataOffsetPsn, psn.value());
  put(frame + kDataOffsetPathSeq, path_seq.value());
  put(frame + kDataOffsetFragOffset, frag_offset);
}
// Adds `flags` to those of a data frame header WriteDataHeader wrote at
// `frame`: a flag decided after the frame was written (kDataFlagAckNow on
// the last frame a sender can send for now). Only flags that leave the
// header's size unchanged (not kDataFlagPlaced).
inline void AddDataFlags(uint8_t* frame, uint8_t flags) {
  frame[kDataOffsetFlags] |= flags;
}
// Writes the headers of a run of `count` data frames that differ only as
// consecutive fragments of `payload_len` bytes of one message, sent back to
// back on one path, do: frame i (from 0) starts `stride` * i bytes after
// frame 0 (at first.data()) and is h with psn h.psn + i, path seq
// h.path_seq + i and frag_offset h.frag_offset + i * payload_len. Each frame
// but the first gets a copy of the `lead` bytes in front of frame 0 (the
// rest of its datagram: preamble, control frames) in front of it. Calls
// `each(i, frame)` right after frame i's header is written: the caller
// places its payload. Returns the header bytes of each frame, 0 (nothing
// written, `each` not called) as WriteDataHeader for `first`. Frames 1..
// must each have lead + header bytes of room.
template <typename EachFrame>
inline size_t WriteDataHeaderRun(const DataHeader& h, size_t payload_len,
                                 uint32_t count, absl::Span<uint8_t> first,
                                 size_t stride, size_t lead, EachFrame&& each) {
  const size_t hdr = WriteDataHeader(h, payload_len, first);
  if (hdr == 0) return 0;
  each(uint32_t{0}, first.data());
  const uint8_t* from = first.data() - lead;
  const uint32_t len = static_cast<uint32_t>(payload_len);
  for (uint32_t i = 1; i < count; ++i) {
    uint8_t* frame = first.data() + i * stride;
    // A fixed size for the usual shape: inline moves, not a call.
    if (lead == kPreambleSize && hdr == kDataHeaderSize) {
      std::memcpy(frame - lead, from, kPreambleSize + kDataHeaderSize);
    } else {
      std::memcpy(frame - lead, from, lead + hdr);
    }
    PatchDataHeader(frame, h.psn + i, h.path_seq + i, h.frag_offset + i * len);
    each(i, frame);
  }
  return hdr;
}
// The same, the caller placing the payloads afterwards.
inline size_t WriteDataHeaderRun(const DataHeader& h, size_t payload_len,
                                 uint32_t count, absl::Span<uint8_t> first,
                                 size_t stride, size_t lead) {
  return WriteDataHeaderRun(h, payload_len, count, first, stride, lead,
                            [](uint32_t, uint8_t*) {});
}
size_t WriteAck(const AckHeader& h, absl::Span<const uint64_t> sack,
                absl::Span<uint8_t> out);
size_t WriteCtrl(const CtrlFrame& c, absl::Span<uint8_t> out);

inline constexpr size_t AckFrameSize(size_t sack_words) {
  return kAckHeaderSize + 8 * sack_words;
}

}  // namespace braid::wire

#endif  // BRAID_WIRE_FRAMES_H_

#include "wire/frames.h"

#include <cstring>

namespace braid::wire {
namespace {

inline uint16_t Get16(const uint8_t* p) {
  return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
inline uint32_t Get32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
inline uint64_t Get64(const uint8_t* p) {
  return (uint64_t{Get32(p)} << 32) | Get32(p + 4);
}
inline void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void Put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
inline void Put64(uint8_t* p, uint64_t v) {
  Put32(p, static_cast<uint32_t>(v >> 32));
  Put32(p + 4, static_cast<uint32_t>(v));
}

}  // namespace

const char* ParseErrorName(ParseError e) {
  switch (e) {
    case ParseError::kNone:
      return "none";
    case ParseError::kTruncated:
      return "truncated";
    case ParseError::kBadVersion:
      return "bad_version";
    case ParseError::kBadType:
      return "bad_type";
    case ParseError::kBadFlags:
      return "bad_flags";
    case ParseError::kReservedNonZero:
      return "reserved_nonzero";
    case ParseError::kZeroIncarnation:
      return "zero_incarnation";
    case ParseError::kFragmentBounds:
      return "fragment_bounds";
    case ParseError::kEmptyFragment:
      return "empty_fragment";
    case ParseError::kSackTooLong:
      return "sack_too_long";
    case ParseError::kBadCtrlType:
      return "bad_ctrl_type";
    case ParseError::kBadPreamble:
      return "bad_preamble";
    case ParseError::kBadPlacement:
      return "bad_placement";
    case ParseError::kCount:
      break;
  }
  return "unknown";
}

size_t WritePreamble(uint16_t reply_port, absl::Span<uint8_t> out) {
  if (out.size() < kPreambleSize) return 0;
  out[0] = kPreambleMagic;
  out[1] = kVersion;
  Put16(out.data() + 2, reply_port);
  return kPreambleSize;
}

uint16_t ParsePreamble(absl::Span<const uint8_t> d, ParseError* error) {
  if (d.size() < kPreambleSize) {
    *error = ParseError::kTruncated;
    return 0;
  }
  const uint16_t port = Get16(d.data() + 2);
  if (d[0] != kPreambleMagic || d[1] != kVersion || port == 0) {
    *error = ParseError::kBadPreamble;
    return 0;
  }
  *error = ParseError::kNone;
  return port;
}

uint64_t SackWord(const uint8_t* sack, size_t i) { return Get64(sack + 8 * i); }

namespace {

// The frame parsers of FrameReader::Next (inlined into it: they run once
// per frame). Each parses the frame of its type at p, with `left` bytes
// from p to the end of the datagram; it returns kNone with *size the
// frame's bytes, or why the frame is malformed.

// The placement extension of a placed data frame whose header h holds.
inline ParseError ParsePlacement(const uint8_t* p, size_t left, size_t hdr,
                                 DataHeader& h) {
  if (left < hdr || Get32(p + kDataHeaderSize + 20) != 0) {
    return ParseError::kBadPlacement;
  }
  h.placement.key = Get64(p + kDataHeaderSize);
  h.placement.offset = Get64(p + kDataHeaderSize + 8);
  h.placement.head_len = Get32(p + kDataHeaderSize + 16);
  return ParseError::kNone;
}

inline ParseError ParseData(const uint8_t* p, size_t left, Frame* out,
                            size_t* size) {
  if (left < kDataHeaderSize) return ParseError::kTruncated;
  DataHeader& h = out->data;
  h.flags = p[2];
  if (h.flags & ~kDataFlagsKnown) return ParseError::kBadFlags;
  h.path_id = p[3];
  h.stream_id = Get16(p + 4);
  h.payload_len = Get16(p + 6);
  h.src_incarnation = Get64(p + 8);
  h.dst_incarnation = Get64(p + 16);
  h.psn = Psn(Get32(p + 24));
  h.path_seq = PathSeq(Get32(p + 28));
  h.msg_seq = MsgSeq(Get32(p + 32));
  h.stream_seq = Get32(p + 36);
  h.msg_len = Get32(p + 40);
  h.frag_offset = Get32(p + 44);
  if (h.src_incarnation == 0) return ParseError::kZeroIncarnation;
  const bool placed = (h.flags & kDataFlagPlaced) != 0;
  const size_t hdr = DataHeaderBytes(h.flags);
  if (placed) {
    if (const ParseError e = ParsePlacement(p, left, hdr, h);
        e != ParseError::kNone) {
      return e;
    }
  } else {
    h.placement = PlacementExt();
  }
  if (left - hdr < h.payload_len) return ParseError::kTruncated;
  if (uint64_t{h.frag_offset} + h.payload_len > h.msg_len) {
    return ParseError::kFragmentBounds;
  }
  if (h.payload_len == 0 && h.msg_len != 0) return ParseError::kEmptyFragment;
  if (placed) {
    const PlacementExt& x = h.placement;
    const uint64_t placed_len = uint64_t{h.msg_len} - x.head_len;
    if (x.head_len > h.msg_len || x.offset + placed_len < x.offset) {
      return ParseError::kBadPlacement;
    }
  }
  out->type = FrameType::kData;
  out->payload = p + hdr;
  *size = hdr + h.payload_len;
  return ParseError::kNone;
}

inline ParseError ParseAck(const uint8_t* p, size_t left, Frame* out,
                           size_t* size) {
  if (left < kAckHeaderSize) return ParseError::kTruncated;
  AckHeader& h = out->ack;
  h.flags = p[2];
  if (h.flags & ~kAckFlagsKnown) return ParseError::kBadFlags;
  h.echo_path_id = p[3];
  h.sack_words = Get16(p + 4);
  if (Get16(p + 6) != 0) return ParseError::kReservedNonZero;
  h.src_incarnation = Get64(p + 8);
  h.dst_incarnation = Get64(p + 16);
  h.cum_psn = Psn(Get32(p + 24));
  h.echo_path_seq = PathSeq(Get32(p + 28));
  h.ack_delay_ns = Get32(p + 32);
  h.credit_psn = Psn(Get32(p + 36));
  h.ce_count = Get32(p + 40);
  h.session = Get32(p + 44);
  if (h.src_incarnation == 0) return ParseError::kZeroIncarnation;
  if (h.sack_words > kMaxSackWords) return ParseError::kSackTooLong;
  const size_t frame_size = AckFrameSize(h.sack_words);
  if (left < frame_size) return ParseError::kTruncated;
  out->type = FrameType::kAck;
  out->sack = p + kAckHeaderSize;
  *size = frame_size;
  return ParseError::kNone;
}

inline ParseError ParseCtrl(const uint8_t* p, size_t left, Frame* out,
                            size_t* size) {
  if (left < kCtrlFrameSize) return ParseError::kTruncated;
  CtrlFrame& c = out->ctrl;
  const uint8_t t = p[2];
  if (t < static_cast<uint8_t>(CtrlType::kProbe) ||
      t > static_cast<uint8_t>(CtrlType::kChallengeReply)) {
    return ParseError::kBadCtrlType;
  }
  c.type = static_cast<CtrlType>(t);
  if (IsChallengeType(c.type)) {
    if (p[3] != static_cast<uint8_t>(ChallengeKind::kIncarnation) &&
        p[3] != static_cast<uint8_t>(ChallengeKind::kFirstContact)) {
      return ParseError::kBadCtrlType;
    }
    if (Get32(p + 4) != 0) return ParseError::kReservedNonZero;
    c.kind = static_cast<ChallengeKind>(p[3]);
    c.nonce = Get64(p + 24);
    c.value = 0;
  } else {
    if (p[3] != 0 || Get32(p + 28) != 0) return ParseError::kReservedNonZero;
    c.value = Get32(p + 24);
    c.nonce = 0;
  }
  c.src_incarnation = Get64(p + 8);
  c.dst_incarnation = Get64(p + 16);
  c.session = Get32(p + 4);
  if (c.src_incarnation == 0) return ParseError::kZeroIncarnation;
  out->type = FrameType::kCtrl;
  *size = kCtrlFrameSize;
  return ParseError::kNone;
}

// The frame at p, of any type.
inline ParseError ParseFrame(const uint8_t* p, size_t left, Frame* out,
                             size_t* size) {
  if (left < 2) return ParseError::kTruncated;
  if (p[0] != kVersion) return ParseError::kBadVersion;
  switch (static_cast<FrameType>(p[1])) {
    case FrameType::kData:
      return ParseData(p, left, out, size);
    case FrameType::kAck:
      return ParseAck(p, left, out, size);
    case FrameType::kCtrl:
      return ParseCtrl(p, left, out, size);
  }
  return ParseError::kBadType;
}

}  // namespace

bool FrameReader::Next(Frame* out) {
  if (error_ != ParseError::kNone || pos_ >= bytes_.size()) return false;
  size_t size = 0;
  const ParseError e =
      ParseFrame(bytes_.data() + pos_, bytes_.size() - pos_, out, &size);
  if (e != ParseError::kNone) {
    error_ = e;
    return false;
  }
  pos_ += size;
  return true;
}

size_t WriteData(const DataHeader& h, absl::Span<const uint8_t> payload,
                 absl::Span<uint8_t> out) {
  const size_t hdr = DataHeaderBytes(h.flags);
  if (out.size() < hdr + payload.size()) return 0;
  if (WriteDataHeader(h, payload.size(), out) == 0) return 0;
  if (!payload.empty()) {
    std::memcpy(out.data() + hdr, payload.data(), payload.size());
  }
  return hdr + payload.size();
}

size_t WriteDataHeader(const DataHeader& h, size_t payload_len,
                       absl::Span<uint8_t> out) {
  const size_t hdr = DataHeaderBytes(h.flags);
  if (out.size() < hdr || payload_len > 0xffff) return 0;
  uint8_t* p = out.data();
  p[0] = kVersion;
  p[1] = static_cast<uint8_t>(FrameType::kData);
  p[kDataOffsetFlags] = h.flags;
  p[3] = h.path_id;
  Put16(p + 4, h.stream_id);
  Put16(p + 6, static_cast<uint16_t>(payload_len));
  Put64(p + 8, h.src_incarnation);
  Put64(p + 16, h.dst_incarnation);
  Put32(p + kDataOffsetPsn, h.psn.value());
  Put32(p + kDataOffsetPathSeq, h.path_seq.value());
  Put32(p + 32, h.msg_seq.value());
  Put32(p + 36, h.stream_seq);
  Put32(p + 40, h.msg_len);
  Put32(p + kDataOffsetFragOffset, h.frag_offset);
  if (h.flags & kDataFlagPlaced) {
    Put64(p + kDataHeaderSize, h.placement.key);
    Put64(p + kDataHeaderSize + 8, h.placement.offset);
    Put32(p + kDataHeaderSize + 16, h.placement.head_len);
    Put32(p + kDataHeaderSize + 20, 0);
  }
  return hdr;
}

size_t WriteAck(const AckHeader& h, absl::Span<const uint64_t> sack,
                absl::Span<uint8_t> out) {
  if (sack.size() > kMaxSackWords) return 0;
  const size_t size = AckFrameSize(sack.size());
  if (out.size() < size) return 0;
  uint8_t* p = out.data();
  p[0] = kVersion;
  p[1] = static_cast<uint8_t>(FrameType::kAck);
  p[2] = h.flags;
  p[3] = h.echo_path_id;
  Put16(p + 4, static_cast<uint16_t>(sack.size()));
  Put16(p + 6, 0);
  Put64(p + 8, h.src_incarnation);
  Put64(p + 16, h.dst_incarnation);
  Put32(p + 24, h.cum_psn.value());
  Put32(p + 28, h.echo_path_seq.value());
  Put32(p + 32, h.ack_delay_ns);
  Put32(p + 36, h.credit_psn.value());
  Put32(p + 40, h.ce_count);
  Put32(p + 44, h.session);
  for (size_t i = 0; i < sack.size(); ++i) {
    Put64(p + kAckHeaderSize + 8 * i, sack[i]);
  }
  return size;
}

size_t WriteCtrl(const CtrlFrame& c, absl::Span<uint8_t> out) {
  if (out.size() < kCtrlFrameSize) return 0;
  uint8_t* p = out.data();
  std::memset(p, 0, kCtrlFrameSize);
  p[0] = kVersion;
  p[1] = static_cast<uint8_t>(FrameType::kCtrl);
  p[2] = static_cast<uint8_t>(c.type);
  Put32(p + 4, c.session);
  Put64(p + 8, c.src_incarnation);
  Put64(p + 16, c.dst_incarnation);
  if (IsChallengeType(c.type)) {
    p[3] = static_cast<uint8_t>(c.kind);
    Put32(p + 4, 0);
    Put64(p + 24, c.nonce);
  } else {
    Put32(p + 24, c.value);
  }
  return kCtrlFrameSize;
}

}  // namespace braid::wire

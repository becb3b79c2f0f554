// The invariants every input to wire::FrameReader must satisfy, shared by the
// GoogleTest random fuzzer and the libFuzzer target.
#ifndef BRAID_TESTS_FUZZ_FRAME_CHECK_H_
#define BRAID_TESTS_FUZZ_FRAME_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "wire/frames.h"

namespace braid::wire::fuzz {

// What one pass of the reader over a datagram produced.
struct CheckResult {
  std::string violation;  // empty when every invariant held
  size_t frames = 0;
  ParseError error = ParseError::kNone;
};

// Bytes the frame occupies on the wire, from its parsed header.
inline size_t WireSize(const Frame& f) {
  switch (f.type) {
    case FrameType::kData:
      return DataHeaderBytes(f.data.flags) + f.data.payload_len;
    case FrameType::kAck:
      return AckFrameSize(f.ack.sack_words);
    case FrameType::kCtrl:
      return kCtrlFrameSize;
  }
  return 0;
}

// Re-serializes `f` into `out` (at least WireSize(f) bytes). Returns the
// bytes written (0 on failure).
inline size_t Reserialize(const Frame& f, uint8_t* out, size_t out_size) {
  switch (f.type) {
    case FrameType::kData:
      return WriteData(f.data,
                       absl::MakeConstSpan(f.payload, f.data.payload_len),
                       absl::MakeSpan(out, out_size));
    case FrameType::kAck: {
      uint64_t words[kMaxSackWords];
      const size_t n = f.ack.sack_words;
      if (n > kMaxSackWords) return 0;
      for (size_t i = 0; i < n; ++i) words[i] = SackWord(f.sack, i);
      return WriteAck(f.ack, absl::MakeConstSpan(words, n),
                      absl::MakeSpan(out, out_size));
    }
    case FrameType::kCtrl:
      return WriteCtrl(f.ctrl, absl::MakeSpan(out, out_size));
  }
  return 0;
}

// Semantic rules every accepted frame must obey. Empty when it does.
inline std::string CheckAccepted(const Frame& f) {
  switch (f.type) {
    case FrameType::kData: {
      const DataHeader& h = f.data;
      if (h.src_incarnation == 0) return "data frame with zero incarnation";
      if (h.flags & ~kDataFlagsKnown) return "data frame with unknown flags";
      if (uint64_t{h.frag_offset} + h.payload_len > h.msg_len) {
        return "data fragment beyond its message";
      }
      if (h.payload_len == 0 && h.msg_len != 0) return "empty fragment";
      if (h.flags & kDataFlagPlaced) {
        if (h.placement.head_len > h.msg_len) return "head beyond message";
        const uint64_t n = uint64_t{h.msg_len} - h.placement.head_len;
        if (h.placement.offset + n < h.placement.offset) {
          return "placement range wraps";
        }
      } else if (!(h.placement == PlacementExt())) {
        return "unplaced frame with placement fields";
      }
      return "";
    }
    case FrameType::kAck: {
      const AckHeader& h = f.ack;
      if (h.src_incarnation == 0) return "ack frame with zero incarnation";
      if (h.flags & ~kAckFlagsKnown) return "ack frame with unknown flags";
      if (h.sack_words > kMaxSackWords) return "ack with too many sack words";
      return "";
    }
    case FrameType::kCtrl: {
      const CtrlFrame& c = f.ctrl;
      if (c.src_incarnation == 0) return "ctrl frame with zero incarnation";
      if (c.type != CtrlType::kProbe && c.type != CtrlType::kStale &&
          c.type != CtrlType::kSync && c.type != CtrlType::kNeedSync &&
          !IsChallengeType(c.type)) {
        return "ctrl frame with unknown type";
      }
      if (IsChallengeType(c.type) ? c.session != 0 || c.value != 0
                                  : c.nonce != 0) {
        return "ctrl frame with fields its type does not carry";
      }
      return "";
    }
  }
  return "frame of unknown type accepted";
}

// Runs a FrameReader over data[0, size) and checks that: the loop ends
// within size / 32 + 1 calls; each accepted frame lies inside the input,
// obeys the validation rules, and re-serializes to exactly the bytes it was
// parsed from; the reader ends either with no error at exactly the end of
// the input or with a named error; an error is sticky. Reads outside the
// input are left for AddressSanitizer to catch.
inline CheckResult CheckDatagram(const uint8_t* data, size_t size) {
  CheckResult r;
  FrameReader reader(absl::MakeConstSpan(data, size));
  Frame f;
  size_t offset = 0;
  uint8_t scratch[kDataHeaderSize + kPlacementExtSize + 0xffff];
  const size_t max_frames = size / kCtrlFrameSize;  // smallest frame: 32 B
  while (reader.Next(&f)) {
    ++r.frames;
    const std::string at = absl::StrCat(" (frame ", r.frames, " at offset ",
                                        offset, " of ", size, ")");
    if (r.frames > max_frames) {
      r.violation = absl::StrCat("more frames than the input can hold", at);
      return r;
    }
    const size_t wire = WireSize(f);
    if (wire == 0 || wire > size - offset) {
      r.violation =
          absl::StrCat("frame of ", wire, " bytes overruns input", at);
      return r;
    }
    if (f.type == FrameType::kData &&
        f.payload != data + offset + DataHeaderBytes(f.data.flags)) {
      r.violation = absl::StrCat("payload pointer misplaced", at);
      return r;
    }
    if (f.type == FrameType::kAck && f.sack != data + offset + kAckHeaderSize) {
      r.violation = absl::StrCat("sack pointer misplaced", at);
      return r;
    }
    if (std::string bad = CheckAccepted(f); !bad.empty()) {
      r.violation = absl::StrCat(bad, at);
      return r;
    }
    const size_t n = Reserialize(f, scratch, sizeof(scratch));
    if (n != wire) {
      r.violation =
          absl::StrCat("re-serialized to ", n, " bytes, parsed ", wire, at);
      return r;
    }
    if (std::memcmp(scratch, data + offset, n) != 0) {
      r.violation = absl::StrCat("re-serialized bytes differ", at);
      return r;
    }
    offset += wire;
  }
  r.error = reader.error();
  if (r.error == ParseError::kNone && offset != size) {
    r.violation = absl::StrCat("reader stopped at ", offset, " of ", size,
                               " without an error");
    return r;
  }
  if (r.error != ParseError::kNone && offset >= size) {
    r.violation = "error reported after the whole input was consumed";
    return r;
  }
  if (static_cast<uint8_t>(r.error) >=
      static_cast<uint8_t>(ParseError::kCount)) {
    r.violation = "error value out of range";
    return r;
  }
  if (reader.Next(&f)) {
    r.violation = "Next() returned a frame after it had returned false";
    return r;
  }
  if (reader.error() != r.error) {
    r.violation = "error changed after the reader stopped";
    return r;
  }
  return r;
}

// Checks a whole datagram as the endpoint reads it: the 4-byte preamble,
// then (if it is valid) the frames after it via CheckDatagram. The preamble
// must be accepted exactly when it is magic, version and a non-zero port,
// and then rewrite to the same bytes. `frames` and `error` describe the
// frame part, or the preamble's error if that failed.
inline CheckResult CheckFullDatagram(const uint8_t* data, size_t size) {
  CheckResult r;
  ParseError perr = ParseError::kCount;
  const uint16_t port = ParsePreamble(absl::MakeConstSpan(data, size), &perr);
  const bool well_formed = size >= kPreambleSize && data[0] == kPreambleMagic &&
                           data[1] == kVersion && (data[2] | data[3]) != 0;
  if (perr == ParseError::kNone) {
    uint8_t again[kPreambleSize];
    if (!well_formed || port == 0 ||
        WritePreamble(port, absl::MakeSpan(again)) != kPreambleSize ||
        std::memcmp(again, data, kPreambleSize) != 0) {
      r.violation = absl::StrCat("preamble accepted wrongly (port ", port, ")");
      return r;
    }
    return CheckDatagram(data + kPreambleSize, size - kPreambleSize);
  }
  const ParseError want =
      size < kPreambleSize ? ParseError::kTruncated : ParseError::kBadPreamble;
  if (well_formed || port != 0 || perr != want) {
    r.violation = absl::StrCat(
        "preamble rejected wrongly: ", ParseErrorName(perr), " port ", port);
    return r;
  }
  r.error = perr;
  return r;
}

}  // namespace braid::wire::fuzz

#endif  // BRAID_TESTS_FUZZ_FRAME_CHECK_H_

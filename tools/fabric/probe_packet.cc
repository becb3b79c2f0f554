#include "tools/fabric/probe_packet.h"

#include <cstring>

namespace braid::fabric {
namespace {

// Layout (bytes, little-endian): 0 magic u32 | 4 length u32 | 8 run_id u32 |
// 12 port_index u16 | 14 seq u32 | 18 send_time i64 | 26 checksum u16 |
// 28 payload pattern. The checksum is backed by a full pattern comparison.
constexpr size_t kMagicOff = 0;
constexpr size_t kLengthOff = 4;
constexpr size_t kRunOff = 8;
constexpr size_t kPortOff = 12;
constexpr size_t kSeqOff = 14;
constexpr size_t kTimeOff = 18;
constexpr size_t kChecksumOff = 26;
static_assert(kChecksumOff + 2 == kProbeHeaderSize);

void Put(uint8_t* p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t Get(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// FNV-1a over the datagram, skipping the checksum field, folded to 16 bits.
uint16_t Checksum(absl::Span<const uint8_t> d) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i == kChecksumOff || i == kChecksumOff + 1) continue;
    h = (h ^ d[i]) * 16777619u;
  }
  return static_cast<uint16_t>(h ^ (h >> 16));
}

uint8_t PatternByte(const ProbeHeader& h, size_t i) {
  return static_cast<uint8_t>(h.seq * 131u + h.port_index * 7u + h.run_id +
                              static_cast<uint32_t>(i));
}

}  // namespace

bool EncodeProbe(const ProbeHeader& header, absl::Span<uint8_t> out) {
  if (out.size() < kProbeHeaderSize || out.size() > kProbeMaxSize) return false;
  uint8_t* p = out.data();
  Put(p + kMagicOff, kProbeMagic, 4);
  Put(p + kLengthOff, out.size(), 4);
  Put(p + kRunOff, header.run_id, 4);
  Put(p + kPortOff, header.port_index, 2);
  Put(p + kSeqOff, header.seq, 4);
  Put(p + kTimeOff, static_cast<uint64_t>(header.send_time.ns()), 8);
  for (size_t i = kProbeHeaderSize; i < out.size(); ++i) {
    p[i] = PatternByte(header, i);
  }
  Put(p + kChecksumOff, Checksum(out), 2);
  return true;
}

ProbeVerdict DecodeProbe(absl::Span<const uint8_t> d, ProbeHeader* header) {
  if (d.size() < kProbeHeaderSize) return ProbeVerdict::kTooShort;
  const uint8_t* p = d.data();
  if (Get(p + kMagicOff, 4) != kProbeMagic) return ProbeVerdict::kBadMagic;
  if (Get(p + kLengthOff, 4) != d.size()) return ProbeVerdict::kBadLength;
  if (Get(p + kChecksumOff, 2) != Checksum(d))
    return ProbeVerdict::kBadChecksum;
  ProbeHeader h;
  h.run_id = static_cast<uint32_t>(Get(p + kRunOff, 4));
  h.port_index = static_cast<uint16_t>(Get(p + kPortOff, 2));
  h.seq = static_cast<uint32_t>(Get(p + kSeqOff, 4));
  h.send_time = TimeNs(static_cast<int64_t>(Get(p + kTimeOff, 8)));
  // The checksum covers the pattern, but a 16-bit checksum can collide, so
  // the pattern itself is compared too: corruption never passes as data.
  for (size_t i = kProbeHeaderSize; i < d.size(); ++i) {
    if (p[i] != PatternByte(h, i)) return ProbeVerdict::kBadChecksum;
  }
  *header = h;
  return ProbeVerdict::kOk;
}

const char* ProbeVerdictName(ProbeVerdict v) {
  switch (v) {
    case ProbeVerdict::kOk:
      return "ok";
    case ProbeVerdict::kTooShort:
      return "too_short";
    case ProbeVerdict::kBadMagic:
      return "bad_magic";
    case ProbeVerdict::kBadLength:
      return "bad_length";
    case ProbeVerdict::kBadChecksum:
      return "bad_checksum";
  }
  return "unknown";
}

}  // namespace braid::fabric

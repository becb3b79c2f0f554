#include "tools/braid_perf/payload.h"

#include <algorithm>
#include <cstring>

namespace braid::perf {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kTooShort:
      return "too_short";
    case Verdict::kBadMagic:
      return "bad_magic";
    case Verdict::kBadKind:
      return "bad_kind";
    case Verdict::kWrongSize:
      return "wrong_size";
    case Verdict::kBadStamp:
      return "bad_stamp";
    case Verdict::kBadPattern:
      return "bad_pattern";
  }
  return "?";
}

bool ReadHeader(absl::Span<const uint8_t> msg, Header* h) {
  if (msg.size() < kHeaderBytes) return false;
  uint16_t magic;
  std::memcpy(&magic, msg.data(), 2);
  if (magic != kMagic || msg[3] != 0) return false;
  h->kind = static_cast<Kind>(msg[2]);
  std::memcpy(&h->run, msg.data() + 4, 4);
  std::memcpy(&h->id, msg.data() + 8, 8);
  return true;
}

Pattern::Pattern(uint32_t max_size) : ref_(max_size) {
  for (uint32_t i = 0; i < max_size; ++i) {
    ref_[i] = static_cast<uint8_t>(i * 7 + i / 251);
  }
}

void Pattern::FillAll(absl::Span<uint8_t> buf, const Header& h) const {
  std::memcpy(buf.data(), ref_.data(), std::min(buf.size(), ref_.size()));
  Restamp(buf, h);
}

void Pattern::Restamp(absl::Span<uint8_t> buf, const Header& h) {
  if (buf.size() < kHeaderBytes) return;
  const uint16_t magic = kMagic;
  std::memcpy(buf.data(), &magic, 2);
  buf[2] = static_cast<uint8_t>(h.kind);
  buf[3] = 0;
  std::memcpy(buf.data() + 4, &h.run, 4);
  std::memcpy(buf.data() + 8, &h.id, 8);
  // Whole 8-byte stamps with a fixed-size store, then a cut-off last one.
  const uint64_t base = StampBase(h.run, h.id);
  uint64_t block = 0;
  size_t off = kHeaderBytes;
  for (; off + 8 <= buf.size(); off += kBlockBytes) {
    const uint64_t st = StampOf(base, block++);
    std::memcpy(buf.data() + off, &st, 8);
  }
  if (off < buf.size()) {
    const uint64_t st = StampOf(base, block);
    std::memcpy(buf.data() + off, &st, buf.size() - off);
  }
}

Verdict Pattern::Verify(absl::Span<const uint8_t> msg, uint32_t want_size,
                        Kind want_kind, bool pattern, Header* h) const {
  return Verify(msg, want_size, want_kind, pattern, h, [] {});
}

Verdict Pattern::Verify(absl::Span<const uint8_t> msg, uint32_t want_size,
                        Kind want_kind, bool pattern, Header* h,
                        absl::FunctionRef<void()> progress) const {
  if (msg.size() < kHeaderBytes) return Verdict::kTooShort;
  if (!ReadHeader(msg, h)) return Verdict::kBadMagic;
  if (h->kind != want_kind) return Verdict::kBadKind;
  if (msg.size() != want_size) return Verdict::kWrongSize;
  if (msg.size() > ref_.size()) return Verdict::kWrongSize;
  const uint64_t base = StampBase(h->run, h->id);
  static_assert(kProgressBytes % kBlockBytes == 0);
  constexpr uint64_t kBlocksPerProgress = kProgressBytes / kBlockBytes;
  uint64_t block = 0;
  for (size_t off = kHeaderBytes; off < msg.size(); off += kBlockBytes) {
    if (block > 0 && block % kBlocksPerProgress == 0) progress();
    const uint64_t st = StampOf(base, block++);
    const size_t n = std::min<size_t>(8, msg.size() - off);
    if (std::memcmp(msg.data() + off, &st, n) != 0) return Verdict::kBadStamp;
    if (!pattern) continue;
    const size_t pat = off + 8;
    const size_t end = std::min<size_t>(off + kBlockBytes, msg.size());
    if (pat < end &&
        std::memcmp(msg.data() + pat, ref_.data() + pat, end - pat) != 0) {
      return Verdict::kBadPattern;
    }
  }
  return Verdict::kOk;
}

}  // namespace braid::perf

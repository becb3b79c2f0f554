#include "sim/scenario/payload.h"

#include <cstring>

namespace braid::sim {
namespace {

constexpr uint32_t kMagic = 0xb4a1d5e1;

void Put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

uint32_t Get32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | p[3];
}

// Byte i of the pattern is h(i / 8) + i (mod 256), h a hash of the
// message and the 8-byte block. This returns the 8 bytes of block `block`
// in memory order.
uint64_t PatternBlock(uint64_t key, uint32_t block) {
  const uint64_t x = (key ^ block) * 0x9e3779b97f4a7c15ULL;
  const uint8_t base = static_cast<uint8_t>((x >> 56) + block * 8);
  uint8_t bytes[8];
  for (int j = 0; j < 8; ++j) bytes[j] = static_cast<uint8_t>(base + j);
  uint64_t w;
  std::memcpy(&w, bytes, 8);
  return w;
}

uint64_t PatternKey(uint64_t seed, uint32_t sender, uint32_t id) {
  return seed ^ (uint64_t{sender} << 40) ^ (uint64_t{id} << 8);
}

}  // namespace

void WriteMessageHeader(absl::Span<uint8_t> b, const MessageName& name) {
  Put32(b.data(), name.sender);
  Put32(b.data() + 4, name.id);
  Put32(b.data() + 8, name.len);
  Put32(b.data() + 12, kMagic);
}

bool ReadMessageHeader(absl::Span<const uint8_t> b, MessageName* name) {
  if (b.size() < kMessageHeaderBytes || Get32(b.data() + 12) != kMagic) {
    return false;
  }
  name->sender = Get32(b.data());
  name->id = Get32(b.data() + 4);
  name->len = Get32(b.data() + 8);
  return true;
}

void FillPattern(absl::Span<uint8_t> b, uint64_t seed, uint32_t sender,
                 uint32_t id) {
  const uint64_t key = PatternKey(seed, sender, id);
  const size_t n = b.size();
  // The header is a whole number of blocks, so blocks start 8-aligned.
  size_t i = kMessageHeaderBytes;
  for (; i + 8 <= n; i += 8) {
    const uint64_t w = PatternBlock(key, static_cast<uint32_t>(i / 8));
    std::memcpy(b.data() + i, &w, 8);
  }
  if (i < n) {
    const uint64_t w = PatternBlock(key, static_cast<uint32_t>(i / 8));
    std::memcpy(b.data() + i, &w, n - i);
  }
}

bool PatternMatches(absl::Span<const uint8_t> b, uint64_t seed, uint32_t sender,
                    uint32_t id) {
  const uint64_t key = PatternKey(seed, sender, id);
  const size_t n = b.size();
  size_t i = kMessageHeaderBytes;
  uint64_t diff = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, b.data() + i, 8);
    diff |= w ^ PatternBlock(key, static_cast<uint32_t>(i / 8));
  }
  if (i < n) {
    const uint64_t w = PatternBlock(key, static_cast<uint32_t>(i / 8));
    if (std::memcmp(b.data() + i, &w, n - i) != 0) return false;
  }
  return diff == 0;
}

}  // namespace braid::sim

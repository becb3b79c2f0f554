// Test helper: self-describing test messages, so a receiver can check
// exactly-once and byte-exact delivery of many messages without keeping a
// copy of what was sent.
//
// A message of at least kHeaderBytes carries (flow, id, size) in its first
// kHeaderBytes bytes, followed by pseudo-random bytes derived from
// (seed, flow, id). Shorter messages ("tiny", including 0 bytes) cannot carry
// an id: their content is a fixed function of their size, and a receiver
// checks them by count per size.
#ifndef BRAID_TESTS_ENDPOINT_MESSAGE_CODEC_H_
#define BRAID_TESTS_ENDPOINT_MESSAGE_CODEC_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/rng.h"

namespace braid::testing {

inline constexpr size_t kHeaderBytes = 12;

// Fills `out` (resized to `size`) with message `id` of `flow`.
inline void EncodeMessage(uint64_t seed, uint16_t flow, uint32_t id,
                          uint32_t size, std::vector<uint8_t>* out) {
  out->resize(size);
  uint8_t* p = out->data();
  if (size < kHeaderBytes) {
    for (uint32_t i = 0; i < size; ++i)
      p[i] = static_cast<uint8_t>(0xa0 + size * 16 + i);
    return;
  }
  std::memcpy(p, &id, 4);
  std::memcpy(p + 4, &size, 4);
  std::memcpy(p + 8, &flow, 2);
  p[10] = 0x5a;
  p[11] = 0xc3;
  Rng rng(seed ^ (uint64_t{flow} << 48) ^
          (uint64_t{id} * 0x9e3779b97f4a7c15ULL));
  size_t i = kHeaderBytes;
  for (; i + 8 <= size; i += 8) {
    const uint64_t w = rng.Next();
    std::memcpy(p + i, &w, 8);
  }
  const uint64_t w = rng.Next();
  std::memcpy(p + i, &w, size - i);
}

struct DecodedMessage {
  bool tiny = false;
  uint16_t flow = 0;
  uint32_t id = 0;
};

// Checks `data` against the encoding. Returns an empty string and fills
// *out if it is a well-formed message of this seed; otherwise says what is
// wrong.
inline std::string DecodeMessage(uint64_t seed,
                                 const std::vector<uint8_t>& data,
                                 DecodedMessage* out,
                                 std::vector<uint8_t>* scratch) {
  const uint32_t size = static_cast<uint32_t>(data.size());
  if (size < kHeaderBytes) {
    out->tiny = true;
    EncodeMessage(seed, 0, 0, size, scratch);
    if (*scratch != data)
      return absl::StrCat("tiny message of ", size, " bytes corrupted");
    return "";
  }
  uint32_t id, len;
  uint16_t flow;
  std::memcpy(&id, data.data(), 4);
  std::memcpy(&len, data.data() + 4, 4);
  std::memcpy(&flow, data.data() + 8, 2);
  if (len != size) {
    return absl::StrCat("message id ", id, " flow ", flow, " says ", len,
                        " bytes, has ", size);
  }
  EncodeMessage(seed, flow, id, size, scratch);
  if (*scratch != data) {
    size_t at = 0;
    while (at < size && (*scratch)[at] == data[at]) ++at;
    return absl::StrCat("message id ", id, " flow ", flow, " (", size,
                        " bytes) differs at byte ", at);
  }
  out->tiny = false;
  out->flow = flow;
  out->id = id;
  return "";
}

// The size mix of the stress tests: heavily skewed to small messages, with a
// tail up to 1 MiB. Means: ~1 % tiny (< kHeaderBytes, incl. 0 B), ~88 %
// 12 B..2 KiB, 10 % 2..64 KiB, 1 % 64 KiB..1 MiB: about 10 KB per message
// on average (~1 GB per 100k messages).
inline uint32_t SkewedSize(Rng& rng) {
  const uint64_t r = rng.Uniform(1000);
  if (r < 10) return static_cast<uint32_t>(rng.Uniform(kHeaderBytes));
  if (r < 890)
    return static_cast<uint32_t>(kHeaderBytes +
                                 rng.Uniform(2048 - kHeaderBytes + 1));
  if (r < 990)
    return static_cast<uint32_t>(2048 + rng.Uniform((64 << 10) - 2048 + 1));
  return static_cast<uint32_t>((64 << 10) +
                               rng.Uniform((1 << 20) - (64 << 10) + 1));
}

// Uniform 0..1 MiB (the full-size variant: ~52 GB per 100k messages).
inline uint32_t UniformSize(Rng& rng) {
  return static_cast<uint32_t>(rng.Uniform((1 << 20) + 1));
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_ENDPOINT_MESSAGE_CODEC_H_

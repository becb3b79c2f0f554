#include "sim/packet.h"

#include <bit>
#include <cstring>

namespace braid::sim {

namespace {

// Folds a 64-bit ones'-complement accumulator down to 16 bits.
uint16_t Fold(uint64_t sum) {
  sum = (sum & 0xffffffffULL) + (sum >> 32);
  sum = (sum & 0xffffffffULL) + (sum >> 32);
  sum = (sum & 0xffffULL) + (sum >> 16);
  sum = (sum & 0xffffULL) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

}  // namespace

// On x86-64 an AVX2 clone is picked at load time when the CPU has it (the
// loop vectorises well); other targets get the portable build.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
uint16_t
InternetChecksum(const uint8_t* data, size_t len) {
  // Sum native-order 32-bit words into 64-bit accumulators (no carry loss
  // for any realistic length), then fold. The ones'-complement sum is byte
  // order independent up to a final byte swap (RFC 1071 section 2(B)).
  uint64_t a = 0, b = 0, c = 0, d = 0;
  size_t i = 0;
  for (; i + 16 <= len; i += 16) {
    uint32_t w[4];
    std::memcpy(w, data + i, 16);
    a += w[0];
    b += w[1];
    c += w[2];
    d += w[3];
  }
  uint64_t sum = a + b + c + d;  // < 2^36 per term for len < 2^32 * 4
  for (; i + 4 <= len; i += 4) {
    uint32_t w;
    std::memcpy(&w, data + i, 4);
    sum += w;
  }
  // Tail: up to 3 bytes, placed as they would sit in a native 32-bit word.
  if (i < len) {
    uint8_t tail[4] = {0, 0, 0, 0};
    std::memcpy(tail, data + i, len - i);
    uint32_t w;
    std::memcpy(&w, tail, 4);
    sum += w;
  }
  uint16_t folded = Fold(sum);
  if constexpr (std::endian::native == std::endian::little) {
    folded = static_cast<uint16_t>((folded >> 8) | (folded << 8));
  }
  return static_cast<uint16_t>(~folded);
}

}  // namespace braid::sim

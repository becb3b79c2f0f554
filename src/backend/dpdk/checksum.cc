#include "backend/dpdk/checksum.h"

#include <bit>
#include <cstring>

namespace braid::backend::dpdk {
namespace {

// a += b with end-around carry counted in *carry.
inline void AddWord(uint64_t* a, uint64_t b, uint64_t* carry) {
  *a += b;
  *carry += *a < b ? 1 : 0;
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Folds a 64-bit one's-complement sum plus a count of carries out of bit 63
// into 16 bits.
inline uint16_t Fold(uint64_t sum, uint64_t carry) {
  // carry < 2^64 / 8 in practice; fold it in as another word.
  uint64_t c = 0;
  AddWord(&sum, carry, &c);
  sum += c;  // at most 1, cannot overflow again after an overflow
  uint64_t s = (sum & 0xffffffffu) + (sum >> 32);
  s = (s & 0xffffffffu) + (s >> 32);
  s = (s & 0xffff) + (s >> 16);
  s = (s & 0xffff) + (s >> 16);
  return static_cast<uint16_t>(s);
}

// Sum of `len` bytes in memory order as 64-bit words; `*carry` counts the
// carries out of bit 63.
inline uint64_t Sum64(const uint8_t* p, size_t len, uint64_t* carry) {
  uint64_t a = 0, b = 0, ca = 0, cb = 0;
  while (len >= 32) {
    AddWord(&a, Load64(p), &ca);
    AddWord(&b, Load64(p + 8), &cb);
    AddWord(&a, Load64(p + 16), &ca);
    AddWord(&b, Load64(p + 24), &cb);
    p += 32;
    len -= 32;
  }
  while (len >= 8) {
    AddWord(&a, Load64(p), &ca);
    p += 8;
    len -= 8;
  }
  if (len > 0) {
    uint64_t tail = 0;  // zero-padded at the end, as RFC 1071 pads
    std::memcpy(&tail, p, len);
    AddWord(&a, tail, &ca);
  }
  AddWord(&a, b, &ca);
  *carry += ca + cb;
  return a;
}

inline uint16_t Swap16(uint16_t v) {
  return static_cast<uint16_t>((v << 8) | (v >> 8));
}

}  // namespace

uint16_t RawSum16(const uint8_t* bytes, size_t len) {
  uint64_t carry = 0;
  const uint64_t sum = Sum64(bytes, len, &carry);
  return Fold(sum, carry);
}

void InternetChecksum::Add(absl::Span<const uint8_t> bytes) {
  if (bytes.empty()) return;
  if ((length_ & 1) == 0) {
    uint64_t carry = 0;
    const uint64_t s = Sum64(bytes.data(), bytes.size(), &carry);
    AddWord(&sum_, s, &carry_);
    carry_ += carry;
  } else {
    // Starting at an odd offset: each byte lands in the other half of its
    // 16-bit word, which swaps the bytes of the piece's folded sum.
    const uint16_t s = Swap16(RawSum16(bytes.data(), bytes.size()));
    AddWord(&sum_, s, &carry_);
  }
  length_ += bytes.size();
}

void InternetChecksum::AddBe16(uint16_t v) {
  const uint8_t b[2] = {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
  uint16_t mem;  // the two bytes as memory-order word
  std::memcpy(&mem, b, 2);
  AddWord(&sum_, (length_ & 1) != 0 ? Swap16(mem) : mem, &carry_);
  length_ += 2;
}

void InternetChecksum::AddBe32(uint32_t v) {
  AddBe16(static_cast<uint16_t>(v >> 16));
  AddBe16(static_cast<uint16_t>(v));
}

uint16_t InternetChecksum::Sum() const {
  const uint16_t mem = Fold(sum_, carry_);
  // The memory-order sum read back as a big-endian field value.
  if constexpr (std::endian::native == std::endian::little) return Swap16(mem);
  return mem;
}

void AddPseudoHeader(bool ipv4, const uint8_t* ip_header, uint8_t proto,
                     uint32_t l4_len, InternetChecksum* c) {
  if (ipv4) {
    c->Add(absl::MakeConstSpan(ip_header + 12, 8));
    c->AddBe16(proto);
    c->AddBe16(static_cast<uint16_t>(l4_len));
  } else {
    c->Add(absl::MakeConstSpan(ip_header + 8, 32));
    c->AddBe32(l4_len);
    c->AddBe32(proto);
  }
}

}  // namespace braid::backend::dpdk

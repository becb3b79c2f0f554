#include "crypto/security_header.h"

#include <cstring>

namespace braid::crypto {
namespace {

// Whole-word loads and stores, so that a header written just before Seal
// reads it back through store forwarding.
void Put64(uint8_t* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

void Put32(uint8_t* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}

uint64_t Get64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

}  // namespace

size_t WriteSecurityHeader(const SecurityHeader& h,
                           absl::Span<uint8_t> datagram) {
  if (datagram.size() < kProtectedFramesOffset) return 0;
  uint8_t* p = datagram.data() + wire::kPreambleSize;
  Put64(p, h.src_incarnation);
  Put64(p + 8, h.dst_incarnation);
  Put64(p + 16, h.packet_number);
  return kProtectedFramesOffset;
}

bool ParseSecurityHeader(absl::Span<const uint8_t> datagram,
                         SecurityHeader* h) {
  if (datagram.size() < kMinProtectedDatagram) return false;
  const uint8_t* p = datagram.data() + wire::kPreambleSize;
  h->src_incarnation = Get64(p);
  h->dst_incarnation = Get64(p + 8);
  h->packet_number = Get64(p + 16);
  if (h->src_incarnation == 0) return false;
  return !h->initial_key() || h->packet_number < kInitialPacketNumberLimit;
}

std::array<uint8_t, 12> NonceFor(const SecurityHeader& h) {
  std::array<uint8_t, 12> n{};
  if (h.initial_key()) {
    Put64(n.data(), h.src_incarnation);
    Put32(n.data() + 8, static_cast<uint32_t>(h.packet_number));
  } else {
    Put64(n.data() + 4, h.packet_number);
  }
  return n;
}

}  // namespace braid::crypto

#include "crypto/security_header.h"

namespace braid::crypto {
namespace {

void Put64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}

void Put32(uint8_t* p, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}

uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
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

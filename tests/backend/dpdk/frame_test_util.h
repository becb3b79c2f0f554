// Helpers shared by the DPDK framing tests: a naive RFC 1071 reference
// checksum (deliberately the slow, obvious loop) and ready-made identities
// and frames.
#ifndef BRAID_TESTS_BACKEND_DPDK_FRAME_TEST_UTIL_H_
#define BRAID_TESTS_BACKEND_DPDK_FRAME_TEST_UTIL_H_

#include <cstdint>
#include <vector>

#include "backend/dpdk/frame.h"
#include "braid/address.h"

namespace braid::backend::dpdk::testing {

using Bytes = std::vector<uint8_t>;

// Sum of big-endian 16-bit words (odd tail padded with zero), folded,
// not complemented.
inline uint16_t NaiveSum(const Bytes& b) {
  uint32_t s = 0;
  for (size_t i = 0; i < b.size(); i += 2) {
    s += static_cast<uint32_t>(b[i] << 8) | (i + 1 < b.size() ? b[i + 1] : 0u);
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
  }
  return static_cast<uint16_t>(s);
}
inline uint16_t NaiveChecksum(const Bytes& b) {
  return static_cast<uint16_t>(~NaiveSum(b));
}

inline void Append(Bytes* to, const uint8_t* p, size_t n) {
  to->insert(to->end(), p, p + n);
}

// The naive UDP pseudo-header of a frame written by WriteFrameHeader.
inline Bytes PseudoHeader(const Bytes& frame) {
  Bytes ph;
  const bool v4 = frame[12] == 0x08;
  const uint8_t* ip = frame.data() + kEthHeaderLen;
  const uint8_t* udp = ip + (v4 ? kIpv4HeaderLen : kIpv6HeaderLen);
  if (v4) {
    Append(&ph, ip + 12, 8);
    ph.insert(ph.end(), {0, kIpProtoUdp, udp[4], udp[5]});
  } else {
    Append(&ph, ip + 8, 32);
    ph.insert(ph.end(), {0, 0, udp[4], udp[5], 0, 0, 0, kIpProtoUdp});
  }
  return ph;
}

inline NetAddr Addr(const char* text) {
  return *NetAddr::Parse(text, /*allow_port_zero=*/true);
}

inline constexpr MacAddr kMacA = {0x02, 0, 0, 0, 0, 0x01};
inline constexpr MacAddr kMacB = {0x02, 0, 0, 0, 0, 0x02};

// A whole frame: headers for `spec` (software checksums) then `payload`.
inline Bytes BuildFrame(FrameHeaderSpec spec, const Bytes& payload) {
  spec.payload_len = static_cast<uint32_t>(payload.size());
  Bytes f(FrameHeaderLen(spec.src.family));
  if (WriteFrameHeader(spec, false, absl::MakeSpan(f)) != f.size()) return {};
  const absl::Span<const uint8_t> pieces[] = {payload};
  FinishUdpChecksum(absl::MakeSpan(f), pieces);
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

// A spec from A (src) to B (dst) of the family of `a`/`b`.
inline FrameHeaderSpec Spec(const char* a, const char* b, bool ect = true) {
  FrameHeaderSpec s;
  s.src_mac = kMacA;
  s.dst_mac = kMacB;
  s.src = Addr(a);
  s.dst = Addr(b);
  s.ect = ect;
  return s;
}

// B's identity for frames built by Spec(a, b).
inline LocalIdentity IdentityOf(const char* b) {
  return LocalIdentity{kMacB, Addr(b)};
}

}  // namespace braid::backend::dpdk::testing

#endif  // BRAID_TESTS_BACKEND_DPDK_FRAME_TEST_UTIL_H_

// ClassifyFrame (frame.h): the receive-side checks, separate from the
// transmit-side writers in frame.cc.
#include <cstring>

#include "backend/dpdk/checksum.h"
#include "backend/dpdk/frame.h"

namespace braid::backend::dpdk {
namespace {

constexpr uint16_t kIpv4FragMask = 0x3fff;  // MF + fragment offset
constexpr uint8_t kIcmpv6NeighborSolicitation = 135;
constexpr uint8_t kIcmpv6NeighborAdvertisement = 136;
constexpr uint32_t kArpLen = 28;

FrameKind Drop(RxDrop reason, RxDrop* why) {
  *why = reason;
  return FrameKind::kDrop;
}

bool MacIs(const uint8_t* p, const MacAddr& mac) {
  return std::memcmp(p, mac.data(), 6) == 0;
}

// Where the transport header sits in the frame, as the IP header says.
struct L4Span {
  NetAddr::Family family;
  const uint8_t* ip;  // the IP header
  uint32_t offset;    // of the UDP header, from the frame start
  uint32_t len;       // IP payload bytes (UDP header included)
  bool ce;
};

// The UDP checks shared by both families, then fills *udp.
FrameKind ClassifyUdp(absl::Span<const uint8_t> frame, const L4Span& l4,
                      const LocalIdentity& me, HwChecksum l4_csum,
                      ParsedUdp* udp, RxDrop* why) {
  if (l4.len < kUdpHeaderLen) return Drop(RxDrop::kBadLength, why);
  const uint8_t* u = frame.data() + l4.offset;
  // As Linux: a UDP length shorter than the IP payload trims it; longer,
  // or shorter than the header, drops.
  const uint32_t ulen = LoadBe16(u + 4);
  if (ulen < kUdpHeaderLen || ulen > l4.len) {
    return Drop(RxDrop::kBadLength, why);
  }
  if (LoadBe16(u + 2) != me.addr.port) return Drop(RxDrop::kWrongPort, why);
  const uint16_t field = LoadBe16(u + 6);
  const bool v4 = l4.family == NetAddr::Family::kIpv4;
  if (l4_csum == HwChecksum::kBad || (!v4 && field == 0)) {
    return Drop(RxDrop::kBadUdpChecksum, why);
  }
  if (l4_csum == HwChecksum::kUnknown && field != 0) {
    InternetChecksum c;
    AddPseudoHeader(v4, l4.ip, kIpProtoUdp, ulen, &c);
    c.Add(absl::MakeConstSpan(u, ulen));
    if (c.Checksum() != 0) return Drop(RxDrop::kBadUdpChecksum, why);
  }
  udp->src.family = l4.family;
  udp->src.port = LoadBe16(u);
  udp->src.ip = {};
  std::memcpy(udp->src.ip.data(), v4 ? l4.ip + 12 : l4.ip + 8, v4 ? 4 : 16);
  std::memcpy(udp->src_mac.data(), frame.data() + 6, 6);
  udp->ce = l4.ce;
  udp->payload_offset = l4.offset + kUdpHeaderLen;
  udp->payload_len = ulen - kUdpHeaderLen;
  return FrameKind::kUdp;
}

FrameKind ClassifyIpv4(absl::Span<const uint8_t> frame, const LocalIdentity& me,
                       HwChecksum ip_csum, HwChecksum l4_csum, ParsedUdp* udp,
                       RxDrop* why) {
  if (!MacIs(frame.data(), me.mac)) return Drop(RxDrop::kWrongMac, why);
  if (frame.size() < kEthHeaderLen + kIpv4HeaderLen) {
    return Drop(RxDrop::kShort, why);
  }
  const uint8_t* ip = frame.data() + kEthHeaderLen;
  if ((ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5) {
    return Drop(RxDrop::kBadIpHeader, why);
  }
  if ((ip[0] & 0xf) > 5) return Drop(RxDrop::kIpOptions, why);
  const uint32_t total = LoadBe16(ip + 2);
  if (total < kIpv4HeaderLen || total > frame.size() - kEthHeaderLen) {
    return Drop(RxDrop::kBadLength, why);
  }
  if (ip_csum == HwChecksum::kBad) return Drop(RxDrop::kBadIpChecksum, why);
  if (ip_csum == HwChecksum::kUnknown) {
    InternetChecksum c;
    c.Add(absl::MakeConstSpan(ip, kIpv4HeaderLen));
    if (c.Checksum() != 0) return Drop(RxDrop::kBadIpChecksum, why);
  }
  if ((LoadBe16(ip + 6) & kIpv4FragMask) != 0) {
    return Drop(RxDrop::kFragment, why);
  }
  if (std::memcmp(ip + 16, me.addr.ip.data(), 4) != 0) {
    return Drop(RxDrop::kWrongIp, why);
  }
  if (ip[9] != kIpProtoUdp) return Drop(RxDrop::kNotUdp, why);
  const L4Span l4{NetAddr::Family::kIpv4, ip, kEthHeaderLen + kIpv4HeaderLen,
                  total - kIpv4HeaderLen, (ip[1] & kEcnMask) == kEcnCe};
  return ClassifyUdp(frame, l4, me, l4_csum, udp, why);
}

FrameKind ClassifyIpv6(absl::Span<const uint8_t> frame, const LocalIdentity& me,
                       HwChecksum l4_csum, ParsedUdp* udp, RxDrop* why) {
  const bool to_us = MacIs(frame.data(), me.mac);
  const bool multicast = frame[0] == 0x33 && frame[1] == 0x33;
  if (!to_us && !multicast) return Drop(RxDrop::kWrongMac, why);
  if (frame.size() < kEthHeaderLen + kIpv6HeaderLen) {
    return Drop(RxDrop::kShort, why);
  }
  const uint8_t* ip = frame.data() + kEthHeaderLen;
  if ((ip[0] >> 4) != 6) return Drop(RxDrop::kBadIpHeader, why);
  const uint32_t plen = LoadBe16(ip + 4);
  if (plen > frame.size() - kEthHeaderLen - kIpv6HeaderLen) {
    return Drop(RxDrop::kBadLength, why);
  }
  const uint8_t next = ip[6];
  if (next == kIpProtoIcmpv6 && plen >= 4) {
    const uint8_t type = ip[kIpv6HeaderLen];
    if (type == kIcmpv6NeighborSolicitation ||
        type == kIcmpv6NeighborAdvertisement) {
      return FrameKind::kNeighborDiscovery;
    }
  }
  if (!to_us) return Drop(RxDrop::kWrongMac, why);
  if (std::memcmp(ip + 24, me.addr.ip.data(), 16) != 0) {
    return Drop(RxDrop::kWrongIp, why);
  }
  if (next != kIpProtoUdp) return Drop(RxDrop::kNotUdp, why);
  const uint8_t tclass = static_cast<uint8_t>((ip[0] << 4) | (ip[1] >> 4));
  const L4Span l4{NetAddr::Family::kIpv6, ip, kEthHeaderLen + kIpv6HeaderLen,
                  plen, (tclass & kEcnMask) == kEcnCe};
  return ClassifyUdp(frame, l4, me, l4_csum, udp, why);
}

}  // namespace

FrameKind ClassifyFrame(absl::Span<const uint8_t> frame,
                        const LocalIdentity& me, HwChecksum ip_csum,
                        HwChecksum l4_csum, ParsedUdp* udp, RxDrop* why) {
  if (frame.size() < kEthHeaderLen) return Drop(RxDrop::kShort, why);
  const NetAddr::Family family = me.addr.family;
  // VLAN-tagged frames (0x8100, 0x88a8) land in the default case: braid
  // drives untagged ports (a tagged port strips the tag in the NIC).
  switch (LoadBe16(frame.data() + 12)) {
    case kEtherTypeIpv4:
      if (family != NetAddr::Family::kIpv4) break;
      return ClassifyIpv4(frame, me, ip_csum, l4_csum, udp, why);
    case kEtherTypeIpv6:
      if (family != NetAddr::Family::kIpv6) break;
      return ClassifyIpv6(frame, me, l4_csum, udp, why);
    case kEtherTypeArp:
      if (family != NetAddr::Family::kIpv4) break;
      if (!MacIs(frame.data(), me.mac) && !MacIs(frame.data(), kBroadcastMac)) {
        return Drop(RxDrop::kWrongMac, why);
      }
      if (frame.size() < kEthHeaderLen + kArpLen) {
        return Drop(RxDrop::kShort, why);
      }
      return FrameKind::kArp;
    default:
      break;
  }
  return Drop(RxDrop::kEtherType, why);
}

}  // namespace braid::backend::dpdk

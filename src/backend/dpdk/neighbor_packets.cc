#include "backend/dpdk/neighbor_packets.h"

#include <cstring>

#include "backend/dpdk/checksum.h"

namespace braid::backend::dpdk {
namespace {

constexpr uint32_t kArpLen = 28;
constexpr uint32_t kNdBodyLen = 24;  // ICMPv6 header + flags + target
constexpr uint8_t kOptSourceLinkAddr = 1;
constexpr uint8_t kOptTargetLinkAddr = 2;
constexpr uint8_t kNaFlagRouter = 0x80;
constexpr uint8_t kNaFlagSolicited = 0x40;
constexpr uint8_t kNaFlagOverride = 0x20;

void WriteEth(const MacAddr& dst, const MacAddr& src, uint16_t type,
              uint8_t* p) {
  std::memcpy(p, dst.data(), 6);
  std::memcpy(p + 6, src.data(), 6);
  StoreBe16(p + 12, type);
}

NetAddr Ip(NetAddr::Family f, const uint8_t* p) {
  NetAddr a;
  a.family = f;
  std::memcpy(a.ip.data(), p, f == NetAddr::Family::kIpv4 ? 4 : 16);
  return a;
}

MacAddr Mac(const uint8_t* p) {
  MacAddr m;
  std::memcpy(m.data(), p, 6);
  return m;
}

bool IsUnspecified(const NetAddr& a) {
  for (uint8_t b : a.ip) {
    if (b != 0) return false;
  }
  return true;
}

bool IsSolicitedNodeGroup(const NetAddr& a) {
  static constexpr uint8_t kPrefix[13] = {0xff, 0x02, 0, 0, 0, 0,   0,
                                          0,    0,    0, 0, 1, 0xff};
  return std::memcmp(a.ip.data(), kPrefix, sizeof(kPrefix)) == 0;
}

// Walks the options after the NS/NA body: each at least 8 bytes, within the
// ICMPv6 message; fills the link-layer address option of type `want`.
bool ParseNdOptions(const uint8_t* opt, uint32_t len, uint8_t want,
                    NdMessage* out) {
  while (len > 0) {
    if (len < 2 || opt[1] == 0 || opt[1] * 8u > len) return false;
    const uint32_t n = opt[1] * 8u;
    if (opt[0] == want && !out->has_link_addr) {
      out->has_link_addr = true;
      out->link_addr = Mac(opt + 2);
    }
    opt += n;
    len -= n;
  }
  return true;
}

// Checks the NS/NA-specific rules of RFC 4861 sections 7.1.1 and 7.1.2.
bool NdRulesHold(const NdMessage& m) {
  // Neither the target nor a (non-DAD) source may be multicast.
  if (m.target.ip[0] == 0xff || m.src_ip.ip[0] == 0xff) return false;
  if (m.type == kNdSolicitation) {
    if (IsUnspecified(m.src_ip)) {
      return !m.has_link_addr && IsSolicitedNodeGroup(m.dst_ip);
    }
    return true;
  }
  return !(m.solicited && m.dst_ip.ip[0] == 0xff);
}

size_t WriteNdFrame(uint8_t type, uint8_t flags, const MacAddr& src_mac,
                    const MacAddr& dst_mac, const NetAddr& src_ip,
                    const NetAddr& dst_ip, const NetAddr& target,
                    absl::Span<uint8_t> out) {
  if (out.size() < kNdFrameLen || src_ip.family != NetAddr::Family::kIpv6 ||
      dst_ip.family != NetAddr::Family::kIpv6 ||
      target.family != NetAddr::Family::kIpv6) {
    return 0;
  }
  uint8_t* p = out.data();
  WriteEth(dst_mac, src_mac, kEtherTypeIpv6, p);
  uint8_t* ip = p + kEthHeaderLen;
  const uint32_t icmp_len = kNdFrameLen - kEthHeaderLen - kIpv6HeaderLen;
  std::memset(ip, 0, kIpv6HeaderLen + icmp_len);
  ip[0] = 0x60;
  StoreBe16(ip + 4, static_cast<uint16_t>(icmp_len));
  ip[6] = kIpProtoIcmpv6;
  ip[7] = kNdHopLimit;
  std::memcpy(ip + 8, src_ip.ip.data(), 16);
  std::memcpy(ip + 24, dst_ip.ip.data(), 16);
  uint8_t* icmp = ip + kIpv6HeaderLen;
  icmp[0] = type;
  icmp[4] = flags;
  std::memcpy(icmp + 8, target.ip.data(), 16);
  icmp[24] = type == kNdSolicitation ? kOptSourceLinkAddr : kOptTargetLinkAddr;
  icmp[25] = 1;  // 8 bytes
  std::memcpy(icmp + 26, src_mac.data(), 6);
  InternetChecksum c;
  AddPseudoHeader(false, ip, kIpProtoIcmpv6, icmp_len, &c);
  c.Add(absl::MakeConstSpan(icmp, icmp_len));
  StoreBe16(icmp + 2, c.Checksum());
  return kNdFrameLen;
}

}  // namespace

bool ParseArp(absl::Span<const uint8_t> frame, ArpMessage* out) {
  if (frame.size() < kEthHeaderLen + kArpLen) return false;
  const uint8_t* p = frame.data();
  if (LoadBe16(p + 12) != kEtherTypeArp) return false;
  const uint8_t* a = p + kEthHeaderLen;
  if (LoadBe16(a) != 1 || LoadBe16(a + 2) != kEtherTypeIpv4 || a[4] != 6 ||
      a[5] != 4) {
    return false;
  }
  out->op = LoadBe16(a + 6);
  if (out->op != kArpOpRequest && out->op != kArpOpReply) return false;
  out->sender_mac = Mac(a + 8);
  out->sender_ip = Ip(NetAddr::Family::kIpv4, a + 14);
  out->target_mac = Mac(a + 18);
  out->target_ip = Ip(NetAddr::Family::kIpv4, a + 24);
  return true;
}

size_t WriteArp(const MacAddr& eth_dst, const ArpMessage& m,
                absl::Span<uint8_t> out) {
  if (out.size() < kArpFrameLen ||
      m.sender_ip.family != NetAddr::Family::kIpv4 ||
      m.target_ip.family != NetAddr::Family::kIpv4) {
    return 0;
  }
  uint8_t* p = out.data();
  std::memset(p, 0, kArpFrameLen);
  WriteEth(eth_dst, m.sender_mac, kEtherTypeArp, p);
  uint8_t* a = p + kEthHeaderLen;
  StoreBe16(a, 1);  // Ethernet
  StoreBe16(a + 2, kEtherTypeIpv4);
  a[4] = 6;
  a[5] = 4;
  StoreBe16(a + 6, m.op);
  std::memcpy(a + 8, m.sender_mac.data(), 6);
  std::memcpy(a + 14, m.sender_ip.ip.data(), 4);
  std::memcpy(a + 18, m.target_mac.data(), 6);
  std::memcpy(a + 24, m.target_ip.ip.data(), 4);
  return kArpFrameLen;
}

size_t WriteArpRequest(const MacAddr& src_mac, const NetAddr& src_ip,
                       const NetAddr& target_ip, absl::Span<uint8_t> out) {
  // Target MAC unknown: zeros, as Linux sends.
  return WriteArp(kBroadcastMac,
                  {kArpOpRequest, src_mac, src_ip, {}, target_ip}, out);
}

size_t WriteArpReply(const MacAddr& src_mac, const NetAddr& src_ip,
                     const MacAddr& dst_mac, const NetAddr& dst_ip,
                     absl::Span<uint8_t> out) {
  return WriteArp(dst_mac, {kArpOpReply, src_mac, src_ip, dst_mac, dst_ip},
                  out);
}

NetAddr SolicitedNodeAddress(const NetAddr& ip) {
  NetAddr g;
  g.family = NetAddr::Family::kIpv6;
  g.ip = {0xff, 0x02, 0, 0, 0,    0,         0,         0,
          0,    0,    0, 1, 0xff, ip.ip[13], ip.ip[14], ip.ip[15]};
  return g;
}

MacAddr Ipv6MulticastMac(const NetAddr& group) {
  return {0x33, 0x33, group.ip[12], group.ip[13], group.ip[14], group.ip[15]};
}

bool ParseNd(absl::Span<const uint8_t> frame, NdMessage* out) {
  if (frame.size() < kEthHeaderLen + kIpv6HeaderLen + kNdBodyLen) return false;
  const uint8_t* p = frame.data();
  const uint8_t* ip = p + kEthHeaderLen;
  if (LoadBe16(p + 12) != kEtherTypeIpv6 || (ip[0] >> 4) != 6 ||
      ip[6] != kIpProtoIcmpv6 || ip[7] != kNdHopLimit) {
    return false;
  }
  const uint32_t len = LoadBe16(ip + 4);
  if (len < kNdBodyLen || len > frame.size() - kEthHeaderLen - kIpv6HeaderLen) {
    return false;
  }
  const uint8_t* icmp = ip + kIpv6HeaderLen;
  if ((icmp[0] != kNdSolicitation && icmp[0] != kNdAdvertisement) ||
      icmp[1] != 0) {
    return false;
  }
  InternetChecksum c;
  AddPseudoHeader(false, ip, kIpProtoIcmpv6, len, &c);
  c.Add(absl::MakeConstSpan(icmp, len));
  if (c.Checksum() != 0) return false;
  *out = NdMessage{};
  out->type = icmp[0];
  out->eth_src = Mac(p + 6);
  out->src_ip = Ip(NetAddr::Family::kIpv6, ip + 8);
  out->dst_ip = Ip(NetAddr::Family::kIpv6, ip + 24);
  out->target = Ip(NetAddr::Family::kIpv6, icmp + 8);
  if (out->type == kNdAdvertisement) {
    out->router = (icmp[4] & kNaFlagRouter) != 0;
    out->solicited = (icmp[4] & kNaFlagSolicited) != 0;
    out->override_flag = (icmp[4] & kNaFlagOverride) != 0;
  }
  const uint8_t want =
      out->type == kNdSolicitation ? kOptSourceLinkAddr : kOptTargetLinkAddr;
  if (!ParseNdOptions(icmp + kNdBodyLen, len - kNdBodyLen, want, out)) {
    return false;
  }
  return NdRulesHold(*out);
}

size_t WriteNeighborSolicitation(const MacAddr& src_mac, const NetAddr& src_ip,
                                 const NetAddr& target_ip,
                                 absl::Span<uint8_t> out) {
  const NetAddr group = SolicitedNodeAddress(target_ip);
  return WriteNdFrame(kNdSolicitation, 0, src_mac, Ipv6MulticastMac(group),
                      src_ip, group, target_ip, out);
}

size_t WriteNeighborAdvertisement(const MacAddr& src_mac, const NetAddr& src_ip,
                                  const MacAddr& dst_mac, const NetAddr& dst_ip,
                                  bool solicited, absl::Span<uint8_t> out) {
  const uint8_t flags = static_cast<uint8_t>(
      kNaFlagOverride | (solicited ? kNaFlagSolicited : 0));
  return WriteNdFrame(kNdAdvertisement, flags, src_mac, dst_mac, src_ip, dst_ip,
                      src_ip, out);
}

}  // namespace braid::backend::dpdk

#include "backend/dpdk/frame.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backend/dpdk/checksum.h"

namespace braid::backend::dpdk {
namespace {

constexpr uint16_t kIpv4FlagDf = 0x4000;
constexpr uint32_t kMaxIpLen = 0xffff;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The family a frame header's EtherType names, kNone if neither IP.
NetAddr::Family FamilyOf(absl::Span<const uint8_t> header) {
  if (header.size() < kEthHeaderLen) return NetAddr::Family::kNone;
  const uint16_t type = LoadBe16(header.data() + 12);
  if (type == kEtherTypeIpv4) return NetAddr::Family::kIpv4;
  if (type == kEtherTypeIpv6) return NetAddr::Family::kIpv6;
  return NetAddr::Family::kNone;
}

void WriteIpv4(const FrameHeaderSpec& s, bool csum_offload, uint8_t* ip) {
  ip[0] = 0x45;  // version 4, IHL 5
  ip[1] = s.ect ? kEcnEct0 : 0;
  StoreBe16(ip + 2, static_cast<uint16_t>(kIpv4HeaderLen + kUdpHeaderLen +
                                          s.payload_len));
  StoreBe16(ip + 4, 0);  // ID 0 with DF, as Linux sends
  StoreBe16(ip + 6, kIpv4FlagDf);
  ip[8] = kDefaultTtl;
  ip[9] = kIpProtoUdp;
  StoreBe16(ip + 10, 0);
  std::memcpy(ip + 12, s.src.ip.data(), 4);
  std::memcpy(ip + 16, s.dst.ip.data(), 4);
  if (!csum_offload) {
    InternetChecksum c;
    c.Add(absl::MakeConstSpan(ip, kIpv4HeaderLen));
    StoreBe16(ip + 10, c.Checksum());
  }
}

void WriteIpv6(const FrameHeaderSpec& s, uint8_t* ip) {
  const uint8_t tclass = s.ect ? kEcnEct0 : 0;
  const uint32_t flow = s.flow_label & 0xfffff;
  ip[0] = static_cast<uint8_t>(0x60 | (tclass >> 4));
  ip[1] = static_cast<uint8_t>((tclass << 4) | (flow >> 16));
  ip[2] = static_cast<uint8_t>(flow >> 8);
  ip[3] = static_cast<uint8_t>(flow);
  StoreBe16(ip + 4, static_cast<uint16_t>(kUdpHeaderLen + s.payload_len));
  ip[6] = kIpProtoUdp;
  ip[7] = kDefaultTtl;
  std::memcpy(ip + 8, s.src.ip.data(), 16);
  std::memcpy(ip + 24, s.dst.ip.data(), 16);
}

}  // namespace

absl::StatusOr<MacAddr> ParseMac(absl::string_view text) {
  MacAddr mac{};
  bool ok = text.size() == 17;
  for (size_t i = 0; ok && i < 6; ++i) {
    const int hi = HexDigit(text[3 * i]);
    const int lo = HexDigit(text[3 * i + 1]);
    ok = hi >= 0 && lo >= 0 && (i == 5 || text[3 * i + 2] == ':');
    mac[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("MAC address \"", text, "\": expected aa:bb:cc:dd:ee:ff"));
  }
  return mac;
}

std::string FormatMac(const MacAddr& mac) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(17, ':');
  for (size_t i = 0; i < 6; ++i) {
    out[3 * i] = kHex[mac[i] >> 4];
    out[3 * i + 1] = kHex[mac[i] & 0xf];
  }
  return out;
}

uint32_t FrameHeaderLen(NetAddr::Family family) {
  switch (family) {
    case NetAddr::Family::kIpv4:
      return kEthHeaderLen + kIpv4HeaderLen + kUdpHeaderLen;
    case NetAddr::Family::kIpv6:
      return kEthHeaderLen + kIpv6HeaderLen + kUdpHeaderLen;
    default:
      return 0;
  }
}

size_t WriteFrameHeader(const FrameHeaderSpec& s, bool ipv4_checksum_offload,
                        absl::Span<uint8_t> out) {
  const NetAddr::Family f = s.src.family;
  const uint32_t len = FrameHeaderLen(f);
  if (len == 0 || s.dst.family != f || out.size() < len) return 0;
  const uint32_t ip_len = len - kEthHeaderLen;
  const uint32_t ip_hdr = ip_len - kUdpHeaderLen;
  // IPv4 counts its header in the total length; IPv6 does not.
  const uint32_t ip_counted = f == NetAddr::Family::kIpv4 ? ip_len : 8;
  if (s.payload_len > kMaxIpLen - ip_counted) return 0;

  uint8_t* p = out.data();
  std::memcpy(p, s.dst_mac.data(), 6);
  std::memcpy(p + 6, s.src_mac.data(), 6);
  StoreBe16(p + 12,
            f == NetAddr::Family::kIpv4 ? kEtherTypeIpv4 : kEtherTypeIpv6);
  uint8_t* ip = p + kEthHeaderLen;
  if (f == NetAddr::Family::kIpv4) {
    WriteIpv4(s, ipv4_checksum_offload, ip);
  } else {
    WriteIpv6(s, ip);
  }
  uint8_t* udp = ip + ip_hdr;
  StoreBe16(udp, s.src.port);
  StoreBe16(udp + 2, s.dst.port);
  StoreBe16(udp + 4, static_cast<uint16_t>(kUdpHeaderLen + s.payload_len));
  StoreBe16(udp + 6, 0);
  return len;
}

void FinishUdpChecksum(absl::Span<uint8_t> header,
                       absl::Span<const absl::Span<const uint8_t>> payload) {
  const NetAddr::Family f = FamilyOf(header);
  const uint32_t len = FrameHeaderLen(f);
  if (len == 0 || header.size() < len) return;
  uint8_t* ip = header.data() + kEthHeaderLen;
  uint8_t* udp = header.data() + len - kUdpHeaderLen;
  InternetChecksum c;
  AddPseudoHeader(f == NetAddr::Family::kIpv4, ip, kIpProtoUdp,
                  LoadBe16(udp + 4), &c);
  StoreBe16(udp + 6, 0);
  c.Add(absl::MakeConstSpan(udp, kUdpHeaderLen));
  for (const absl::Span<const uint8_t> piece : payload) c.Add(piece);
  const uint16_t sum = c.Checksum();
  StoreBe16(udp + 6, sum == 0 ? 0xffff : sum);
}

void SetUdpPseudoHeaderChecksum(absl::Span<uint8_t> header) {
  const NetAddr::Family f = FamilyOf(header);
  const uint32_t len = FrameHeaderLen(f);
  if (len == 0 || header.size() < len) return;
  uint8_t* udp = header.data() + len - kUdpHeaderLen;
  InternetChecksum c;
  AddPseudoHeader(f == NetAddr::Family::kIpv4, header.data() + kEthHeaderLen,
                  kIpProtoUdp, LoadBe16(udp + 4), &c);
  StoreBe16(udp + 6, c.Sum());
}

void FinishUdpChecksum(L4Checksum mode, absl::Span<uint8_t> header,
                       absl::Span<const absl::Span<const uint8_t>> payload) {
  if (mode == L4Checksum::kOffload) {
    SetUdpPseudoHeaderChecksum(header);
  } else {
    FinishUdpChecksum(header, payload);
  }
}

const char* RxDropName(RxDrop why) {
  switch (why) {
    case RxDrop::kShort:
      return "short";
    case RxDrop::kEtherType:
      return "ether_type";
    case RxDrop::kWrongMac:
      return "wrong_mac";
    case RxDrop::kBadIpHeader:
      return "bad_ip_header";
    case RxDrop::kIpOptions:
      return "ip_options";
    case RxDrop::kFragment:
      return "fragment";
    case RxDrop::kWrongIp:
      return "wrong_ip";
    case RxDrop::kNotUdp:
      return "not_udp";
    case RxDrop::kBadLength:
      return "bad_length";
    case RxDrop::kBadIpChecksum:
      return "bad_ip_checksum";
    case RxDrop::kBadUdpChecksum:
      return "bad_udp_checksum";
    case RxDrop::kWrongPort:
      return "wrong_port";
    case RxDrop::kCount:
      break;
  }
  return "unknown";
}

}  // namespace braid::backend::dpdk

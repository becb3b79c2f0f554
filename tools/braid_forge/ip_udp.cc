#include "tools/braid_forge/ip_udp.h"

namespace braid::forge {
namespace {

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

void Put32(uint8_t* p, uint32_t v) {
  Put16(p, static_cast<uint16_t>(v >> 16));
  Put16(p + 2, static_cast<uint16_t>(v));
}

}  // namespace

uint32_t OnesComplementSum(absl::Span<const uint8_t> bytes, uint32_t sum) {
  uint64_t s = sum;
  size_t i = 0;
  for (; i + 1 < bytes.size(); i += 2) {
    s += static_cast<uint32_t>(bytes[i]) << 8 | bytes[i + 1];
  }
  if (i < bytes.size()) s += static_cast<uint32_t>(bytes[i]) << 8;
  while (s >> 32) s = (s & 0xffffffff) + (s >> 32);
  return static_cast<uint32_t>(s);
}

uint16_t FoldChecksum(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

size_t WriteIpv4Udp(const Ipv4UdpAddrs& a, uint16_t ip_id, size_t payload_len,
                    absl::Span<uint8_t> datagram) {
  if (payload_len > kMaxUdpPayload ||
      datagram.size() < kIpUdpHeaderSize + payload_len) {
    return 0;
  }
  const size_t total = kIpUdpHeaderSize + payload_len;
  uint8_t* ip = datagram.data();
  ip[0] = 0x45;  // version 4, 5 words of header
  ip[1] = 0;     // DSCP / ECN
  Put16(ip + 2, static_cast<uint16_t>(total));
  Put16(ip + 4, ip_id);
  Put16(ip + 6, 0x4000);  // DF, offset 0
  ip[8] = 64;             // TTL
  ip[9] = 17;             // UDP
  Put16(ip + 10, 0);
  Put32(ip + 12, a.src_ip);
  Put32(ip + 16, a.dst_ip);
  Put16(ip + 10, FoldChecksum(OnesComplementSum({ip, kIpv4HeaderSize})));

  uint8_t* udp = ip + kIpv4HeaderSize;
  const uint16_t udp_len = static_cast<uint16_t>(kUdpHeaderSize + payload_len);
  Put16(udp, a.src_port);
  Put16(udp + 2, a.dst_port);
  Put16(udp + 4, udp_len);
  Put16(udp + 6, 0);
  // Pseudo-header: source, destination, protocol, UDP length.
  uint32_t sum = OnesComplementSum({ip + 12, 8});
  sum += 17 + udp_len;
  sum = OnesComplementSum({udp, udp_len}, sum);
  const uint16_t check = FoldChecksum(sum);
  Put16(udp + 6, check == 0 ? 0xffff : check);
  return total;
}

}  // namespace braid::forge

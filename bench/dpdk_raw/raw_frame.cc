#include "bench/dpdk_raw/raw_frame.h"

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace braid::dpdkraw {
namespace {

constexpr uint32_t kEthBytes = sizeof(rte_ether_hdr);
constexpr uint32_t kIpBytes = sizeof(rte_ipv4_hdr);
static_assert(kEthBytes + kIpBytes + sizeof(rte_udp_hdr) == kHeadersBytes);

constexpr uint8_t kEct0 = 0x02;
// The shortest Ethernet frame (without FCS): shorter ones are padded.
constexpr uint32_t kMinFrameBytes = 60;
constexpr uint16_t kDontFragment = 0x4000;

rte_ipv4_hdr* IpOf(uint8_t* frame) {
  return reinterpret_cast<rte_ipv4_hdr*>(frame + kEthBytes);
}
rte_udp_hdr* UdpOf(uint8_t* frame) {
  return reinterpret_cast<rte_udp_hdr*>(frame + kEthBytes + kIpBytes);
}

struct FillArg {
  const uint8_t* frame;
  uint32_t bytes;
};

void FillOne(rte_mempool*, void* arg, void* obj, unsigned) {
  const FillArg* f = static_cast<const FillArg*>(arg);
  rte_mbuf* m = static_cast<rte_mbuf*>(obj);
  std::memcpy(static_cast<uint8_t*>(m->buf_addr) + m->data_off, f->frame,
              f->bytes);
}

}  // namespace

void WriteFrame(uint8_t* out, const Endpoint& src, const Endpoint& dst,
                const BenchHeader& h, uint32_t payload_bytes, uint8_t fill) {
  auto* eth = reinterpret_cast<rte_ether_hdr*>(out);
  eth->dst_addr = dst.mac;
  eth->src_addr = src.mac;
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  rte_ipv4_hdr* ip = IpOf(out);
  std::memset(ip, 0, kIpBytes);
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->type_of_service = kEct0;
  ip->total_length = rte_cpu_to_be_16(
      static_cast<uint16_t>(kIpBytes + sizeof(rte_udp_hdr) + payload_bytes));
  ip->fragment_offset = rte_cpu_to_be_16(kDontFragment);
  ip->time_to_live = 64;
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(src.ip);
  ip->dst_addr = rte_cpu_to_be_32(dst.ip);
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  rte_udp_hdr* udp = UdpOf(out);
  udp->src_port = rte_cpu_to_be_16(src.port);
  udp->dst_port = rte_cpu_to_be_16(dst.port);
  udp->dgram_len = rte_cpu_to_be_16(
      static_cast<uint16_t>(sizeof(rte_udp_hdr) + payload_bytes));
  uint8_t* payload = out + kHeadersBytes;
  std::memset(payload, fill, payload_bytes);
  std::memcpy(payload, &h, std::min<uint32_t>(sizeof(h), payload_bytes));
  udp->dgram_cksum = 0;
  udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
}

void UpdateUdpChecksum(rte_mbuf* m) {
  uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
  rte_udp_hdr* udp = UdpOf(frame);
  udp->dgram_cksum = 0;
  udp->dgram_cksum = rte_ipv4_udptcp_cksum(IpOf(frame), udp);
}

Drop ParseFrame(const rte_mbuf* m, RxFrame* out) {
  uint8_t copy[kHeadersBytes + sizeof(BenchHeader)];
  const uint32_t frame_bytes = rte_pktmbuf_pkt_len(m);
  const auto* p = static_cast<const uint8_t*>(rte_pktmbuf_read(
      m, 0, std::min<uint32_t>(sizeof(copy), frame_bytes), copy));
  if (frame_bytes < kHeadersBytes || p == nullptr) return Drop::kShort;
  const auto* eth = reinterpret_cast<const rte_ether_hdr*>(p);
  const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(p + kEthBytes);
  const auto* udp =
      reinterpret_cast<const rte_udp_hdr*>(p + kEthBytes + kIpBytes);
  if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
      ip->version_ihl != RTE_IPV4_VHL_DEF) {
    return Drop::kNotIpv4;
  }
  if ((rte_be_to_cpu_16(ip->fragment_offset) &
       (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0) {
    return Drop::kFragment;
  }
  if (ip->next_proto_id != IPPROTO_UDP) return Drop::kNotUdp;
  const uint32_t ip_len = rte_be_to_cpu_16(ip->total_length);
  const uint32_t udp_len = rte_be_to_cpu_16(udp->dgram_len);
  if (ip_len > frame_bytes - kEthBytes || udp_len != ip_len - kIpBytes ||
      udp_len < sizeof(rte_udp_hdr)) {
    return Drop::kBadLength;
  }
  if (kEthBytes + ip_len < frame_bytes && frame_bytes > kMinFrameBytes) {
    return Drop::kTrailing;
  }
  const uint32_t payload = udp_len - sizeof(rte_udp_hdr);
  if (payload < sizeof(BenchHeader)) return Drop::kShort;
  std::memcpy(&out->h, p + kHeadersBytes, sizeof(BenchHeader));
  if (out->h.magic != BenchHeader::kMagic) return Drop::kNotBench;
  out->src = {eth->src_addr, rte_be_to_cpu_32(ip->src_addr),
              rte_be_to_cpu_16(udp->src_port)};
  out->dst = {eth->dst_addr, rte_be_to_cpu_32(ip->dst_addr),
              rte_be_to_cpu_16(udp->dst_port)};
  out->payload_bytes = payload;
  return Drop::kNone;
}

void TurnAround(rte_mbuf* m) {
  uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(frame);
  const rte_ether_addr eth_src = eth->src_addr;
  eth->src_addr = eth->dst_addr;
  eth->dst_addr = eth_src;
  rte_ipv4_hdr* ip = IpOf(frame);
  const rte_be32_t ip_src = ip->src_addr;
  ip->src_addr = ip->dst_addr;
  ip->dst_addr = ip_src;
  rte_udp_hdr* udp = UdpOf(frame);
  const rte_be16_t udp_src = udp->src_port;
  udp->src_port = udp->dst_port;
  udp->dst_port = udp_src;
}

absl::StatusOr<rte_mempool*> MakeTemplatePool(const std::string& name,
                                              unsigned n, const uint8_t* frame,
                                              uint32_t frame_bytes) {
  const uint32_t room = RTE_PKTMBUF_HEADROOM + frame_bytes;
  rte_mempool* pool = rte_pktmbuf_pool_create(
      name.c_str(), n, /*cache_size=*/256, /*priv_size=*/0,
      static_cast<uint16_t>(room), static_cast<int>(rte_socket_id()));
  if (pool == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("rte_pktmbuf_pool_create(", name, ", ", n, " x ", room,
                     " bytes): ", rte_strerror(rte_errno)));
  }
  FillArg arg{frame, frame_bytes};
  rte_mempool_obj_iter(pool, FillOne, &arg);
  return pool;
}

unsigned TakeFrames(rte_mempool* pool, uint32_t frame_bytes, rte_mbuf** out,
                    unsigned n) {
  if (n == 0 || rte_pktmbuf_alloc_bulk(pool, out, n) != 0) return 0;
  for (unsigned i = 0; i < n; ++i) {
    out[i]->data_len = static_cast<uint16_t>(frame_bytes);
    out[i]->pkt_len = frame_bytes;
  }
  return n;
}

}  // namespace braid::dpdkraw

// The DPDK backend's transmit path: one mbuf per datagram, headers written
// by braid, checksums offloaded where the port can.
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "backend/dpdk/dpdk_backend.h"
#include "backend/dpdk/neighbor_packets.h"
#include "base/monotonic_clock.h"

namespace braid::backend::dpdk {

const MacAddr* DpdkBackend::NextHopMac(const NetAddr& dst) {
  if (o_.next_hop_mac) return &*o_.next_hop_mac;
  const NetAddr hop = NextHop(dst, o_.bind, o_.prefix_len, o_.gateway);
  if (cached_valid_ && hop.ip == cached_hop_.ip) return &cached_mac_;
  if (std::optional<MacAddr> mac = neighbors_.Lookup(hop)) {
    cached_hop_ = hop;
    cached_mac_ = *mac;
    cached_valid_ = true;
    return &cached_mac_;
  }
  if (neighbors_.ShouldRequest(hop, MonotonicNow())) {
    uint8_t frame[kMaxNeighborFrameLen];
    const bool v4 = hop.family == NetAddr::Family::kIpv4;
    const size_t n =
        v4 ? WriteArpRequest(me_.mac, me_.addr, hop, absl::MakeSpan(frame))
           : WriteNeighborSolicitation(me_.mac, me_.addr, hop,
                                       absl::MakeSpan(frame));
    if (n > 0) {
      SendControl(frame, n);
      ++counters_.frames.neighbor_requests_sent;
    }
  }
  return nullptr;
}

void DpdkBackend::SendControl(const uint8_t* frame, size_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(port_->pool());
  if (m == nullptr) {
    ++counters_.frames.tx_no_mbuf;
    return;
  }
  uint8_t* d = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, len));
  if (d != nullptr) std::copy(frame, frame + len, d);
  // The frame is written before the port takes the mbuf: a copying port
  // (af_packet, af_xdp) reads it inside rte_eth_tx_burst and frees it.
  if (d == nullptr || rte_eth_tx_burst(port_id_, 0, &m, 1) != 1) {
    rte_pktmbuf_free(m);
    ++counters_.tx_dropped;
    return;
  }
  ++counters_.tx_packets;
  counters_.tx_bytes += len;
}

rte_mbuf* DpdkBackend::AttachTail(const TxPacket& p) {
  if (p.hold == nullptr || p.tail_len < kMinReferencedTail ||
      !port_->caps().tx_by_reference) {
    return nullptr;
  }
  rte_mbuf* x = rte_pktmbuf_alloc(port_->ext_pool());
  if (x == nullptr) return nullptr;
  rte_mbuf_ext_shared_info* shinfo = ext_slots_.Take(p.hold);
  if (shinfo == nullptr) {
    rte_pktmbuf_free(x);
    return nullptr;
  }
  void* bytes = const_cast<uint8_t*>(p.tail);
  // The port reads the bytes with the CPU (tx_by_reference), so their IOVA
  // is not used; give the one DPDK would compute where it is the address.
  const rte_iova_t iova =
      rte_eal_iova_mode() == RTE_IOVA_VA
          ? static_cast<rte_iova_t>(reinterpret_cast<uintptr_t>(bytes))
          : RTE_BAD_IOVA;
  rte_pktmbuf_attach_extbuf(x, bytes, iova, static_cast<uint16_t>(p.tail_len),
                            shinfo);
  x->data_len = static_cast<uint16_t>(p.tail_len);
  x->pkt_len = p.tail_len;
  return x;
}

void DpdkBackend::ReleaseTails() { rte_eth_tx_done_cleanup(port_id_, 0, 0); }

void DpdkBackend::BuildFrame(const TxPacket& p, const MacAddr& dst_mac,
                             rte_mbuf* m, rte_mbuf* ext) {
  const uint32_t hdr = FrameHeaderLen(o_.bind.family);
  const uint32_t size = p.size();
  uint8_t* d = rte_pktmbuf_mtod(m, uint8_t*);
  FrameHeaderSpec spec;
  spec.src_mac = me_.mac;
  spec.dst_mac = dst_mac;
  spec.src = o_.bind;
  spec.src.port = static_cast<uint16_t>(o_.src_port_base + p.entropy);
  spec.dst = p.dst;
  spec.ect = p.ect && o_.ecn;
  // IPv6: a flow label per source port, as the kernel gives each flow one
  // (routers may hash it for ECMP, so it must vary with the entropy too).
  spec.flow_label = (0x9e3779b1u * (spec.src.port + 1u)) >> 12;
  spec.payload_len = size;
  const PortCaps& caps = port_->caps();
  const bool v4 = o_.bind.family == NetAddr::Family::kIpv4;
  WriteFrameHeader(spec, v4 && caps.tx_ipv4_cksum, absl::MakeSpan(d, hdr));
  // Two pieces of payload: p.data here, and the tail after it or in `ext`.
  absl::Span<const uint8_t> pieces[2];
  if (ext == nullptr) {
    p.CopyTo(d + hdr);
    counters_.frames.tx_copied_bytes += p.tail_len;
    m->data_len = static_cast<uint16_t>(hdr + size);
    pieces[0] = absl::MakeConstSpan(d + hdr, size);
  } else {
    if (p.len > 0) std::memcpy(d + hdr, p.data, p.len);
    m->data_len = static_cast<uint16_t>(hdr + p.len);
    m->next = ext;
    m->nb_segs = 2;
    ++counters_.frames.tx_zero_copy_frames;
    pieces[0] = absl::MakeConstSpan(d + hdr, p.len);
    pieces[1] = absl::MakeConstSpan(p.tail, p.tail_len);
  }
  m->pkt_len = hdr + size;
  if (caps.tx_udp_cksum) {
    m->l2_len = kEthHeaderLen;
    m->l3_len = hdr - kEthHeaderLen - kUdpHeaderLen;
    m->ol_flags |= (v4 ? RTE_MBUF_F_TX_IPV4 : RTE_MBUF_F_TX_IPV6) |
                   RTE_MBUF_F_TX_UDP_CKSUM |
                   (v4 && caps.tx_ipv4_cksum ? RTE_MBUF_F_TX_IP_CKSUM : 0);
    SetUdpPseudoHeaderChecksum(absl::MakeSpan(d, hdr));
  } else {
    if (v4 && caps.tx_ipv4_cksum) {
      m->l2_len = kEthHeaderLen;
      m->l3_len = kIpv4HeaderLen;
      m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
    }
    FinishUdpChecksum(absl::MakeSpan(d, hdr),
                      absl::MakeConstSpan(pieces, ext == nullptr ? 1 : 2));
  }
}

size_t DpdkBackend::TxBurst(absl::Span<const TxPacket> pkts) {
  const size_t n = std::min(pkts.size(), kBurst);
  if (n == 0) return 0;
  std::array<rte_mbuf*, kBurst> m;
  if (rte_pktmbuf_alloc_bulk(port_->pool(), m.data(),
                             static_cast<unsigned>(n)) != 0) {
    ++counters_.frames.tx_no_mbuf;
    return 0;
  }
  // pkt_of[j]: the packet mbuf j carries (packets dropped here have none).
  std::array<uint16_t, kBurst> pkt_of;
  uint16_t built = 0;
  for (size_t i = 0; i < n; ++i) {
    const TxPacket& p = pkts[i];
    const MacAddr* mac =
        p.size() <= max_datagram_ ? NextHopMac(p.dst) : nullptr;
    if (mac == nullptr) {
      if (p.size() > max_datagram_) {
        ++counters_.tx_dropped;
      } else {
        ++counters_.frames.tx_no_neighbor;
      }
      continue;
    }
    BuildFrame(p, *mac, m[built], AttachTail(p));
    pkt_of[built++] = static_cast<uint16_t>(i);
  }
  const uint16_t sent =
      built > 0 ? rte_eth_tx_burst(port_id_, 0, m.data(), built) : 0;
  for (uint16_t j = 0; j < sent; ++j) {
    counters_.tx_bytes += pkts[pkt_of[j]].size();
  }
  counters_.tx_packets += sent;
  // Unused mbufs: those of dropped packets (past `built`) and those the port
  // did not take.
  rte_pktmbuf_free_bulk(m.data() + sent, static_cast<unsigned>(n - sent));
  return sent == built ? n : pkt_of[sent];
}

}  // namespace braid::backend::dpdk

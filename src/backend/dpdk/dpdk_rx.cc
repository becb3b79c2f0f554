// The DPDK backend's receive path: validate each frame as the kernel's
// IP/UDP stack would, hand UDP payloads to the core in place, answer and
// learn from ARP/ND, and count every drop by reason.
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>

#include "backend/dpdk/dpdk_backend.h"
#include "backend/dpdk/neighbor_packets.h"
#include "base/monotonic_clock.h"

namespace braid::backend::dpdk {
namespace {

HwChecksum IpChecksumState(uint64_t flags) {
  switch (flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) {
    case RTE_MBUF_F_RX_IP_CKSUM_GOOD:
      return HwChecksum::kGood;
    case RTE_MBUF_F_RX_IP_CKSUM_BAD:
      return HwChecksum::kBad;
    default:
      return HwChecksum::kUnknown;
  }
}

HwChecksum L4ChecksumState(uint64_t flags) {
  switch (flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) {
    case RTE_MBUF_F_RX_L4_CKSUM_GOOD:
      return HwChecksum::kGood;
    case RTE_MBUF_F_RX_L4_CKSUM_BAD:
      return HwChecksum::kBad;
    default:
      return HwChecksum::kUnknown;
  }
}

}  // namespace

void DpdkBackend::CountDrop(RxDrop why) {
  FrameStats& f = counters_.frames;
  uint64_t* const by_reason[] = {
      &f.rx_short,           &f.rx_ether_type,       &f.rx_wrong_mac,
      &f.rx_bad_ip_header,   &f.rx_ip_options,       &f.rx_fragment,
      &f.rx_wrong_ip,        &f.rx_not_udp,          &f.rx_bad_length,
      &f.rx_bad_ip_checksum, &f.rx_bad_udp_checksum, &f.rx_wrong_port,
  };
  static_assert(sizeof(by_reason) / sizeof(by_reason[0]) ==
                static_cast<size_t>(RxDrop::kCount));
  const size_t i = static_cast<size_t>(why);
  if (i < static_cast<size_t>(RxDrop::kCount)) ++*by_reason[i];
  ++counters_.rx_dropped;
}

void DpdkBackend::CountNeighbor(NeighborAction a) {
  switch (a) {
    case NeighborAction::kLearnt:
      ++counters_.frames.neighbor_learnt;
      break;
    case NeighborAction::kIgnored:
    case NeighborAction::kMalformed:
      ++counters_.frames.neighbor_ignored;
      break;
    default:
      break;
  }
}

bool DpdkBackend::Receive(rte_mbuf* m, RxPacket* pkt) {
  absl::Span<const uint8_t> frame(rte_pktmbuf_mtod(m, const uint8_t*),
                                  m->data_len);
  if (m->nb_segs != 1) {
    // A chain (a peer on a ring port sends its tails by reference): one
    // copy into this burst entry's flat buffer.
    ++counters_.frames.rx_multi_segment;
    if (m->pkt_len > max_frame_) {
      CountDrop(RxDrop::kBadLength);
      return false;
    }
    uint8_t* flat = rx_flat_.data() + size_t{rx_held_n_} * max_frame_;
    const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, flat);
    if (p == nullptr) {
      CountDrop(RxDrop::kShort);
      return false;
    }
    frame = absl::MakeConstSpan(static_cast<const uint8_t*>(p), m->pkt_len);
  }
  const bool hw = port_->caps().rx_cksum;
  ParsedUdp udp;
  RxDrop why = RxDrop::kCount;
  const FrameKind kind = ClassifyFrame(
      frame, me_, hw ? IpChecksumState(m->ol_flags) : HwChecksum::kUnknown,
      hw ? L4ChecksumState(m->ol_flags) : HwChecksum::kUnknown, &udp, &why);
  switch (kind) {
    case FrameKind::kUdp:
      pkt->src = udp.src;
      pkt->ce = udp.ce;
      pkt->data = const_cast<uint8_t*>(frame.data()) + udp.payload_offset;
      pkt->len = udp.payload_len;
      pkt->arrival = TimeNs::Infinite();
      pkt->local = 0;
      if (udp.payload_len > max_datagram_) ++counters_.rx_over_mtu;
      return true;
    case FrameKind::kArp:
    case FrameKind::kNeighborDiscovery: {
      uint8_t reply[kMaxNeighborFrameLen];
      size_t reply_len = 0;
      const NeighborAction a =
          HandleNeighborFrame(frame, me_, MonotonicNow(), &neighbors_,
                              absl::MakeSpan(reply), &reply_len);
      CountNeighbor(a);
      if (reply_len > 0) {
        SendControl(reply, reply_len);
        ++counters_.frames.neighbor_replies_sent;
      }
      return false;
    }
    case FrameKind::kDrop:
      CountDrop(why);
      return false;
  }
  return false;
}

size_t DpdkBackend::RxBurst(absl::Span<RxPacket> out) {
  if (rx_held_n_ > 0) {
    rte_pktmbuf_free_bulk(rx_held_.data(), rx_held_n_);
    rx_held_n_ = 0;
  }
  const uint16_t want = static_cast<uint16_t>(std::min(out.size(), kBurst));
  std::array<rte_mbuf*, kBurst> m;
  const uint16_t n = rte_eth_rx_burst(port_id_, 0, m.data(), want);
  size_t k = 0;
  for (uint16_t i = 0; i < n; ++i) {
    // Receive may use flat slot rx_held_n_ (== k) for a chained frame.
    if (Receive(m[i], &out[k])) {
      counters_.rx_bytes += out[k].len;
      rx_held_[k++] = m[i];
      rx_held_n_ = static_cast<uint16_t>(k);
    } else {
      rte_pktmbuf_free(m[i]);
    }
  }
  counters_.rx_packets += k;
  return k;
}

}  // namespace braid::backend::dpdk

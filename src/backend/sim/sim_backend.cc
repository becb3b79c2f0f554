#include "backend/sim/sim_backend.h"

#include <algorithm>
#include <cstring>

#include "sim/simulator.h"

namespace braid::backend {

SimBackend::SimBackend(sim::Host* host, SimBackendOptions options)
    : host_(host), options_(options) {
  options_.entropy_count =
      std::clamp<uint32_t>(options_.entropy_count, 1, 65536 - kFirstSourcePort);
  options_.mtu_payload =
      std::min(options_.mtu_payload, host_->sim()->pool().buffer_bytes());
  held_.reserve(256);
}

SimBackend::~SimBackend() { ReleaseHeld(); }

void SimBackend::ReleaseHeld() {
  sim::PacketPool& pool = host_->sim()->pool();
  for (sim::Packet* p : held_) pool.Free(p);
  held_.clear();
}

size_t SimBackend::TxBurst(absl::Span<const TxPacket> pkts) {
  sim::Simulator* sim = host_->sim();
  sim::PacketPool& pool = sim->pool();
  sim::Link* uplink = host_->uplink();
  const NetAddr& self = host_->address();
  size_t taken = 0;
  for (const TxPacket& t : pkts) {
    if (t.dst.family != NetAddr::Family::kIpv4 ||
        t.entropy >= options_.entropy_count ||
        t.size() > options_.mtu_payload || (t.len > 0 && t.data == nullptr) ||
        (t.tail_len > 0 && t.tail == nullptr)) {
      ++counters_.tx_dropped;
      ++taken;
      continue;
    }
    if (options_.backpressure && uplink != nullptr) {
      const uint64_t wire =
          uint64_t{t.size()} + uplink->options().frame_overhead_bytes;
      if (uplink->QueueBytes() + wire > uplink->options().queue_bytes) break;
    }
    sim::Packet* p = pool.Alloc();
    p->src = self;
    p->src.port = static_cast<uint16_t>(kFirstSourcePort + t.entropy);
    p->dst = t.dst;
    p->ect = t.ect;
    p->len = t.size();
    if (options_.carry_tail_bytes) {
      t.CopyTo(p->data);
    } else {
      if (t.len > 0) std::memcpy(p->data, t.data, t.len);
      if (t.tail_len > 0) {
        std::memcpy(p->data + t.len, t.tail,
                    std::min(t.tail_len, kCarriedTailBytes));
      }
    }
    host_->Send(p);
    ++counters_.tx_packets;
    counters_.tx_bytes += t.size();
    ++taken;
  }
  return taken;
}

BackendCounters SimBackend::counters() const {
  BackendCounters c = counters_;
  const sim::HostCounters& h = host_->counters();
  c.rx_dropped +=
      h.rx_checksum_drops + h.rx_ring_drops + h.rx_wrong_address_drops;
  if (host_->uplink() != nullptr) {
    c.tx_dropped += host_->uplink()->counters().drops_queue_full;
  }
  return c;
}

size_t SimBackend::RxBurst(absl::Span<RxPacket> out) {
  ReleaseHeld();
  size_t n = 0;
  while (n < out.size()) {
    sim::Packet* p = host_->PopRx();
    if (p == nullptr) break;
    held_.push_back(p);
    RxPacket& r = out[n++];
    r.src = p->src;
    r.ce = p->ce;
    r.data = p->data;
    r.len = p->len;
    ++counters_.rx_packets;
    counters_.rx_bytes += p->len;
  }
  return n;
}

}  // namespace braid::backend

#include "sim/host.h"

#include <utility>

#include "sim/simulator.h"

namespace braid::sim {

Host::Host(Simulator* sim, const NetAddr& address, const HostOptions& options,
           std::string name)
    : sim_(sim),
      address_(address),
      options_(options),
      name_(std::move(name)),
      ring_(options.rx_ring_packets == 0 ? 1 : options.rx_ring_packets,
            nullptr) {}

Host::~Host() {
  while (Packet* p = PopRx()) sim_->pool().Free(p);
}

void Host::Send(Packet* p) {
  p->id = sim_->NextPacketId();
  p->sent_at = sim_->now();
  p->ready_ps = sim_->now().ns() * 1000;
  p->ce = false;
  p->corrupted = false;
  if (options_.lazy_checksum) {
    p->checksum_stamped = false;
  } else {
    StampChecksum(*p);
  }
  ++counters_.tx_packets;
  counters_.tx_bytes += p->len;
  if (uplink_ == nullptr) {
    sim_->pool().Free(p);
    return;
  }
  uplink_->Send(p);
}

void Host::Receive(Packet* p) {
  if (Ipv4Of(p->dst) != Ipv4Of(address_) || p->dst.port != address_.port) {
    ++counters_.rx_wrong_address_drops;
    sim_->pool().Free(p);
    return;
  }
  if (options_.verify_checksum && p->checksum_stamped && !ChecksumOk(*p)) {
    ++counters_.rx_checksum_drops;
    sim_->pool().Free(p);
    return;
  }
  if (rx_count_ == ring_.size()) {
    ++counters_.rx_ring_drops;
    sim_->pool().Free(p);
    return;
  }
  size_t tail = rx_head_ + rx_count_;
  if (tail >= ring_.size()) tail -= ring_.size();
  ring_[tail] = p;
  ++rx_count_;
  ++counters_.rx_packets;
  counters_.rx_bytes += p->len;
  if (hook_fn_ != nullptr && !hook_pending_) {
    hook_pending_ = true;
    sim_->ScheduleRaw(sim_->now(), &Host::RunHook, this, 0);
  }
}

Packet* Host::PopRx() {
  if (rx_count_ == 0) return nullptr;
  Packet* p = ring_[rx_head_];
  ring_[rx_head_] = nullptr;
  if (++rx_head_ == ring_.size()) rx_head_ = 0;
  --rx_count_;
  return p;
}

void Host::RunHook(void* self_ptr, uint64_t) {
  auto* self = static_cast<Host*>(self_ptr);
  self->hook_pending_ = false;
  if (self->hook_fn_ == nullptr) return;
  ++self->counters_.rx_hook_calls;
  self->hook_fn_(self->hook_ctx_);
}

}  // namespace braid::sim

#include "sim/link.h"

#include <algorithm>
#include <utility>

#include "sim/simulator.h"

namespace braid::sim {

namespace {

constexpr int64_t kPsPerNs = 1000;

constexpr uint64_t kBitPs = 8u * 1'000'000'000'000ULL;  // ps-bits per byte

// ceil(bytes * 8 * 1e12 / rate) picoseconds.
int64_t SerializationPs(uint64_t wire_bytes, uint64_t rate_bps) {
  if (rate_bps == 0) return 0;
  const unsigned __int128 num =
      static_cast<unsigned __int128>(wire_bytes) * kBitPs;
  return static_cast<int64_t>((num + rate_bps - 1) / rate_bps);
}

// Picoseconds per byte when the rate divides 8e12 (100 Gbit/s: 80), so the
// per-packet time is one multiplication; 0 if it does not.
uint64_t ExactPsPerByte(uint64_t rate_bps) {
  return rate_bps != 0 && kBitPs % rate_bps == 0 ? kBitPs / rate_bps : 0;
}

}  // namespace

Link::Link(Simulator* sim, const LinkOptions& options, std::string name,
           uint64_t seed)
    : sim_(sim),
      options_(options),
      name_(std::move(name)),
      rng_(seed),
      ps_per_byte_(ExactPsPerByte(options.rate_bps)) {
  ring_.resize(64);
  flight_.resize(64);
}

void Link::SetOptions(const LinkOptions& options) {
  options_ = options;
  ps_per_byte_ = ExactPsPerByte(options.rate_bps);
}

DurationNs Link::SerializationTime(uint32_t payload_len) const {
  const int64_t ps = SerializationPs(
      uint64_t{payload_len} + options_.frame_overhead_bytes, options_.rate_bps);
  return DurationNs((ps + kPsPerNs - 1) / kPsPerNs);
}

void Link::Drain(int64_t now_ps) {
  while (ring_size_ > 0 && ring_[ring_head_].finish_ps <= now_ps) {
    queue_bytes_ -= ring_[ring_head_].bytes;
    ring_head_ = (ring_head_ + 1) & (ring_.size() - 1);
    --ring_size_;
  }
}

uint32_t Link::QueueBytes() {
  Drain(sim_->now().ns() * kPsPerNs);
  return static_cast<uint32_t>(queue_bytes_);
}

void Link::Send(Packet* p) {
  ++counters_.offered_packets;
  // A frame corrupted on an earlier link failed that link's frame check
  // (Ethernet's CRC32 at every hop): the switch that received it dropped it.
  // Only a host checks the UDP checksum itself. Without this, a frame
  // corrupted on two links could pass the receiver's 16-bit checksum (two
  // flips can cancel), which per-hop CRCs prevent in a real fabric. A frame
  // whose checksum was re-stamped (Impairment::deliver_corrupted: corruption
  // inside a switch, which no frame check sees) travels on.
  if (p->corrupted && p->checksum_stamped && !ChecksumOk(*p)) {
    ++counters_.drops_bad_frame;
    sim_->pool().Free(p);
    return;
  }
  const Impairment& imp = impairment_;
  if (imp.blackhole) {
    ++counters_.drops_blackhole;
    sim_->pool().Free(p);
    return;
  }
  if (imp.loss > 0 && rng_.Bernoulli(imp.loss)) {
    ++counters_.drops_random_loss;
    sim_->pool().Free(p);
    return;
  }
  if (imp.ge_p_good_to_bad > 0) {
    if (ge_bad_) {
      if (rng_.Bernoulli(imp.ge_p_bad_to_good)) ge_bad_ = false;
    } else {
      if (rng_.Bernoulli(imp.ge_p_good_to_bad)) ge_bad_ = true;
    }
    const double p_loss = ge_bad_ ? imp.ge_loss_in_bad : imp.ge_loss_in_good;
    if (p_loss > 0 && rng_.Bernoulli(p_loss)) {
      ++counters_.drops_burst_loss;
      sim_->pool().Free(p);
      return;
    }
  } else {
    ge_bad_ = false;
  }
  if (imp.corrupt > 0 && p->len > 0 && rng_.Bernoulli(imp.corrupt)) {
    if (!p->checksum_stamped) StampChecksum(*p);  // lazy mode: stamp first
    const uint64_t bit = rng_.Uniform(uint64_t{p->len} * 8);
    p->data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    p->corrupted = true;
    if (imp.deliver_corrupted) StampChecksum(*p);
    ++counters_.corrupted;
  }
  Packet* dup = nullptr;
  if (imp.duplicate > 0 && rng_.Bernoulli(imp.duplicate)) {
    dup = sim_->pool().Clone(*p);
  }
  Enqueue(p);
  if (dup != nullptr && Enqueue(dup)) ++counters_.duplicated;
}

bool Link::Enqueue(Packet* p) {
  // The packet's exact ready time if it is within the current nanosecond
  // tick (it came off a link in this event), else now().
  const int64_t tick_ps = sim_->now().ns() * kPsPerNs;
  const int64_t now_ps =
      (p->ready_ps <= tick_ps && p->ready_ps > tick_ps - kPsPerNs) ? p->ready_ps
                                                                   : tick_ps;
  Drain(now_ps);
  const uint32_t wire = p->len + options_.frame_overhead_bytes;
  if (queue_bytes_ + wire > options_.queue_bytes) {
    ++counters_.drops_queue_full;
    sim_->pool().Free(p);
    return false;
  }
  const uint32_t k = impairment_.ecn_threshold_bytes;
  if (k > 0 && p->ect && queue_bytes_ >= k) {
    if (!p->ce) ++counters_.ecn_marked;
    p->ce = true;
  }
  const int64_t start_ps = std::max(busy_until_ps_, now_ps);
  const int64_t finish_ps =
      start_ps + (ps_per_byte_ != 0 ? static_cast<int64_t>(wire * ps_per_byte_)
                                    : SerializationPs(wire, options_.rate_bps));
  busy_until_ps_ = finish_ps;
  // Queue bookkeeping: power-of-two ring that doubles when full.
  if (ring_size_ == ring_.size()) {
    std::vector<InFlight> bigger(ring_.size() * 2);
    for (size_t i = 0; i < ring_size_; ++i) {
      bigger[i] = ring_[(ring_head_ + i) & (ring_.size() - 1)];
    }
    ring_ = std::move(bigger);
    ring_head_ = 0;
  }
  ring_[(ring_head_ + ring_size_) & (ring_.size() - 1)] =
      InFlight{finish_ps, wire};
  ++ring_size_;
  queue_bytes_ += wire;
  counters_.max_queue_bytes = std::max(counters_.max_queue_bytes, queue_bytes_);
  ++counters_.tx_packets;
  counters_.tx_bytes += wire;

  int64_t arrival_ps =
      finish_ps +
      (options_.delay.ns() + impairment_.extra_delay.ns()) * kPsPerNs;
  arrival_ps = std::max(arrival_ps, last_arrival_ps_);
  if (impairment_.reorder > 0 && rng_.Bernoulli(impairment_.reorder)) {
    // Held: later packets keep the FIFO schedule and overtake it.
    arrival_ps += impairment_.reorder_delay.ns() * kPsPerNs;
    ++counters_.reordered;
    p->ready_ps = arrival_ps;
    sim_->ScheduleRaw(TimeNs((arrival_ps + kPsPerNs - 1) / kPsPerNs),
                      &Link::Deliver, this, reinterpret_cast<uint64_t>(p));
    return true;
  }
  last_arrival_ps_ = arrival_ps;
  p->ready_ps = arrival_ps;
  // In order: into the FIFO, with the rank an event scheduled now gets.
  const Arrival a{(arrival_ps + kPsPerNs - 1) / kPsPerNs, sim_->ReserveRank(),
                  p};
  if (flight_size_ == flight_.size()) {
    std::vector<Arrival> bigger(flight_.size() * 2);
    for (size_t i = 0; i < flight_size_; ++i) {
      bigger[i] = flight_[(flight_head_ + i) & (flight_.size() - 1)];
    }
    flight_ = std::move(bigger);
    flight_head_ = 0;
  }
  flight_[(flight_head_ + flight_size_) & (flight_.size() - 1)] = a;
  if (flight_size_++ == 0) {
    sim_->ScheduleRanked(TimeNs(a.at_ns), a.rank, &Link::DeliverHead, this, 0);
  }
  return true;
}

void Link::DeliverHead(void* self_ptr, uint64_t) {
  auto* self = static_cast<Link*>(self_ptr);
  Packet* p = self->flight_[self->flight_head_].packet;
  self->flight_head_ = (self->flight_head_ + 1) & (self->flight_.size() - 1);
  if (--self->flight_size_ > 0) {
    const Arrival& next = self->flight_[self->flight_head_];
    self->sim_->ScheduleRanked(TimeNs(next.at_ns), next.rank,
                               &Link::DeliverHead, self, 0);
  }
  self->Hand(p);
}

void Link::Deliver(void* self_ptr, uint64_t packet) {
  static_cast<Link*>(self_ptr)->Hand(reinterpret_cast<Packet*>(packet));
}

void Link::Hand(Packet* p) {
  ++counters_.delivered_packets;
  if (tap_fn_ != nullptr) tap_fn_(tap_ctx_, *this, *p);
  sink_.fn(sink_.obj, p);
}

}  // namespace braid::sim

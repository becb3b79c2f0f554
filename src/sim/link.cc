#include "sim/link.h"

#include <algorithm>
#include <memory>
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

// Moves the `size` entries of a full power-of-two ring (`ring`, `mask`,
// `head`) into heap storage of twice the size, in order from index 0.
template <typename T>
void DoubleRing(T*& ring, std::unique_ptr<T[]>& heap, size_t& mask,
                size_t& head, size_t size) {
  const size_t n = mask + 1;
  auto bigger = std::make_unique<T[]>(n * 2);
  for (size_t i = 0; i < size; ++i) bigger[i] = ring[(head + i) & mask];
  heap = std::move(bigger);
  ring = heap.get();
  mask = n * 2 - 1;
  head = 0;
}

}  // namespace

Link::Link(Simulator* sim, const LinkOptions& options, std::string name,
           uint64_t seed)
    : sim_(sim),
      ring_(ring_inline_),
      flight_(flight_inline_),
      options_(options),
      rng_(seed),
      name_(std::move(name)) {
  CacheParameters();
}

void Link::SetOptions(const LinkOptions& options) {
  options_ = options;
  CacheParameters();
}

void Link::SetImpairment(const Impairment& impairment) {
  impairment_ = impairment;
  CacheParameters();
}

void Link::CacheParameters() {
  ps_per_byte_ = ExactPsPerByte(options_.rate_bps);
  delay_ps_ = (options_.delay.ns() + impairment_.extra_delay.ns()) * kPsPerNs;
  frame_overhead_bytes_ = options_.frame_overhead_bytes;
  queue_limit_bytes_ = options_.queue_bytes;
  ecn_threshold_bytes_ = impairment_.ecn_threshold_bytes;
  const Impairment& imp = impairment_;
  plain_ = !imp.blackhole && imp.loss <= 0 && imp.ge_p_good_to_bad <= 0 &&
           imp.corrupt <= 0 && imp.duplicate <= 0 && imp.reorder <= 0;
}

DurationNs Link::SerializationTime(uint32_t payload_len) const {
  const int64_t ps = SerializationPs(
      uint64_t{payload_len} + options_.frame_overhead_bytes, options_.rate_bps);
  return DurationNs((ps + kPsPerNs - 1) / kPsPerNs);
}

void Link::Drain(int64_t now_ps) {
  while (ring_size_ > 0 && ring_[ring_head_].finish_ps <= now_ps) {
    queue_bytes_ -= ring_[ring_head_].bytes;
    ring_head_ = (ring_head_ + 1) & ring_mask_;
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
  if (plain_) {
    ge_bad_ = false;
    Enqueue(p);
    return;
  }
  Packet* dup = nullptr;
  if (!Impair(p, &dup)) return;
  Enqueue(p);
  if (dup != nullptr && Enqueue(dup)) ++counters_.duplicated;
}

bool Link::Impair(Packet* p, Packet** dup) {
  const Impairment& imp = impairment_;
  if (imp.blackhole) {
    ++counters_.drops_blackhole;
    sim_->pool().Free(p);
    return false;
  }
  if (imp.loss > 0 && rng_.Bernoulli(imp.loss)) {
    ++counters_.drops_random_loss;
    sim_->pool().Free(p);
    return false;
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
      return false;
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
  if (imp.duplicate > 0 && rng_.Bernoulli(imp.duplicate)) {
    *dup = sim_->pool().Clone(*p);
  }
  return true;
}

void Link::GrowRing() {
  DoubleRing(ring_, ring_heap_, ring_mask_, ring_head_, ring_size_);
}

void Link::GrowFlight() {
  DoubleRing(flight_, flight_heap_, flight_mask_, flight_head_, flight_size_);
}

bool Link::Enqueue(Packet* p) {
  // The packet's exact ready time if it is within the current nanosecond
  // tick (it came off a link in this event), else now().
  const int64_t tick_ps = sim_->now().ns() * kPsPerNs;
  const int64_t now_ps =
      (p->ready_ps <= tick_ps && p->ready_ps > tick_ps - kPsPerNs) ? p->ready_ps
                                                                   : tick_ps;
  Drain(now_ps);
  const uint32_t wire = p->len + frame_overhead_bytes_;
  if (queue_bytes_ + wire > queue_limit_bytes_) {
    ++counters_.drops_queue_full;
    sim_->pool().Free(p);
    return false;
  }
  const uint32_t k = ecn_threshold_bytes_;
  if (k > 0 && p->ect && queue_bytes_ >= k) {
    if (!p->ce) ++counters_.ecn_marked;
    p->ce = true;
  }
  const int64_t start_ps = std::max(busy_until_ps_, now_ps);
  const int64_t finish_ps =
      start_ps + (ps_per_byte_ != 0 ? static_cast<int64_t>(wire * ps_per_byte_)
                                    : SerializationPs(wire, options_.rate_bps));
  busy_until_ps_ = finish_ps;
  if (ring_size_ > ring_mask_) GrowRing();
  ring_[(ring_head_ + ring_size_) & ring_mask_] = InFlight{finish_ps, wire};
  ++ring_size_;
  queue_bytes_ += wire;
  counters_.max_queue_bytes = std::max(counters_.max_queue_bytes, queue_bytes_);
  ++counters_.tx_packets;
  counters_.tx_bytes += wire;

  int64_t arrival_ps = std::max(finish_ps + delay_ps_, last_arrival_ps_);
  if (!plain_ && impairment_.reorder > 0 &&
      rng_.Bernoulli(impairment_.reorder)) {
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
  if (flight_size_ > flight_mask_) GrowFlight();
  flight_[(flight_head_ + flight_size_) & flight_mask_] = a;
  if (flight_size_++ == 0) {
    sim_->ScheduleRanked(TimeNs(a.at_ns), a.rank, &Link::DeliverHead, this, 0);
  }
  return true;
}

void Link::DeliverHead(void* self_ptr, uint64_t) {
  auto* self = static_cast<Link*>(self_ptr);
  Packet* p = self->flight_[self->flight_head_].packet;
  self->flight_head_ = (self->flight_head_ + 1) & self->flight_mask_;
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

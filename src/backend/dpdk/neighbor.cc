#include "backend/dpdk/neighbor.h"

#include <algorithm>

namespace braid::backend::dpdk {

NeighborTable::NeighborTable(size_t capacity)
    : capacity_(std::max<size_t>(capacity, 1)) {
  entries_.reserve(capacity_);
  requests_.reserve(capacity_);
}

NetAddr NeighborTable::Key(const NetAddr& ip) {
  NetAddr k;
  k.family = ip.family;
  const size_t n = ip.family == NetAddr::Family::kIpv4 ? 4 : 16;
  std::copy_n(ip.ip.begin(), n, k.ip.begin());
  return k;
}

bool NeighborTable::AddStatic(const NetAddr& ip, const MacAddr& mac) {
  if (!ip.valid()) return false;
  const NetAddr key = Key(ip);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= capacity_ && !EvictOldestLearnt()) return false;
    it = entries_.emplace(key, Entry{}).first;
  }
  it->second = Entry{mac, /*is_static=*/true, 0, TimeNs::Zero()};
  return true;
}

std::optional<MacAddr> NeighborTable::Lookup(const NetAddr& ip) const {
  const auto it = entries_.find(Key(ip));
  if (it == entries_.end()) return std::nullopt;
  return it->second.mac;
}

void NeighborTable::ForgetOldRequests(TimeNs now) {
  absl::erase_if(requests_, [now](const auto& r) {
    return now - r.second > kReplyWindow;
  });
}

bool NeighborTable::ShouldRequest(const NetAddr& ip, TimeNs now) {
  const NetAddr key = Key(ip);
  auto it = requests_.find(key);
  if (it != requests_.end()) {
    if (now - it->second < kRequestInterval) {
      ++counters_.requests_limited;
      return false;
    }
    it->second = now;
  } else {
    if (requests_.size() >= capacity_) ForgetOldRequests(now);
    if (requests_.size() >= capacity_) {
      ++counters_.requests_limited;
      return false;
    }
    requests_.emplace(key, now);
  }
  ++counters_.requests_allowed;
  return true;
}

bool NeighborTable::Requested(const NetAddr& ip, TimeNs now) const {
  const auto it = requests_.find(Key(ip));
  return it != requests_.end() && now - it->second <= kReplyWindow &&
         now >= it->second;
}

bool NeighborTable::IsStale(const NetAddr& ip, TimeNs now) const {
  const auto it = entries_.find(Key(ip));
  return it != entries_.end() && !it->second.is_static &&
         now - it->second.confirmed > kReachableTime;
}

bool NeighborTable::EvictOldestLearnt() {
  while (!learnt_order_.empty()) {
    const auto [key, seq] = learnt_order_.front();
    learnt_order_.pop_front();
    const auto it = entries_.find(key);
    if (it != entries_.end() && !it->second.is_static &&
        it->second.seq == seq) {
      entries_.erase(it);
      ++counters_.evicted;
      return true;
    }
  }
  return false;
}

bool NeighborTable::Learn(const NetAddr& ip, const MacAddr& mac, TimeNs now) {
  if (!ip.valid() || IsGroupMac(mac)) return false;
  const NetAddr key = Key(ip);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    if (it->second.is_static) return it->second.mac == mac;
    it->second.mac = mac;
    it->second.confirmed = now;
    ++counters_.learnt;
    return true;
  }
  if (entries_.size() >= capacity_ && !EvictOldestLearnt()) return false;
  const uint64_t seq = next_seq_++;
  entries_.emplace(key, Entry{mac, /*is_static=*/false, seq, now});
  learnt_order_.emplace_back(key, seq);
  ++counters_.learnt;
  return true;
}

NetAddr NextHop(const NetAddr& dst, const NetAddr& local, uint32_t prefix_len,
                const NetAddr& gateway) {
  if (!gateway.valid()) return dst;
  if (dst.family != local.family) {
    return gateway.family == dst.family ? gateway : dst;
  }
  const uint32_t width = dst.family == NetAddr::Family::kIpv4 ? 32 : 128;
  const uint32_t bits = std::min(prefix_len, width);
  for (uint32_t i = 0; i < bits / 8; ++i) {
    if (dst.ip[i] != local.ip[i]) return gateway;
  }
  if (bits % 8 != 0) {
    const uint8_t mask = static_cast<uint8_t>(0xff00 >> (bits % 8));
    if ((dst.ip[bits / 8] ^ local.ip[bits / 8]) & mask) return gateway;
  }
  return dst;
}

}  // namespace braid::backend::dpdk

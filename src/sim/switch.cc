#include "sim/switch.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/simulator.h"

namespace braid::sim {

namespace {

// A strong 64-bit finaliser (the splitmix64 / murmur3 fmix64 family).
inline uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr uint64_t kProtoUdp = 17;

}  // namespace

Switch::Switch(Simulator* sim, std::string name, uint64_t hash_seed)
    : sim_(sim), hash_seed_(hash_seed), name_(std::move(name)) {}

int Switch::AddPort(Link* egress) {
  ports_.push_back(egress);
  return static_cast<int>(ports_.size()) - 1;
}

absl::Status Switch::AddRoute(uint32_t prefix, int prefix_len,
                              const std::vector<int>& ports) {
  if (prefix_len < 0 || prefix_len > 32) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": prefix length ", prefix_len, " not in 0..32"));
  }
  if (ports.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": empty port set"));
  }
  for (int p : ports) {
    if (p < 0 || p >= num_ports()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": no port ", p, " (have ", num_ports(), ")"));
    }
  }
  // A replaced route's old entries stay unused in the group arrays.
  const Group group{static_cast<uint32_t>(group_ports_.size()),
                    static_cast<uint32_t>(ports.size())};
  for (int p : ports) {
    group_ports_.push_back(p);
    group_links_.push_back(ports_[p]);
  }
  if (prefix_len == 32) {
    host_routes_[prefix] = group;
    return absl::OkStatus();
  }
  const uint32_t mask =
      prefix_len == 0 ? 0u : ~uint32_t{0} << (32 - prefix_len);
  for (PrefixRoute& r : prefix_routes_) {
    if (r.mask == mask && r.prefix == (prefix & mask)) {
      r.group = group;
      return absl::OkStatus();
    }
  }
  prefix_routes_.push_back(PrefixRoute{prefix & mask, mask, group});
  // Longer masks are larger numbers: longest prefix first, equal lengths in
  // the order they were added.
  std::stable_sort(prefix_routes_.begin(), prefix_routes_.end(),
                   [](const PrefixRoute& a, const PrefixRoute& b) {
                     return a.mask > b.mask;
                   });
  return absl::OkStatus();
}

const Switch::Group* Switch::Lookup(uint32_t dst_ip) const {
  if (!host_routes_.empty()) {
    if (auto it = host_routes_.find(dst_ip); it != host_routes_.end()) {
      return &it->second;
    }
  }
  for (const PrefixRoute& r : prefix_routes_) {
    if ((dst_ip & r.mask) == r.prefix) return &r.group;
  }
  return nullptr;
}

uint64_t Switch::FlowHash(const Packet& p, uint64_t seed) {
  const uint64_t ips =
      (static_cast<uint64_t>(Ipv4Of(p.src)) << 32) | Ipv4Of(p.dst);
  const uint64_t ports = (static_cast<uint64_t>(p.src.port) << 32) |
                         (static_cast<uint64_t>(p.dst.port) << 16) | kProtoUdp;
  return Mix(Mix(seed ^ ips) ^ ports);
}

uint32_t Switch::PickHop(const Group& group, const Packet& p) const {
  const uint64_t n = group.count;
  if (n == 1) return group.first;
  // Multiply-shift range reduction of the high 32 hash bits (unbiased
  // enough, and no division).
  const uint64_t h = FlowHash(p, hash_seed_) >> 32;
  return group.first + static_cast<uint32_t>((h * n) >> 32);
}

int Switch::SelectPort(const Packet& p) const {
  const Group* group = Lookup(Ipv4Of(p.dst));
  if (group == nullptr) return -1;
  return group_ports_[PickHop(*group, p)];
}

void Switch::Receive(Packet* p) {
  ++counters_.rx_packets;
  counters_.rx_bytes += p->len;
  const Group* group = Lookup(Ipv4Of(p->dst));
  if (group == nullptr) {
    ++counters_.drops_no_route;
    sim_->pool().Free(p);
    return;
  }
  group_links_[PickHop(*group, *p)]->Send(p);
}

}  // namespace braid::sim

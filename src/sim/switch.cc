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
    : sim_(sim), name_(std::move(name)), hash_seed_(hash_seed) {}

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
  PortGroup group(ports.begin(), ports.end());
  if (prefix_len == 32) {
    host_routes_[prefix] = std::move(group);
    return absl::OkStatus();
  }
  const uint32_t mask =
      prefix_len == 0 ? 0u : ~uint32_t{0} << (32 - prefix_len);
  for (PrefixRoute& r : prefix_routes_) {
    if (r.len == prefix_len && r.prefix == (prefix & mask)) {
      r.ports = std::move(group);
      return absl::OkStatus();
    }
  }
  prefix_routes_.push_back(
      PrefixRoute{prefix & mask, mask, prefix_len, std::move(group)});
  std::stable_sort(
      prefix_routes_.begin(), prefix_routes_.end(),
      [](const PrefixRoute& a, const PrefixRoute& b) { return a.len > b.len; });
  return absl::OkStatus();
}

const Switch::PortGroup* Switch::Lookup(uint32_t dst_ip) const {
  if (auto it = host_routes_.find(dst_ip); it != host_routes_.end()) {
    return &it->second;
  }
  for (const PrefixRoute& r : prefix_routes_) {
    if ((dst_ip & r.mask) == r.prefix) return &r.ports;
  }
  return nullptr;
}

uint64_t Switch::FlowHash(const Packet& p, uint64_t seed) {
  const uint64_t ips =
      (static_cast<uint64_t>(p.src.ipv4()) << 32) | p.dst.ipv4();
  const uint64_t ports = (static_cast<uint64_t>(p.src.port) << 32) |
                         (static_cast<uint64_t>(p.dst.port) << 16) | kProtoUdp;
  return Mix(Mix(seed ^ ips) ^ ports);
}

int Switch::SelectPort(const Packet& p) const {
  const PortGroup* group = Lookup(p.dst.ipv4());
  if (group == nullptr) return -1;
  const size_t n = group->size();
  if (n == 1) return (*group)[0];
  // Multiply-shift range reduction of the high 32 hash bits (unbiased
  // enough, and no division).
  const uint64_t h = FlowHash(p, hash_seed_) >> 32;
  return (*group)[(h * n) >> 32];
}

void Switch::Receive(Packet* p) {
  ++counters_.rx_packets;
  counters_.rx_bytes += p->len;
  const int port = SelectPort(*p);
  if (port < 0) {
    ++counters_.drops_no_route;
    sim_->pool().Free(p);
    return;
  }
  ports_[port]->Send(p);
}

}  // namespace braid::sim

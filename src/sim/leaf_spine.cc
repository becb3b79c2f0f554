#include "sim/leaf_spine.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/simulator.h"

namespace braid::sim {

namespace {

uint32_t HostIp(int leaf, int index) {
  return (10u << 24) | (static_cast<uint32_t>(leaf) << 16) |
         static_cast<uint32_t>(index + 1);
}

uint32_t LeafPrefix(int leaf) {
  return (10u << 24) | (static_cast<uint32_t>(leaf) << 16);
}

}  // namespace

absl::Status ValidateLeafSpineOptions(const LeafSpineOptions& options) {
  if (options.num_leaves < 1 || options.num_leaves > kMaxLeaves) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_leaves ", options.num_leaves, " not in 1..", kMaxLeaves));
  }
  if (options.hosts_per_leaf < 1 || options.hosts_per_leaf > kMaxHostsPerLeaf) {
    return absl::InvalidArgumentError(
        absl::StrCat("hosts_per_leaf ", options.hosts_per_leaf, " not in 1..",
                     kMaxHostsPerLeaf));
  }
  if (options.num_spines < 1 || options.num_spines > kMaxSpines) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_spines ", options.num_spines, " not in 1..", kMaxSpines));
  }
  if (!options.per_spine_fabric_link.empty() &&
      static_cast<int>(options.per_spine_fabric_link.size()) !=
          options.num_spines) {
    return absl::InvalidArgumentError(absl::StrCat(
        "per_spine_fabric_link has ", options.per_spine_fabric_link.size(),
        " entries, need num_spines = ", options.num_spines));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LeafSpine>> LeafSpine::Create(
    Simulator* sim, const LeafSpineOptions& options) {
  absl::Status valid = ValidateLeafSpineOptions(options);
  if (!valid.ok()) return valid;
  std::unique_ptr<LeafSpine> net(new LeafSpine(sim, options));
  absl::Status s = net->Build();
  if (!s.ok()) return s;
  return net;
}

absl::Status LeafSpine::Build() {
  const int L = options_.num_leaves;
  const int H = options_.hosts_per_leaf;
  const int S = options_.num_spines;
  for (int l = 0; l < L; ++l) {
    leaves_.push_back(std::make_unique<Switch>(sim_, absl::StrCat("leaf", l),
                                               sim_->NextSeed()));
  }
  for (int s = 0; s < S; ++s) {
    spines_.push_back(std::make_unique<Switch>(sim_, absl::StrCat("spine", s),
                                               sim_->NextSeed()));
  }
  // Hosts and their access links.
  for (int l = 0; l < L; ++l) {
    Switch& leaf = *leaves_[l];
    for (int i = 0; i < H; ++i) {
      const int h = l * H + i;
      auto host = std::make_unique<Host>(
          sim_, NetAddr::Ipv4(HostIp(l, i), options_.host_port), options_.host,
          absl::StrCat("host", h));
      auto up = std::make_unique<Link>(sim_, options_.host_link,
                                       absl::StrCat("host", h, "->leaf", l),
                                       sim_->NextSeed());
      auto down = std::make_unique<Link>(sim_, options_.host_link,
                                         absl::StrCat("leaf", l, "->host", h),
                                         sim_->NextSeed());
      host->SetUplink(up.get());
      up->Connect(leaf.sink());
      down->Connect(host->sink());
      const int port = leaf.AddPort(down.get());
      absl::Status st = leaf.AddRoute(HostIp(l, i), 32, {port});
      if (!st.ok()) return st;
      hosts_.push_back(std::move(host));
      host_up_.push_back(std::move(up));
      host_down_.push_back(std::move(down));
    }
  }
  // Fabric links: leaf l <-> spine s.
  up_.resize(static_cast<size_t>(L) * S);
  down_.resize(static_cast<size_t>(L) * S);
  std::vector<std::vector<int>> leaf_uplink_ports(L);
  for (int l = 0; l < L; ++l) {
    for (int s = 0; s < S; ++s) {
      const LinkOptions& lo = options_.per_spine_fabric_link.empty()
                                  ? options_.fabric_link
                                  : options_.per_spine_fabric_link[s];
      auto up = std::make_unique<Link>(
          sim_, lo, absl::StrCat("leaf", l, "->spine", s), sim_->NextSeed());
      auto down = std::make_unique<Link>(
          sim_, lo, absl::StrCat("spine", s, "->leaf", l), sim_->NextSeed());
      up->Connect(spines_[s]->sink());
      down->Connect(leaves_[l]->sink());
      leaf_uplink_ports[l].push_back(leaves_[l]->AddPort(up.get()));
      const int spine_port = spines_[s]->AddPort(down.get());
      // Exact host routes (one hash lookup per packet however many leaves)
      // plus the leaf's /16 for addresses that match no host.
      for (int i = 0; i < H; ++i) {
        absl::Status st = spines_[s]->AddRoute(HostIp(l, i), 32, {spine_port});
        if (!st.ok()) return st;
      }
      absl::Status st = spines_[s]->AddRoute(LeafPrefix(l), 16, {spine_port});
      if (!st.ok()) return st;
      up_[l * S + s] = std::move(up);
      down_[l * S + s] = std::move(down);
    }
  }
  // Leaves: anything not local goes up, hashed over all spines.
  for (int l = 0; l < L; ++l) {
    absl::Status st = leaves_[l]->AddRoute(0, 0, leaf_uplink_ports[l]);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

int LeafSpine::HostIndex(const NetAddr& addr) const {
  if (addr.family != NetAddr::Family::kIpv4) return -1;
  const uint32_t ip = addr.ipv4();
  if ((ip >> 24) != 10 || ((ip >> 8) & 0xff) != 0) return -1;
  const int leaf = static_cast<int>((ip >> 16) & 0xff);
  const int index = static_cast<int>(ip & 0xff) - 1;
  if (leaf >= options_.num_leaves || index < 0 ||
      index >= options_.hosts_per_leaf) {
    return -1;
  }
  return leaf * options_.hosts_per_leaf + index;
}

void LeafSpine::SetSpineImpairment(int spine, Direction dir,
                                   const Impairment& impairment) {
  for (int l = 0; l < options_.num_leaves; ++l) {
    if (dir != Direction::kDown) up_link(l, spine).SetImpairment(impairment);
    if (dir != Direction::kUp) down_link(l, spine).SetImpairment(impairment);
  }
}

void LeafSpine::SetTopImpairment(int s, int link, Direction dir,
                                 const Impairment& impairment) {
  if (link < 0) {
    SetSpineImpairment(s, dir, impairment);
    return;
  }
  if (dir != Direction::kDown) up_link(link, s).SetImpairment(impairment);
  if (dir != Direction::kUp) down_link(link, s).SetImpairment(impairment);
}

void LeafSpine::ForEachNetworkLink(
    absl::FunctionRef<void(const Link&)> fn) const {
  for (const auto* v : {&host_down_, &up_, &down_}) {
    for (const auto& link : *v) fn(*link);
  }
}

uint64_t LeafSpine::TotalLinkDrops() const {
  uint64_t total = 0;
  for (const auto* v : {&host_up_, &host_down_, &up_, &down_}) {
    for (const auto& link : *v) total += link->counters().drops();
  }
  return total;
}

}  // namespace braid::sim

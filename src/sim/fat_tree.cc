#include "sim/fat_tree.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/simulator.h"

namespace braid::sim {

namespace {

uint32_t HostIp(int pod, int edge_in_pod, int index) {
  return (10u << 24) | (static_cast<uint32_t>(pod) << 16) |
         (static_cast<uint32_t>(edge_in_pod) << 8) |
         static_cast<uint32_t>(index + 1);
}

uint32_t EdgePrefix(int pod, int edge_in_pod) {  // a /24
  return (10u << 24) | (static_cast<uint32_t>(pod) << 16) |
         (static_cast<uint32_t>(edge_in_pod) << 8);
}

uint32_t PodPrefix(int pod) {  // a /16
  return (10u << 24) | (static_cast<uint32_t>(pod) << 16);
}

// The slower of a link's two ends, as a rate (0 = infinitely fast).
double Rate(const LinkOptions& lo) {
  return lo.rate_bps == 0 ? 1e30 : static_cast<double>(lo.rate_bps);
}

}  // namespace

absl::Status ValidateFatTreeOptions(const FatTreeOptions& options) {
  if (options.k < 2 || options.k > kMaxFatTreeK || options.k % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "k ", options.k, " is not an even number in 2..", kMaxFatTreeK));
  }
  if (options.hosts_per_edge < 0 ||
      options.hosts_per_edge > kMaxFatTreeHostsPerEdge) {
    return absl::InvalidArgumentError(
        absl::StrCat("hosts_per_edge ", options.hosts_per_edge, " not in 1..",
                     kMaxFatTreeHostsPerEdge, " (0: k/2)"));
  }
  return absl::OkStatus();
}

FatTree::FatTree(Simulator* sim, const FatTreeOptions& options)
    : sim_(sim),
      options_(options),
      hosts_per_edge_(options.hosts_per_edge > 0 ? options.hosts_per_edge
                                                 : options.k / 2) {}

absl::StatusOr<std::unique_ptr<FatTree>> FatTree::Create(
    Simulator* sim, const FatTreeOptions& options) {
  absl::Status valid = ValidateFatTreeOptions(options);
  if (!valid.ok()) return valid;
  std::unique_ptr<FatTree> net(new FatTree(sim, options));
  absl::Status s = net->Build();
  if (!s.ok()) return s;
  return net;
}

int FatTree::num_switches(Tier tier) const {
  switch (tier) {
    case Tier::kEdge:
    case Tier::kAggregation:
      return options_.k * half();
    case Tier::kCore:
      return half() * half();
  }
  return 0;
}

Switch& FatTree::switch_at(Tier tier, int index) {
  switch (tier) {
    case Tier::kEdge:
      return *edge_[index];
    case Tier::kAggregation:
      return *agg_[index];
    case Tier::kCore:
      break;
  }
  return *core_[index];
}

FatTree::Wire FatTree::MakeWire(const LinkOptions& lo, const std::string& lower,
                                const std::string& upper) {
  Wire w;
  w.up = std::make_unique<Link>(sim_, lo, absl::StrCat(lower, "->", upper),
                                sim_->NextSeed());
  w.down = std::make_unique<Link>(sim_, lo, absl::StrCat(upper, "->", lower),
                                  sim_->NextSeed());
  return w;
}

absl::Status FatTree::Build() {
  for (int i = 0; i < num_switches(Tier::kEdge); ++i) {
    edge_.push_back(std::make_unique<Switch>(sim_, absl::StrCat("edge", i),
                                             sim_->NextSeed()));
    agg_.push_back(std::make_unique<Switch>(sim_, absl::StrCat("agg", i),
                                            sim_->NextSeed()));
  }
  for (int c = 0; c < num_switches(Tier::kCore); ++c) {
    core_.push_back(std::make_unique<Switch>(sim_, absl::StrCat("core", c),
                                             sim_->NextSeed()));
  }
  absl::Status s = BuildHosts();
  if (s.ok()) s = BuildEdgeAggregation();
  if (s.ok()) s = BuildAggregationCore();
  return s;
}

// Hosts and their access links; each edge switch routes its hosts exactly.
absl::Status FatTree::BuildHosts() {
  const int edges = options_.k * half();
  for (int e = 0; e < edges; ++e) {
    const int pod = e / half();
    for (int i = 0; i < hosts_per_edge_; ++i) {
      const int h = e * hosts_per_edge_ + i;
      const uint32_t ip = HostIp(pod, e % half(), i);
      auto host =
          std::make_unique<Host>(sim_, NetAddr::Ipv4(ip, options_.host_port),
                                 options_.host, absl::StrCat("host", h));
      Wire w = MakeWire(options_.host_link, absl::StrCat("host", h),
                        absl::StrCat("edge", e));
      host->SetUplink(w.up.get());
      w.up->Connect(edge_[e]->sink());
      w.down->Connect(host->sink());
      absl::Status st =
          edge_[e]->AddRoute(ip, 32, {edge_[e]->AddPort(w.down.get())});
      if (!st.ok()) return st;
      hosts_.push_back(std::move(host));
      host_wires_.push_back(std::move(w));
    }
  }
  return absl::OkStatus();
}

// Inside each pod every edge switch connects to every aggregation switch:
// edges send everything not local up (ECMP over the pod's aggregation
// switches); aggregation switches route each edge's /24 down.
absl::Status FatTree::BuildEdgeAggregation() {
  const int edges = options_.k * half();
  edge_wires_.resize(static_cast<size_t>(edges) * half());
  for (int e = 0; e < edges; ++e) {
    const int pod = e / half();
    std::vector<int> uplinks;
    for (int j = 0; j < half(); ++j) {
      const int a = pod * half() + j;
      Wire w = MakeWire(options_.edge_link, absl::StrCat("edge", e),
                        absl::StrCat("agg", a));
      w.up->Connect(agg_[a]->sink());
      w.down->Connect(edge_[e]->sink());
      uplinks.push_back(edge_[e]->AddPort(w.up.get()));
      absl::Status st = agg_[a]->AddRoute(EdgePrefix(pod, e % half()), 24,
                                          {agg_[a]->AddPort(w.down.get())});
      if (!st.ok()) return st;
      edge_wires_[static_cast<size_t>(e) * half() + j] = std::move(w);
    }
    absl::Status st = edge_[e]->AddRoute(0, 0, uplinks);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

// Aggregation switch j of every pod connects to cores j*k/2 .. j*k/2+k/2-1:
// it sends other pods' traffic up (ECMP over those cores); each core routes
// every pod's /16 down to that pod's aggregation switch j.
absl::Status FatTree::BuildAggregationCore() {
  const int aggs = options_.k * half();
  core_wires_.resize(static_cast<size_t>(aggs) * half());
  for (int a = 0; a < aggs; ++a) {
    const int pod = a / half();
    const int j = a % half();
    std::vector<int> uplinks;
    for (int u = 0; u < half(); ++u) {
      const int c = j * half() + u;
      Wire w = MakeWire(options_.core_link, absl::StrCat("agg", a),
                        absl::StrCat("core", c));
      w.up->Connect(core_[c]->sink());
      w.down->Connect(agg_[a]->sink());
      uplinks.push_back(agg_[a]->AddPort(w.up.get()));
      absl::Status st = core_[c]->AddRoute(PodPrefix(pod), 16,
                                           {core_[c]->AddPort(w.down.get())});
      if (!st.ok()) return st;
      core_wires_[static_cast<size_t>(a) * half() + u] = std::move(w);
    }
    absl::Status st = agg_[a]->AddRoute(0, 0, uplinks);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

int FatTree::HostIndex(const NetAddr& addr) const {
  if (addr.family != NetAddr::Family::kIpv4) return -1;
  const uint32_t ip = addr.ipv4();
  if ((ip >> 24) != 10) return -1;
  const int pod = static_cast<int>((ip >> 16) & 0xff);
  const int edge = static_cast<int>((ip >> 8) & 0xff);
  const int index = static_cast<int>(ip & 0xff) - 1;
  if (pod >= options_.k || edge >= half() || index < 0 ||
      index >= hosts_per_edge_) {
    return -1;
  }
  return (pod * half() + edge) * hosts_per_edge_ + index;
}

double FatTree::BisectionFraction() const {
  // Per edge switch: what its hosts can send against what leaves it
  // upwards, and the same at the aggregation tier (k/2 edges' worth of
  // uplinks into k/2 core links per aggregation switch).
  const double hosts = hosts_per_edge_ * Rate(options_.host_link);
  const double edge_up = half() * Rate(options_.edge_link);
  const double agg_up = half() * Rate(options_.core_link);
  return std::min({1.0, edge_up / hosts, agg_up / hosts});
}

void FatTree::SetSwitchImpairment(Tier tier, int index,
                                  const Impairment& impairment) {
  auto set = [&](Wire& w) {
    w.up->SetImpairment(impairment);
    w.down->SetImpairment(impairment);
  };
  switch (tier) {
    case Tier::kEdge:
      for (int i = 0; i < hosts_per_edge_; ++i) {
        set(host_wires_[static_cast<size_t>(index) * hosts_per_edge_ + i]);
      }
      for (int j = 0; j < half(); ++j) {
        set(edge_wires_[static_cast<size_t>(index) * half() + j]);
      }
      return;
    case Tier::kAggregation: {
      const int pod = index / half();
      const int j = index % half();
      for (int e = pod * half(); e < (pod + 1) * half(); ++e) {
        set(edge_wires_[static_cast<size_t>(e) * half() + j]);
      }
      for (int u = 0; u < half(); ++u) {
        set(core_wires_[static_cast<size_t>(index) * half() + u]);
      }
      return;
    }
    case Tier::kCore:
      SetTopImpairment(index, -1, Direction::kBoth, impairment);
      return;
  }
}

void FatTree::SetTopImpairment(int c, int pod, Direction dir,
                               const Impairment& impairment) {
  const int first = pod < 0 ? 0 : pod;
  const int last = pod < 0 ? options_.k - 1 : pod;
  for (int p = first; p <= last; ++p) {
    const int agg = p * half() + c / half();
    Wire& w = core_wires_[static_cast<size_t>(agg) * half() + c % half()];
    if (dir != Direction::kDown) w.up->SetImpairment(impairment);
    if (dir != Direction::kUp) w.down->SetImpairment(impairment);
  }
}

void FatTree::ForEachNetworkLink(
    absl::FunctionRef<void(const Link&)> fn) const {
  for (const Wire& w : host_wires_) fn(*w.down);
  for (const auto* v : {&edge_wires_, &core_wires_}) {
    for (const Wire& w : *v) {
      fn(*w.up);
      fn(*w.down);
    }
  }
}

uint64_t FatTree::TotalLinkDrops() const {
  uint64_t total = 0;
  for (const auto* v : {&host_wires_, &edge_wires_, &core_wires_}) {
    for (const Wire& w : *v) {
      total += w.up->counters().drops() + w.down->counters().drops();
    }
  }
  return total;
}

}  // namespace braid::sim

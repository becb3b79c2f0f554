// Builds a three-tier k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods,
// each with k/2 edge and k/2 aggregation switches; (k/2)^2 core switches,
// core c wired to aggregation switch c / (k/2) of every pod. Every switch
// ECMP-hashes the 5-tuple over its uplinks (edge -> aggregation ->
// core), so a flow's path is fixed by its UDP source port at two tiers.
// k = 16 gives 1,024 hosts and full bisection bandwidth when every link has
// the same rate and hosts_per_edge = k/2; more hosts per edge oversubscribe
// the edge tier (hosts_per_edge : k/2).
//
// Host i is host i % H of edge (i / H) % (k/2) of pod i / (H * k/2), with
// IPv4 address 10.<pod>.<edge>.<index+1> and UDP port `host_port`.
#ifndef BRAID_SIM_FAT_TREE_H_
#define BRAID_SIM_FAT_TREE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "braid/address.h"
#include "sim/fabric.h"
#include "sim/host.h"
#include "sim/impairment.h"
#include "sim/link.h"
#include "sim/switch.h"

namespace braid::sim {

class Simulator;

// Size limits: k even in 2..kMaxFatTreeK; hosts per edge 1..254 (the last
// address byte).
inline constexpr int kMaxFatTreeK = 64;
inline constexpr int kMaxFatTreeHostsPerEdge = 254;

struct FatTreeOptions {
  int k = 4;                // even, 2..kMaxFatTreeK
  int hosts_per_edge = 0;   // 0: k/2 (no oversubscription)
  LinkOptions host_link{};  // host <-> edge, both directions
  LinkOptions edge_link{};  // edge <-> aggregation, both directions
  LinkOptions core_link{};  // aggregation <-> core, both directions
  HostOptions host{};
  uint16_t host_port = 7000;  // the braid UDP port every host listens on
};

// OK if FatTree::Create accepts `options`; otherwise InvalidArgument naming
// the field and its range.
absl::Status ValidateFatTreeOptions(const FatTreeOptions& options);

class FatTree : public Fabric {
 public:
  enum class Tier { kEdge, kAggregation, kCore };

  // Builds the fabric inside `sim` (which must outlive it). InvalidArgument
  // for out-of-range sizes.
  static absl::StatusOr<std::unique_ptr<FatTree>> Create(
      Simulator* sim, const FatTreeOptions& options);

  int k() const { return options_.k; }
  int hosts_per_edge() const { return hosts_per_edge_; }
  int num_hosts() const override { return static_cast<int>(hosts_.size()); }
  int num_pods() const { return options_.k; }
  // Switches per tier: k * k/2 edge, k * k/2 aggregation, (k/2)^2 core.
  int num_switches(Tier tier) const;
  Host& host(int i) override { return *hosts_[i]; }
  // Switch `index` of `tier`: edge and aggregation switches are numbered
  // pod * k/2 + position in the pod.
  Switch& switch_at(Tier tier, int index);
  int PodOf(int host) const { return host / (hosts_per_edge_ * half()); }
  // The edge switch (tier-wide index) host i hangs off.
  int EdgeOf(int host) const { return host / hosts_per_edge_; }
  // Index of the host with this IPv4 address, or -1.
  int HostIndex(const NetAddr& addr) const override;
  // Packets that entered core switch c.
  uint64_t core_packets(int c) const { return core_[c]->counters().rx_packets; }
  // The fraction of the hosts' aggregate rate the core tier carries when
  // every host sends to another pod: 1 for hosts_per_edge = k/2 and equal
  // link rates, less when oversubscribed or when upper links are slower.
  double BisectionFraction() const;
  // Applies `impairment` to both directions of every link of switch `index`
  // of `tier` (blackhole = the switch fails; a default Impairment restores
  // it). Links towards hosts are included for an edge switch.
  void SetSwitchImpairment(Tier tier, int index, const Impairment& impairment);
  // Sum of drops (all causes) over every link.
  uint64_t TotalLinkDrops() const override;

  // Fabric: the top tier is the core switches; a top link is a core's link
  // to one pod (to that pod's aggregation switch c / (k/2)); up = towards
  // the core.
  int num_top_switches() const override { return num_switches(Tier::kCore); }
  int num_top_links() const override { return options_.k; }
  uint64_t top_packets(int c) const override { return core_packets(c); }
  void SetTopImpairment(int c, int pod, Direction dir,
                        const Impairment& impairment) override;
  void ForEachNetworkLink(
      absl::FunctionRef<void(const Link&)> fn) const override;
  const FatTreeOptions& options() const { return options_; }

 private:
  // One direction pair of a link between two switches (or host and edge).
  struct Wire {
    std::unique_ptr<Link> up;    // towards the core
    std::unique_ptr<Link> down;  // towards the hosts
  };

  FatTree(Simulator* sim, const FatTreeOptions& options);
  int half() const { return options_.k / 2; }
  absl::Status Build();
  absl::Status BuildHosts();
  absl::Status BuildEdgeAggregation();
  absl::Status BuildAggregationCore();
  Wire MakeWire(const LinkOptions& lo, const std::string& lower,
                const std::string& upper);

  Simulator* sim_;
  FatTreeOptions options_;
  int hosts_per_edge_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::unique_ptr<Switch>> edge_, agg_, core_;
  std::vector<Wire> host_wires_;  // [host]
  std::vector<Wire> edge_wires_;  // [edge * k/2 + agg position in the pod]
  std::vector<Wire> core_wires_;  // [agg * k/2 + uplink]
};

}  // namespace braid::sim

#endif  // BRAID_SIM_FAT_TREE_H_

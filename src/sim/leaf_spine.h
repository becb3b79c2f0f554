// Builds a two-tier leaf-spine (Clos) fabric: hosts hang off leaves, every
// leaf connects to every spine, leaves ECMP-hash inter-leaf traffic over all
// spines. Host i sits on leaf i / hosts_per_leaf with IPv4 address
// 10.<leaf>.0.<index+1> and UDP port `host_port`.
#ifndef BRAID_SIM_LEAF_SPINE_H_
#define BRAID_SIM_LEAF_SPINE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/fabric.h"
#include "sim/host.h"
#include "sim/impairment.h"
#include "sim/link.h"
#include "sim/switch.h"

namespace braid::sim {

class Simulator;

// Size limits of the fabric (host addresses are 10.<leaf>.0.<index+1>).
inline constexpr int kMaxLeaves = 256;
inline constexpr int kMaxHostsPerLeaf = 254;
inline constexpr int kMaxSpines = 4096;

struct LeafSpineOptions {
  int num_leaves = 2;      // 1..kMaxLeaves
  int hosts_per_leaf = 4;  // 1..kMaxHostsPerLeaf
  int num_spines = 4;      // 1..kMaxSpines
  // Both directions of every host<->leaf link.
  LinkOptions host_link{};
  // Both directions of every leaf<->spine link, unless overridden per spine.
  LinkOptions fabric_link{};
  // If non-empty: exactly num_spines entries; entry s replaces fabric_link
  // for all links touching spine s (e.g. to spread path delays).
  std::vector<LinkOptions> per_spine_fabric_link{};
  HostOptions host{};
  // The braid UDP port every host listens on.
  uint16_t host_port = 7000;
};

// OK if LeafSpine::Create accepts `options`; otherwise InvalidArgument
// naming the field and its range. Lets a caller refuse a configuration
// before building anything.
absl::Status ValidateLeafSpineOptions(const LeafSpineOptions& options);

class LeafSpine : public Fabric {
 public:
  // kUp: leaf -> spine; kDown: spine -> leaf.
  using Direction = Fabric::Direction;

  // Builds the fabric inside `sim` (which must outlive it). Returns
  // InvalidArgument for out-of-range sizes.
  static absl::StatusOr<std::unique_ptr<LeafSpine>> Create(
      Simulator* sim, const LeafSpineOptions& options);

  int num_hosts() const override { return static_cast<int>(hosts_.size()); }
  int num_leaves() const { return options_.num_leaves; }
  int num_spines() const { return options_.num_spines; }
  Host& host(int i) override { return *hosts_[i]; }
  Switch& leaf(int l) { return *leaves_[l]; }
  Switch& spine(int s) { return *spines_[s]; }
  // The leaf host i is attached to.
  int LeafOf(int host) const { return host / options_.hosts_per_leaf; }
  // Index of the host with this IPv4 address, or -1.
  int HostIndex(const NetAddr& addr) const override;

  // host -> leaf and leaf -> host links of host i.
  Link& host_uplink(int host) { return *host_up_[host]; }
  Link& host_downlink(int host) { return *host_down_[host]; }
  // leaf -> spine and spine -> leaf links between leaf l and spine s.
  Link& up_link(int leaf, int spine) {
    return *up_[leaf * options_.num_spines + spine];
  }
  Link& down_link(int leaf, int spine) {
    return *down_[leaf * options_.num_spines + spine];
  }

  // Applies `impairment` to every link of spine s in direction `dir`.
  void SetSpineImpairment(int spine, Direction dir,
                          const Impairment& impairment);
  // Packets that entered spine s.
  uint64_t spine_packets(int spine) const {
    return spines_[spine]->counters().rx_packets;
  }
  // Sum of drops (all causes) over every link in the fabric.
  uint64_t TotalLinkDrops() const override;

  // Fabric: the top tier is the spines; a top link is a spine's link to
  // one leaf.
  int num_top_switches() const override { return options_.num_spines; }
  int num_top_links() const override { return options_.num_leaves; }
  uint64_t top_packets(int s) const override { return spine_packets(s); }
  void SetTopImpairment(int s, int link, Direction dir,
                        const Impairment& impairment) override;
  void ForEachNetworkLink(
      absl::FunctionRef<void(const Link&)> fn) const override;

  const LeafSpineOptions& options() const { return options_; }

 private:
  LeafSpine(Simulator* sim, const LeafSpineOptions& options)
      : sim_(sim), options_(options) {}
  absl::Status Build();

  Simulator* sim_;
  LeafSpineOptions options_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::unique_ptr<Switch>> leaves_;
  std::vector<std::unique_ptr<Switch>> spines_;
  std::vector<std::unique_ptr<Link>> host_up_, host_down_, up_, down_;
};

}  // namespace braid::sim

#endif  // BRAID_SIM_LEAF_SPINE_H_

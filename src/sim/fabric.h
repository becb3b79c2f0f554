// What a scenario needs of a simulated topology, whatever its shape: its
// hosts, the switches of its top tier (the spines of a leaf-spine, the core
// switches of a fat-tree) for spread counters and for impairing or failing
// them, and its links for queue statistics.
#ifndef BRAID_SIM_FABRIC_H_
#define BRAID_SIM_FABRIC_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "braid/address.h"
#include "sim/host.h"
#include "sim/impairment.h"
#include "sim/link.h"

namespace braid::sim {

class Fabric {
 public:
  enum class Direction {
    kUp,    // towards the top switch
    kDown,  // away from it
    kBoth,
  };

  virtual ~Fabric() = default;

  virtual int num_hosts() const = 0;
  virtual Host& host(int i) = 0;
  // Index of the host with this address, or -1.
  virtual int HostIndex(const NetAddr& addr) const = 0;

  // Switches of the top tier, and how many lower groups (leaves, pods) each
  // one has a link to.
  virtual int num_top_switches() const = 0;
  virtual int num_top_links() const = 0;
  // Packets that entered top switch s.
  virtual uint64_t top_packets(int s) const = 0;
  // Applies `impairment` to the links of top switch s in `dir`: all of them
  // (link < 0), or only the one to lower group `link` (a leaf, a pod).
  // A blackhole in both directions is the switch's or the link's failure;
  // a default Impairment restores it.
  virtual void SetTopImpairment(int s, int link, Direction dir,
                                const Impairment& impairment) = 0;

  // Sum of drops (all causes) over every link.
  virtual uint64_t TotalLinkDrops() const = 0;
  // Calls `fn` on every link that queues inside the network: every link
  // but the hosts' own uplinks (their transmit queues).
  virtual void ForEachNetworkLink(
      absl::FunctionRef<void(const Link&)> fn) const = 0;
};

}  // namespace braid::sim

#endif  // BRAID_SIM_FABRIC_H_

// An output-queued IPv4 switch. Routes on the destination address (exact
// host routes first, then longest prefix); with several equal-cost next hops
// it hashes the UDP 5-tuple with a per-switch seed, so a flow always takes
// one port and a new UDP source port usually takes another. Forwarding is
// instantaneous; queueing happens on the egress Link.
#ifndef BRAID_SIM_SWITCH_H_
#define BRAID_SIM_SWITCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "sim/link.h"
#include "sim/packet.h"

namespace braid::sim {

class Simulator;

struct SwitchCounters {
  uint64_t rx_packets = 0;  // packets that entered (traversed) the switch
  uint64_t rx_bytes = 0;    // their payload bytes
  uint64_t drops_no_route = 0;
};

class Switch {
 public:
  // `hash_seed` perturbs the ECMP hash (switches with different seeds split
  // flows differently, as real fabrics do to avoid polarisation).
  Switch(Simulator* sim, std::string name, uint64_t hash_seed);
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  // Adds an egress port sending into `egress` (not owned). Returns its index.
  int AddPort(Link* egress);

  // Routes destinations matching prefix/len to one of `ports` (ECMP when
  // more than one). len 32 routes are exact host routes; len 0 is the
  // default route. Replaces an existing route for the same prefix.
  absl::Status AddRoute(uint32_t prefix, int prefix_len,
                        const std::vector<int>& ports);

  // The sink ingress links connect to.
  PacketSink sink() { return PacketSink{&Switch::ReceiveThunk, this}; }

  // Forwards `p` (taking ownership) or drops it if no route matches.
  void Receive(Packet* p);

  // The egress port `p` would take, or -1 when no route matches.
  int SelectPort(const Packet& p) const;

  // The 5-tuple hash (src ip, dst ip, UDP, src port, dst port) under `seed`.
  static uint64_t FlowHash(const Packet& p, uint64_t seed);

  int num_ports() const { return static_cast<int>(ports_.size()); }
  Link* port_link(int port) const { return ports_[port]; }
  const SwitchCounters& counters() const { return counters_; }
  const std::string& name() const { return name_; }

 private:
  // A route's next hops: `count` entries of group_ports_ / group_links_
  // from `first`.
  struct Group {
    uint32_t first = 0;
    uint32_t count = 0;
  };
  struct PrefixRoute {
    uint32_t prefix;
    uint32_t mask;
    Group group;
  };
  static void ReceiveThunk(void* self, Packet* p) {
    static_cast<Switch*>(self)->Receive(p);
  }
  // The route's group for `dst_ip`, or null when no route matches.
  const Group* Lookup(uint32_t dst_ip) const;
  // The index into group_ports_ / group_links_ of the hop `p` takes.
  uint32_t PickHop(const Group& group, const Packet& p) const;

  // Per-packet state first (a large fabric runs with its switches mostly
  // out of cache).
  Simulator* sim_;
  uint64_t hash_seed_;
  SwitchCounters counters_;
  std::vector<PrefixRoute> prefix_routes_;  // longest prefix first
  absl::flat_hash_map<uint32_t, Group> host_routes_;
  std::vector<Link*> group_links_;  // ports_[group_ports_[i]]
  std::vector<int> group_ports_;
  std::vector<Link*> ports_;
  std::string name_;
};

}  // namespace braid::sim

#endif  // BRAID_SIM_SWITCH_H_

// A simulated scenario: a leaf-spine or fat-tree fabric, a braid EndpointCore
// on every host (through the sim backend, unchanged), a traffic pattern, timed
// impairments — and a checker that asserts exactly-once, byte-exact delivery
// and the completion of every send. Used by braid-sim, tests/sim/scenarios
// and bench/sim_benchmark.
#ifndef BRAID_SIM_SCENARIO_SCENARIO_H_
#define BRAID_SIM_SCENARIO_SCENARIO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "braid/options.h"
#include "braid/time.h"
#include "sim/fabric.h"
#include "sim/fat_tree.h"
#include "sim/impairment.h"
#include "sim/leaf_spine.h"

namespace braid::sim {

enum class Traffic : uint8_t {
  kPairs,        // host i sends to host (i + hosts/2) % hosts (across leaves)
  kPermutation,  // a seeded random derangement
  kIncast,       // `incast` senders (hosts 1..incast) all send to host 0
  // All-to-all (shuffle): host i sends its messages to every other host in
  // turn, message m to host (i + 1 + m % (hosts - 1)) % hosts.
  kAllToAll,
  // Incast with background load: hosts 1..incast send to host 0 while the
  // other hosts (incast+1..) run a random permutation among themselves.
  kMix,
};

enum class TopologyKind : uint8_t {
  kLeafSpine,  // ScenarioConfig::topology
  kFatTree,    // ScenarioConfig::fat_tree
};

// What the simulated packets carry.
enum class PayloadMode : uint8_t {
  // Every byte of every datagram: the receiver checks each message byte for
  // byte against the pattern it was sent with (byte_mismatches).
  kBytes,
  // The datagrams' lengths, headers and the first bytes of each payload
  // (so every message's 16-byte header arrives), not the rest: links queue,
  // serialise and checksum packets of the same sizes, the protocol core
  // runs unchanged, and the receiver checks each message's identity and
  // length but not its content. For scale runs: no per-byte work.
  kChecksum,
};

struct SizeDist {
  uint32_t min = 65536;  // fixed when min == max
  uint32_t max = 65536;
};

// An impairment applied to top switch `spine` (a spine of a leaf-spine, a
// core switch of a fat-tree; all of them if -1) in `dir` from `start` until
// `stop`: to all its links, or with `link` >= 0 only to its link to leaf
// (pod) `link`. A blackhole in both directions is a failed switch or link.
struct TimedImpairment {
  int spine = 0;
  int link = -1;
  sim::Fabric::Direction dir = sim::Fabric::Direction::kBoth;
  sim::Impairment impairment;
  TimeNs start = TimeNs::Zero();
  TimeNs stop = TimeNs::Infinite();
};

// Host `host` loses all protocol state at `at` and comes back at once with a
// new incarnation.
struct Restart {
  int host = 0;
  TimeNs at;
};

struct ScenarioConfig {
  TopologyKind topology_kind = TopologyKind::kLeafSpine;
  sim::LeafSpineOptions topology;
  sim::FatTreeOptions fat_tree;
  ProtocolOptions protocol;
  uint32_t mtu_payload = 4096;  // largest datagram
  Traffic traffic = Traffic::kPairs;
  int incast = 8;
  SizeDist sizes;
  uint32_t messages_per_sender = 1000;
  uint32_t window = 16;  // messages a sender keeps outstanding
  uint16_t streams = 0;  // >0: messages cycle over ordered streams 1..n
  uint64_t seed = 1;
  PayloadMode payload = PayloadMode::kBytes;
  std::vector<TimedImpairment> impairments;
  std::vector<Restart> restarts;
  DurationNs time_limit = DurationNs::Seconds(2);    // simulated
  DurationNs goodput_bin = DurationNs::Micros(100);  // timeline resolution
};

struct ScenarioResult {
  uint64_t messages_sent = 0;    // accepted by Send
  uint64_t messages_done = 0;    // kSendDone
  uint64_t messages_failed = 0;  // kSendFailed
  // Sent by a host that restarted before their completion (--restart): the
  // application that could have seen one is gone.
  uint64_t messages_gone_with_restart = 0;
  uint64_t messages_delivered = 0;  // distinct messages delivered
  uint64_t duplicates_delivered = 0;
  uint64_t byte_mismatches = 0;
  uint64_t order_violations = 0;  // ordered streams out of order
  // Done as delivered but never delivered, or (in a run that did not time
  // out) never completed: a broken invariant.
  uint64_t lost_without_error = 0;
  // Sends without a completion when time_limit stopped the run: undecided,
  // not lost (the run timed out; messages in flight then are expected).
  uint64_t pending_at_limit = 0;
  uint64_t bytes_delivered = 0;
  double goodput_gbps = 0;                // delivered bytes / active time
  DurationNs mct_p50, mct_p99, mct_p999;  // message completion time
  uint64_t retransmits = 0;
  uint64_t spurious_retransmits = 0;
  uint64_t rtos = 0;
  uint64_t retransmits_path_gap = 0;
  uint64_t retransmits_time = 0;
  uint64_t path_penalties = 0;
  uint64_t path_recycles = 0;
  uint64_t malformed_dropped = 0;
  uint64_t link_drops = 0;
  // Congestion in the network (host downlinks and fabric links; not the
  // hosts' own transmit queues): tail drops, and the largest queue reached.
  uint64_t queue_drops = 0;
  uint64_t max_queue_bytes = 0;
  std::vector<uint64_t> spine_packets;  // per top switch (spine, core)
  TimeNs first_send, last_delivery;
  DurationNs sim_time;
  double wall_seconds = 0;   // the whole run: setup, simulation, checks
  double cpu_seconds = 0;    // this thread's CPU time over the same span
  uint64_t sim_packets = 0;  // packets handed to hosts' uplinks
  uint64_t sim_events = 0;   // simulator events run
  bool timed_out = false;    // time_limit hit with sends pending
  // Non-empty if the scenario could not start (e.g. the topology refused
  // its options): nothing ran.
  std::string setup_error;
  // Bytes delivered per goodput_bin since time 0.
  std::vector<uint64_t> timeline;
  std::vector<std::string> failure_causes;  // one entry per distinct cause

  // True if every invariant held: nothing duplicated, corrupted, reordered
  // on a stream, or lost without an error completion.
  bool Clean() const {
    return duplicates_delivered == 0 && byte_mismatches == 0 &&
           order_violations == 0 && lost_without_error == 0;
  }
};

// The sizes a config's topology will have, without building it.
struct ScenarioShape {
  int hosts = 0;
  int top_switches = 0;  // spines, or core switches
  int top_links = 0;     // links of one top switch: leaves, or pods
};
ScenarioShape ShapeOf(const ScenarioConfig& cfg);

// Runs one scenario to completion (every send completed) or time_limit.
ScenarioResult RunScenario(const ScenarioConfig& cfg);

// Goodput (Gbit/s) of the timeline between [from, to).
double TimelineGbps(const ScenarioResult& r, DurationNs bin, TimeNs from,
                    TimeNs to);

}  // namespace braid::sim

#endif  // BRAID_SIM_SCENARIO_SCENARIO_H_

// Shared by the scenario tests: the protocol settings and workload a case
// starts from, before it picks its topology, traffic and impairments.
#ifndef BRAID_TESTS_SIM_SCENARIOS_SCENARIO_BASE_H_
#define BRAID_TESTS_SIM_SCENARIOS_SCENARIO_BASE_H_

#include <cstdint>

#include "braid/time.h"
#include "sim/scenario/scenario.h"

namespace braid::sim {

// braid-sim's timeouts (its hosts have no jitter, so min_rto can be tight),
// 64 KiB messages, 16 outstanding per sender, `messages_per_sender` each,
// seeded `seed`. The topology is ScenarioConfig's default.
inline ScenarioConfig ScenarioBase(uint64_t seed,
                                   uint32_t messages_per_sender) {
  ScenarioConfig c;
  c.protocol.peer_timeout = DurationNs::Millis(50);
  c.protocol.min_rto = DurationNs::Micros(200);
  c.sizes = {65536, 65536};
  c.messages_per_sender = messages_per_sender;
  c.window = 16;
  c.seed = seed;
  return c;
}

}  // namespace braid::sim

#endif  // BRAID_TESTS_SIM_SCENARIOS_SCENARIO_BASE_H_

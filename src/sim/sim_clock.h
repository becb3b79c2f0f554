// The simulator's virtual time as a braid::Clock, for what reads a clock
// above the protocol core (the drive loop, the test impairment backend)
// when it runs inside the simulator.
#ifndef BRAID_SIM_SIM_CLOCK_H_
#define BRAID_SIM_SIM_CLOCK_H_

#include "base/clock.h"
#include "sim/simulator.h"

namespace braid::sim {

class SimClock final : public Clock {
 public:
  // Reads `sim` (not owned; must outlive the clock).
  explicit SimClock(const Simulator* sim) : sim_(sim) {}
  TimeNs Now() override { return sim_->now(); }

 private:
  const Simulator* sim_;
};

}  // namespace braid::sim

#endif  // BRAID_SIM_SIM_CLOCK_H_

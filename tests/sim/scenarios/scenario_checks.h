// Shared by the scenario tests: a one-line summary of a run for failure
// messages, and the invariants every scenario must keep.
#ifndef BRAID_TESTS_SIM_SCENARIOS_SCENARIO_CHECKS_H_
#define BRAID_TESTS_SIM_SCENARIOS_SCENARIO_CHECKS_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/scenario/scenario.h"

namespace braid::sim {

// The seed and the counters a failing case is judged by.
inline std::string Describe(const ScenarioConfig& c, const ScenarioResult& r) {
  return absl::StrCat(
      "seed=", c.seed, " sent=", r.messages_sent, " done=", r.messages_done,
      " failed=", r.messages_failed, " delivered=", r.messages_delivered,
      " dup=", r.duplicates_delivered, " bad=", r.byte_mismatches,
      " lost=", r.lost_without_error, " retx=", r.retransmits, " rtos=", r.rtos,
      " recycles=", r.path_recycles, " gbps=", r.goodput_gbps,
      " timed_out=", r.timed_out, " setup_error=", r.setup_error);
}

// Every send completed, nothing duplicated/corrupted/lost silently; and when
// `all_succeed`, nothing failed either.
inline void ExpectClean(const ScenarioConfig& c, const ScenarioResult& r,
                        bool all_succeed = true) {
  SCOPED_TRACE(Describe(c, r));
  EXPECT_EQ(r.duplicates_delivered, 0u);
  EXPECT_EQ(r.byte_mismatches, 0u);
  EXPECT_EQ(r.order_violations, 0u);
  EXPECT_EQ(r.lost_without_error, 0u);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.setup_error, "");
  EXPECT_EQ(r.messages_done + r.messages_failed + r.messages_gone_with_restart,
            r.messages_sent);
  if (all_succeed) {
    EXPECT_EQ(r.messages_failed, 0u);
    EXPECT_EQ(r.messages_delivered, r.messages_sent);
  }
}

}  // namespace braid::sim

#endif  // BRAID_TESTS_SIM_SCENARIOS_SCENARIO_CHECKS_H_

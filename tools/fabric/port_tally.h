// Per-source-port bookkeeping of the fabric probe's receiver: what arrived,
// what is missing, duplicated or out of order, and the one-way delays.
#ifndef BRAID_TOOLS_FABRIC_PORT_TALLY_H_
#define BRAID_TOOLS_FABRIC_PORT_TALLY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "braid/time.h"

namespace braid::fabric {

// The summary of one source port, as printed by the probe.
struct PortReport {
  uint16_t sport = 0;
  uint64_t expected = 0;      // datagrams the sender said it would send
  uint64_t received = 0;      // distinct, in-range datagrams
  uint64_t lost = 0;          // expected - received
  uint64_t duplicates = 0;    // a sequence number seen again
  uint64_t reordered = 0;     // arrived after a higher sequence number
  uint64_t out_of_range = 0;  // seq >= expected
  uint64_t ce = 0;            // arrived with ECN CE
  uint64_t bytes = 0;         // UDP payload bytes of received datagrams
  DurationNs delay_min, delay_p50, delay_p99, delay_max;  // one-way
  double rate_mbps = 0;  // payload bits over first..last arrival
};

// Tracks one source port. Memory is allocated once, in the constructor.
class PortTally {
 public:
  // `expected`: the sender sends sequence numbers 0..expected-1.
  explicit PortTally(uint32_t expected);

  // Records one datagram that passed validation. Duplicates and out-of-range
  // sequence numbers are counted, not recorded.
  void Record(uint32_t seq, size_t bytes, TimeNs sent, TimeNs arrived, bool ce);

  // True once every expected sequence number has arrived.
  bool complete() const { return received_ == expected_; }
  uint64_t received() const { return received_; }

  // Summarises what arrived; `sport` is copied into the report.
  PortReport Report(uint16_t sport) const;

 private:
  uint32_t expected_;
  std::vector<bool> seen_;
  std::vector<int64_t> delays_ns_;
  uint64_t received_ = 0;
  uint64_t duplicates_ = 0;
  uint64_t reordered_ = 0;
  uint64_t out_of_range_ = 0;
  uint64_t ce_ = 0;
  uint64_t bytes_ = 0;
  int64_t highest_seq_ = -1;
  TimeNs first_arrival_;
  TimeNs last_arrival_;
};

}  // namespace braid::fabric

#endif  // BRAID_TOOLS_FABRIC_PORT_TALLY_H_

// Per-link-direction impairments. Plain data; a Link applies the struct it
// holds to every packet it accepts, and it may be replaced at any time.
#ifndef BRAID_SIM_IMPAIRMENT_H_
#define BRAID_SIM_IMPAIRMENT_H_

#include <cstdint>

#include "braid/time.h"

namespace braid::sim {

struct Impairment {
  // Independent random loss probability per packet.
  double loss = 0.0;

  // Gilbert-Elliott two-state burst loss; active when ge_p_good_to_bad > 0.
  // Before each packet the state moves good->bad with ge_p_good_to_bad and
  // bad->good with ge_p_bad_to_good; the packet is then lost with
  // ge_loss_in_bad (bad state) or ge_loss_in_good (good state). With
  // ge_loss_in_bad = 1 the mean burst length is 1 / ge_p_bad_to_good.
  double ge_p_good_to_bad = 0.0;
  double ge_p_bad_to_good = 0.5;
  double ge_loss_in_bad = 1.0;
  double ge_loss_in_good = 0.0;

  // Probability that a packet is sent twice (the copy queues behind it).
  double duplicate = 0.0;

  // Probability that one random payload bit is flipped. The receiving host's
  // NIC verifies the checksum and drops such packets, unless
  // deliver_corrupted is set: then the link re-stamps the checksum (models
  // corruption the checksum misses) so the receiver's parser sees it.
  double corrupt = 0.0;
  bool deliver_corrupted = false;

  // ECN: a packet with ECT is marked CE when the queue ahead of it holds at
  // least this many bytes. 0 disables marking.
  uint32_t ecn_threshold_bytes = 0;

  // Drop everything (a failed or misprogrammed path).
  bool blackhole = false;

  // Added to the link's propagation delay. FIFO order is preserved when it
  // shrinks (packets never overtake each other on one link).
  DurationNs extra_delay = DurationNs::Zero();

  // Reordering inside the link (a LAG member or a switch that sprays per
  // packet): with this probability a packet is held `reorder_delay` longer,
  // and packets behind it overtake it. The only way packets of one link
  // arrive out of order.
  double reorder = 0.0;
  DurationNs reorder_delay = DurationNs::Micros(10);
};

}  // namespace braid::sim

#endif  // BRAID_SIM_IMPAIRMENT_H_

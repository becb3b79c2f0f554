// Test helper: replays a SenderOutcome as the per-packet calls it stands
// for, so a model that checks packets one at a time can read it.
#ifndef BRAID_TESTS_RETRANSMIT_OUTCOME_REPLAY_H_
#define BRAID_TESTS_RETRANSMIT_OUTCOME_REPLAY_H_

#include "retransmit/sender_outcome.h"

namespace braid::retransmit {

// Calls, in the outcome's order: v.OnRttSample(path, rtt) for the sample;
// v.OnPacketAcked(psn, tag, bytes, path, was_retransmitted) for every
// acked packet (runs expanded); v.OnPacketLost(psn, tag, bytes, path,
// cause) for every loss; v.OnSpuriousRetransmit(psn) for every spurious
// re-send. (spurious_rto is left to the caller.)
template <class V>
void ReplayOutcome(const SenderOutcome& o, V& v) {
  if (o.has_rtt_sample) v.OnRttSample(o.rtt_sample.path, o.rtt_sample.rtt);
  for (const AckedPackets& a : o.acked) {
    const absl::Span<const uint64_t> tags = o.Tags(a);
    for (uint32_t i = 0; i < a.count; ++i) {
      v.OnPacketAcked(a.first + i, tags[i], a.bytes, a.path,
                      a.was_retransmitted);
    }
  }
  for (const LostPacket& l : o.lost) {
    v.OnPacketLost(l.psn, l.tag, l.bytes, l.path, l.cause);
  }
  for (wire::Psn p : o.spurious_retransmits) v.OnSpuriousRetransmit(p);
}

}  // namespace braid::retransmit

#endif  // BRAID_TESTS_RETRANSMIT_OUTCOME_REPLAY_H_

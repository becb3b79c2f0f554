// The scenario application's message contents: a 16-byte header naming the
// message (sender, id, length, a magic number), then a pattern derived from
// (seed, sender, id, offset) that the receiver checks byte for byte in
// byte-exact runs. The pattern is built and checked eight bytes at a time.
#ifndef BRAID_SIM_SCENARIO_PAYLOAD_H_
#define BRAID_SIM_SCENARIO_PAYLOAD_H_

#include <cstdint>

#include "absl/types/span.h"

namespace braid::sim {

inline constexpr uint32_t kMessageHeaderBytes = 16;

struct MessageName {
  uint32_t sender = 0;
  uint32_t id = 0;
  uint32_t len = 0;  // the whole message, header included
};

// Writes `name`'s header into b[0, 16). b.size() must be >= 16.
void WriteMessageHeader(absl::Span<uint8_t> b, const MessageName& name);

// Reads the header of message `b`. False if `b` is shorter than a header or
// its magic number is wrong (the other fields are the caller's to check).
bool ReadMessageHeader(absl::Span<const uint8_t> b, MessageName* name);

// Fills b[16, size) with the pattern of message (sender, id) under `seed`.
void FillPattern(absl::Span<uint8_t> b, uint64_t seed, uint32_t sender,
                 uint32_t id);

// True if b[16, size) holds exactly what FillPattern writes.
bool PatternMatches(absl::Span<const uint8_t> b, uint64_t seed, uint32_t sender,
                    uint32_t id);

}  // namespace braid::sim

#endif  // BRAID_SIM_SCENARIO_PAYLOAD_H_

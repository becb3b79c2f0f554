// The datagram format of braid-fabric-probe: a fixed header followed by a
// payload pattern derived from the header, so the receiver can verify every
// byte without knowing what the sender sent.
#ifndef BRAID_TOOLS_FABRIC_PROBE_PACKET_H_
#define BRAID_TOOLS_FABRIC_PROBE_PACKET_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "braid/time.h"

namespace braid::fabric {

// Fields of one probe datagram. Serialized little-endian.
struct ProbeHeader {
  uint32_t run_id = 0;      // random per client run; stale runs are ignored
  uint16_t port_index = 0;  // which of the client's sockets sent it
  uint32_t seq = 0;         // per-socket sequence number, from 0
  TimeNs send_time;         // CLOCK_MONOTONIC (shared by all namespaces)
};

inline constexpr uint32_t kProbeMagic = 0x52504642;  // "BFPR"
inline constexpr size_t kProbeHeaderSize = 28;
inline constexpr size_t kProbeMaxSize = 65000;

// Why a datagram was rejected.
enum class ProbeVerdict { kOk, kTooShort, kBadMagic, kBadLength, kBadChecksum };

// Writes header + pattern into `out` (its size is the datagram size, at least
// kProbeHeaderSize). Returns false if `out` has an invalid size.
bool EncodeProbe(const ProbeHeader& header, absl::Span<uint8_t> out);

// Validates `datagram` (magic, length, checksum over every byte) and fills
// `header` when the verdict is kOk. Never trusts the input.
ProbeVerdict DecodeProbe(absl::Span<const uint8_t> datagram,
                         ProbeHeader* header);

// Human name of a verdict, for reports.
const char* ProbeVerdictName(ProbeVerdict v);

}  // namespace braid::fabric

#endif  // BRAID_TOOLS_FABRIC_PROBE_PACKET_H_

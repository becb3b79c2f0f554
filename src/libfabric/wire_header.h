// The 24-byte header the provider puts in front of every message it sends
// over braid (sent as SendOptions::prefix, so the payload is not copied
// behind it first). It carries what libfabric needs beyond the payload:
// whether the message is tagged, its tag, and the remote CQ data.
//
//   byte 0      version (1)
//   byte 1      kind: 1 = FI_MSG, 2 = FI_TAGGED
//   byte 2      flags: bit 0 = carries remote CQ data
//   bytes 3..7  zero
//   bytes 8..15 tag, little endian (0 for FI_MSG)
//   bytes 16..23 remote CQ data, little endian (0 without the flag)
//
// A message from the network may be forged: DecodeHeader checks every byte
// it reads and says why it refuses one.
#ifndef BRAID_LIBFABRIC_WIRE_HEADER_H_
#define BRAID_LIBFABRIC_WIRE_HEADER_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace braid::libfabric {

inline constexpr size_t kHeaderBytes = 24;
inline constexpr uint8_t kHeaderVersion = 1;

enum class MsgKind : uint8_t { kMsg = 1, kTagged = 2 };

struct MsgHeader {
  MsgKind kind = MsgKind::kMsg;
  bool has_data = false;
  uint64_t tag = 0;
  uint64_t data = 0;
};

// Why a received message was dropped (each has a counter).
enum class HeaderError : uint8_t {
  kNone = 0,
  kShort,       // fewer than kHeaderBytes bytes
  kBadVersion,  // byte 0 is not kHeaderVersion
  kBadKind,     // byte 1 is neither kind
  kBadFlags,    // unknown flag bits or non-zero reserved bytes
};
inline constexpr size_t kHeaderErrorCount = 5;
const char* HeaderErrorName(HeaderError e);

// Writes `h` as the 24 wire bytes.
std::array<uint8_t, kHeaderBytes> EncodeHeader(const MsgHeader& h);

// Reads the header at the front of `msg` into *out. Returns kNone, or the
// reason the message must be dropped (then *out is unspecified).
HeaderError DecodeHeader(absl::Span<const uint8_t> msg, MsgHeader* out);

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_WIRE_HEADER_H_

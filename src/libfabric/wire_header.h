// The 24-byte header the provider puts in front of every message it sends
// over braid (sent as SendOptions::prefix, so the payload is not copied
// behind it first). It carries what libfabric needs beyond the payload:
// what the message is, its tag (or RMA request id), and the remote CQ data.
//
//   byte 0      version (1)
//   byte 1      kind: 1 = FI_MSG, 2 = FI_TAGGED, 3 = RMA write,
//               4 = RMA read request, 5 = RMA read response,
//               6 = RMA response (the target's verdict on a write, or a
//               refused read or atomic), 7 = atomic request, 8 = atomic
//               response
//   byte 2      flags: bit 0 = carries remote CQ data
//   bytes 3..7  zero
//   bytes 8..15 tag, little endian (0 for FI_MSG); for kinds 3..8 the
//               initiator's request id, echoed by the target
//   bytes 16..23 remote CQ data, little endian (0 without the flag); for
//               kind 6 the RmaStatus (mr_table.h), flag set
//
// RMA (docs/integrations.md, "RMA"). A write is a placed braid message
// (PlacementDescriptor key = the region's key, offset = the target
// virtual address, head_bytes = 24: this header); the target answers each
// with kind 6. A read request carries 24 more bytes, little endian:
//   bytes 24..31 key, 32..39 target virtual address, 40..47 length
// and is answered by a placed read response (descriptor key 0, offset =
// the request id: the initiator places it into its own buffer for that
// request, never where the target says) or by kind 6 with the reason.
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

enum class MsgKind : uint8_t {
  kMsg = 1,
  kTagged = 2,
  kWrite = 3,
  kReadReq = 4,
  kReadResp = 5,
  kRmaResp = 6,
  kAtomicReq = 7,
  kAtomicResp = 8,
};
inline constexpr size_t kReadReqBytes = kHeaderBytes + 24;
inline constexpr size_t kAtomicReqBytes = kHeaderBytes + 24;  // + operands

// The fixed part of an atomic request's body.
struct AtomicReq {
  uint64_t key = 0;
  uint64_t addr = 0;
  uint32_t count = 0;
  uint8_t datatype = 0;
  uint8_t op = 0;
  uint8_t kind = 0;
};

// The body of a read request.
struct ReadReq {
  uint64_t key = 0;
  uint64_t addr = 0;
  uint64_t len = 0;
};

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
  kBadKind,     // byte 1 is no kind
  kBadFlags,    // unknown flag bits or non-zero reserved bytes
};
inline constexpr size_t kHeaderErrorCount = 5;
const char* HeaderErrorName(HeaderError e);

// Writes `h` as the 24 wire bytes.
std::array<uint8_t, kHeaderBytes> EncodeHeader(const MsgHeader& h);

// Reads the header at the front of `msg` into *out. Returns kNone, or the
// reason the message must be dropped (then *out is unspecified). A read
// request must be exactly kReadReqBytes long, an atomic request at least
// kAtomicReqBytes (else kShort); an RMA response must carry the flag, and
// no request or response but a write may carry it.
HeaderError DecodeHeader(absl::Span<const uint8_t> msg, MsgHeader* out);

// The 24 body bytes of a read request (after its header).
std::array<uint8_t, kReadReqBytes - kHeaderBytes> EncodeReadReq(
    const ReadReq& r);
// Reads the body of a read request that DecodeHeader accepted.
ReadReq DecodeReadReq(absl::Span<const uint8_t> msg);

// The 24 fixed body bytes of an atomic request (after its header).
std::array<uint8_t, kAtomicReqBytes - kHeaderBytes> EncodeAtomicReq(
    const AtomicReq& r);
// Reads the fixed body of an atomic request that DecodeHeader accepted.
// The operands follow at kAtomicReqBytes.
AtomicReq DecodeAtomicReq(absl::Span<const uint8_t> msg);

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_WIRE_HEADER_H_

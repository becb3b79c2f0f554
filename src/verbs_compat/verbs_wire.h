// The verbs protocol carried in braid messages (one verbs message = one
// braid message on the QP's ordered stream; UD uses the unordered stream).
//
// Every message starts with a 24-byte base header (little-endian):
//
//   0      1      2         3        4           8           12
//   +------+------+---------+--------+-----------+-----------+
//   | op   |flags | syndrome| version| dst_qpn   | src_qpn   |
//   +------+------+---------+--------+-----------+-----------+
//   12          16          20          24
//   +-----------+-----------+-----------+
//   | psn       | ack_psn   | imm       |
//   +-----------+-----------+-----------+
//
// psn: the requester's message sequence number (24 bits, starts at the
// QP's sq_psn; the responder expects rq_psn) for requests, and the request
// being answered for responses. ack_psn: the sender's cumulative
// acknowledgement of the reverse direction (the last request its responder
// completed), carried by every RC message so replies piggy-back acks.
//
// Then, by op:
//   kWrite, kWriteImm, kReadReq   RETH  16 B: u64 remote_addr, u32 rkey,
//                                           u32 length
//   kCmpSwap, kFetchAdd           RETH + AtomicETH 16 B: u64 compare_add,
//                                           u64 swap
//   kAtomicResp                   u64 original value
//   kUdSend                       DETH 8 B: u32 qkey, u32 reserved
// followed by the payload (kSend*, kWrite*, kReadResp, kUdSend).
#ifndef BRAID_VERBS_COMPAT_VERBS_WIRE_H_
#define BRAID_VERBS_COMPAT_VERBS_WIRE_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace braid::verbs_compat {

inline constexpr uint8_t kVerbsWireVersion = 1;

enum class VerbsOp : uint8_t {
  kSend = 1,
  kSendImm = 2,
  kWrite = 3,
  kWriteImm = 4,
  kReadReq = 5,
  kCmpSwap = 6,
  kFetchAdd = 7,
  // Responses (responder -> requester).
  kAck = 16,
  kReadResp = 17,
  kAtomicResp = 18,
  kNak = 19,
  // Unreliable datagram.
  kUdSend = 32,
  kUdSendImm = 33,
};

// NAK syndromes (byte 2 of a kNak). For kRnr the low 5 bits of the
// responder's min_rnr_timer travel in `imm`.
enum class NakCode : uint8_t {
  kRnr = 1,             // no receive posted: retry after the RNR timer
  kRemoteAccess = 2,    // bad rkey, bounds or access flags
  kInvalidRequest = 3,  // message too long for the receive, bad opcode,
                        // misaligned atomic
  kRemoteOp = 4,        // the responder could not complete (QP in error)
};

inline constexpr uint8_t kFlagSolicited = 1;
// READ request: the requester takes a directly placed response (its WR has
// one SGE), so the responder sends the response with a placement
// descriptor.
inline constexpr uint8_t kFlagPlaceResponse = 2;

// Direct placement. WRITE / WRITE_IMM payloads and placed READ responses
// travel as braid messages with a PlacementDescriptor: the verbs header is
// the message's head (delivered with the completion), the payload is placed
// by the receiver's placement handler straight into memory. The
// descriptor's key names what the payload targets:
//   bits 56..63 PlaceKind, bits 32..55 the receiving QP's number,
//   bits 0..31  kWrite: the rkey (offset = remote address);
//               kReadResp: the READ's PSN (offset = 0): the requester places
//               into that WR's own SGE, never where the responder says.
enum class PlaceKind : uint8_t { kWrite = 1, kReadResp = 2 };
inline uint64_t PlaceKey(PlaceKind kind, uint32_t qpn, uint32_t low) {
  return (uint64_t{static_cast<uint8_t>(kind)} << 56) |
         (uint64_t{qpn & 0xffffff} << 32) | low;
}
inline uint8_t PlaceKindOf(uint64_t key) {
  return static_cast<uint8_t>(key >> 56);
}
inline uint32_t PlaceQpnOf(uint64_t key) {
  return static_cast<uint32_t>(key >> 32) & 0xffffff;
}
inline uint32_t PlaceLowOf(uint64_t key) { return static_cast<uint32_t>(key); }

inline constexpr size_t kBaseHeaderBytes = 24;
inline constexpr size_t kRethBytes = 16;
inline constexpr size_t kAtomicEthBytes = 16;
inline constexpr size_t kDethBytes = 8;
// Largest header of any op (base + RETH + AtomicETH).
inline constexpr size_t kMaxHeaderBytes =
    kBaseHeaderBytes + kRethBytes + kAtomicEthBytes;

struct VerbsHeader {
  VerbsOp op = VerbsOp::kSend;
  uint8_t flags = 0;
  uint8_t syndrome = 0;
  uint32_t dst_qpn = 0;
  uint32_t src_qpn = 0;
  uint32_t psn = 0;
  uint32_t ack_psn = 0;
  uint32_t imm = 0;  // raw (network-order) immediate as the app gave it
  // RETH
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint32_t length = 0;
  // AtomicETH
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  // kAtomicResp
  uint64_t orig = 0;
  // DETH
  uint32_t qkey = 0;
};

// Header bytes an op carries before its payload.
size_t HeaderBytes(VerbsOp op);

// True for ops a requester sends (kSend .. kFetchAdd).
bool IsRcRequest(VerbsOp op);

// Writes the header for h.op into `out` (at least HeaderBytes(h.op) long).
// Returns the bytes written.
size_t EncodeHeader(const VerbsHeader& h, uint8_t* out);

// Parses a message. On success fills `h` and `payload` (the bytes after the
// header) and returns true; a short message, unknown op or version, or
// (for kReadResp/kSend*/kWrite*) nothing to check, returns false. Never
// trusts a length field: kWrite's RETH length must equal the payload size.
// `placed_len`: payload bytes that were placed directly (not in `msg`); they
// count as payload for the checks, and only kWrite*/kReadResp may have any.
bool DecodeMessage(absl::Span<const uint8_t> msg, VerbsHeader* h,
                   absl::Span<const uint8_t>* payload, uint64_t placed_len = 0);

// 24-bit PSN arithmetic.
inline constexpr uint32_t kPsnMask = 0xffffff;
inline uint32_t PsnAdd(uint32_t a, uint32_t d) { return (a + d) & kPsnMask; }
// Signed distance a - b in the 24-bit space, in [-2^23, 2^23).
inline int32_t PsnDiff(uint32_t a, uint32_t b) {
  int32_t d = static_cast<int32_t>((a - b) & kPsnMask);
  if (d >= (1 << 23)) d -= (1 << 24);
  return d;
}

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_VERBS_WIRE_H_

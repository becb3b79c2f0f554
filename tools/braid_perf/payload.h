// The bytes of a braid-perf message, built so the receiver can prove each
// message is the one that was sent, whole and unaltered:
//
//   offset 0   u16 magic 0xB9AF   u8 kind   u8 reserved(0)
//   offset 4   u32 run            (chosen by the client per size)
//   offset 8   u64 id             (0, 1, 2, ... within a run)
//   offset 16  stamp, then pattern, in 512-byte blocks: each block begins
//              with an 8-byte stamp Mix(run, id, block) and is followed by
//              a position-dependent pattern byte (offset * 7 + offset/251)
//
// The stamps tie every fragment-sized piece to its message and position (a
// fragment placed in the wrong message or at the wrong offset fails); the
// pattern catches flipped bytes anywhere. A sender keeps pre-patterned
// buffers and rewrites only header and stamps per message (cheap even at
// 8 MiB). Host byte order: both sides run the same build.
#ifndef BRAID_TOOLS_BRAID_PERF_PAYLOAD_H_
#define BRAID_TOOLS_BRAID_PERF_PAYLOAD_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"

namespace braid::perf {

enum class Kind : uint8_t {
  kData = 1,       // bw / rate payload, client -> server
  kPing = 2,       // lat, client -> server
  kPong = 3,       // lat, server -> client (the ping echoed)
  kHello = 10,     // client -> server: a run begins
  kHelloAck = 11,  // server -> client
  kDone = 12,      // client -> server: the run's sending is over
  kResult = 13,    // server -> client: what the server counted
  kBye = 14,       // client -> server: no more runs
  kBusy = 15,      // server -> client: refused, another client's run is on
};

inline constexpr uint16_t kMagic = 0xB9AF;
inline constexpr uint32_t kHeaderBytes = 16;
inline constexpr uint32_t kBlockBytes = 512;

struct Header {
  Kind kind = Kind::kData;
  uint32_t run = 0;
  uint64_t id = 0;
};

// Why a message failed verification.
enum class Verdict : uint8_t {
  kOk,
  kTooShort,    // smaller than the header
  kBadMagic,    // header magic/reserved wrong
  kBadKind,     // not the kind expected here
  kWrongSize,   // not the run's message size
  kBadStamp,    // a block stamp does not belong to (run, id, block)
  kBadPattern,  // a pattern byte differs
};
const char* VerdictName(Verdict v);

// Reads the header of `msg`. Returns false if too short or the magic is
// wrong (the header is then unusable).
bool ReadHeader(absl::Span<const uint8_t> msg, Header* h);

// A reference pattern large enough for messages up to `max_size`, shared by
// sender (initial fill) and receiver (comparison).
class Pattern {
 public:
  explicit Pattern(uint32_t max_size);
  uint32_t max_size() const { return static_cast<uint32_t>(ref_.size()); }

  // Fills all of `buf` (pattern, header, stamps) for message (h.run, h.id).
  void FillAll(absl::Span<uint8_t> buf, const Header& h) const;
  // Rewrites only header and stamps of a buffer that FillAll prepared earlier
  // for some (possibly other) message of the same size.
  static void Restamp(absl::Span<uint8_t> buf, const Header& h);
  // Checks `msg` fully: header and kind, size, every stamp and (if
  // `pattern`) every pattern byte. `h` receives the header when it could be
  // read.
  Verdict Verify(absl::Span<const uint8_t> msg, uint32_t want_size,
                 Kind want_kind, bool pattern, Header* h) const;
  // The same, calling `progress` after every kProgressBytes checked. A
  // single-threaded program gives its endpoint a turn there (Poll with max
  // 0): checking a 64 MiB message takes milliseconds, long enough for the
  // peer to time out the acks it waits for and re-send.
  Verdict Verify(absl::Span<const uint8_t> msg, uint32_t want_size,
                 Kind want_kind, bool pattern, Header* h,
                 absl::FunctionRef<void()> progress) const;
  static constexpr size_t kProgressBytes = 1 << 20;

 private:
  std::vector<uint8_t> ref_;
};

// The stamp of block `block` of message (run, id).
// Inline: a 64 KiB message takes 128 of them, on the sender's hot path.
// The part of a stamp that is the same for every block of one message.
inline uint64_t StampBase(uint32_t run, uint64_t id) {
  return id * 0x9e3779b97f4a7c15ULL ^ (uint64_t{run} << 32);
}
// The stamp of block `block` of the message whose StampBase is `base`.
inline uint64_t StampOf(uint64_t base, uint64_t block) {
  // splitmix64 finaliser over the three inputs.
  uint64_t z = base ^ (block * 0xd1b54a32d192ed03ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
inline uint64_t Stamp(uint32_t run, uint64_t id, uint64_t block) {
  return StampOf(StampBase(run, id), block);
}

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_PAYLOAD_H_

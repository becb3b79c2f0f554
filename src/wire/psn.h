// Sequence-number arithmetic. PSNs and per-path sequence numbers are 32-bit
// and wrap; comparisons are valid while the two values are within 2^31.
#ifndef BRAID_WIRE_PSN_H_
#define BRAID_WIRE_PSN_H_

#include <cstdint>
#include <functional>

namespace braid::wire {

// Wrap-aware 32-bit sequence number. `a < b` means "a comes before b".
template <typename Tag>
class Seq32 {
 public:
  constexpr Seq32() = default;
  constexpr explicit Seq32(uint32_t v) : v_(v) {}
  constexpr uint32_t value() const { return v_; }

  // Signed distance from `o` to this: positive if this is after `o`.
  constexpr int32_t operator-(Seq32 o) const {
    return static_cast<int32_t>(v_ - o.v_);
  }
  constexpr Seq32 operator+(int64_t k) const {
    return Seq32(static_cast<uint32_t>(v_ + static_cast<uint32_t>(k)));
  }
  constexpr Seq32 operator-(int64_t k) const {
    return Seq32(static_cast<uint32_t>(v_ - static_cast<uint32_t>(k)));
  }
  constexpr Seq32& operator++() {
    ++v_;
    return *this;
  }
  constexpr bool operator==(const Seq32& o) const { return v_ == o.v_; }
  constexpr bool operator!=(const Seq32& o) const { return v_ != o.v_; }
  constexpr bool operator<(const Seq32& o) const { return (*this - o) < 0; }
  constexpr bool operator<=(const Seq32& o) const { return (*this - o) <= 0; }
  constexpr bool operator>(const Seq32& o) const { return (*this - o) > 0; }
  constexpr bool operator>=(const Seq32& o) const { return (*this - o) >= 0; }

 private:
  uint32_t v_ = 0;
};

struct PsnTag {};
struct PathSeqTag {};
struct MsgSeqTag {};

using Psn = Seq32<PsnTag>;          // reliability sequence, per peer pair
using PathSeq = Seq32<PathSeqTag>;  // per-path transmission sequence
using MsgSeq = Seq32<MsgSeqTag>;    // message number (per pair or per stream)

constexpr Psn Max(Psn a, Psn b) { return a < b ? b : a; }
constexpr Psn Min(Psn a, Psn b) { return a < b ? a : b; }

// Path index within a peer's path set (0..255).
using PathId = uint8_t;
// The entropy value a backend turns into a UDP source port (or equivalent).
using Entropy = uint16_t;

}  // namespace braid::wire

#endif  // BRAID_WIRE_PSN_H_

// Test helper: datagrams an off-path attacker writes by hand (any frames,
// any incarnations, sessions and PSNs), and reading back who sent one.
#ifndef BRAID_TESTS_ENDPOINT_FORGE_H_
#define BRAID_TESTS_ENDPOINT_FORGE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "wire/frames.h"

namespace braid::endpoint::testing {

// A datagram of the given frames, as `reply_port` would send it.
class Forge {
 public:
  explicit Forge(uint16_t reply_port = 7000) : b_(wire::kPreambleSize) {
    wire::WritePreamble(reply_port, absl::MakeSpan(b_));
  }
  Forge& Ctrl(wire::CtrlType t, uint64_t src, uint64_t dst, uint32_t session,
              uint32_t value, uint64_t nonce = 0) {
    wire::CtrlFrame c;
    c.type = t;
    c.src_incarnation = src;
    c.dst_incarnation = dst;
    if (wire::IsChallengeType(t)) {
      c.nonce = nonce;
    } else {
      c.session = session;
      c.value = value;
    }
    const size_t at = b_.size();
    b_.resize(at + wire::kCtrlFrameSize);
    wire::WriteCtrl(c, absl::MakeSpan(b_).subspan(at));
    return *this;
  }
  Forge& Data(uint64_t src, uint64_t dst, uint32_t psn, uint32_t msg_seq,
              const std::vector<uint8_t>& payload) {
    wire::DataHeader h;
    h.flags = wire::kDataFlagAckNow;
    h.src_incarnation = src;
    h.dst_incarnation = dst;
    h.psn = wire::Psn(psn);
    h.msg_seq = wire::MsgSeq(msg_seq);
    h.msg_len = static_cast<uint32_t>(payload.size());
    h.payload_len = static_cast<uint16_t>(payload.size());
    const size_t at = b_.size();
    b_.resize(at + wire::kDataHeaderSize + payload.size());
    wire::WriteData(h, payload, absl::MakeSpan(b_).subspan(at));
    return *this;
  }
  Forge& Ack(uint64_t src, uint64_t dst, uint32_t session, uint32_t cum) {
    wire::AckHeader h;
    h.src_incarnation = src;
    h.dst_incarnation = dst;
    h.session = session;
    h.cum_psn = wire::Psn(cum);
    h.credit_psn = wire::Psn(cum + 100000);
    const size_t at = b_.size();
    b_.resize(at + wire::AckFrameSize(0));
    wire::WriteAck(h, {}, absl::MakeSpan(b_).subspan(at));
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return b_; }

 private:
  std::vector<uint8_t> b_;
};

// The source incarnation of the first frame of a datagram (what its sender
// calls itself towards the receiver), 0 if it has none.
inline uint64_t SrcIncarnationOf(const std::vector<uint8_t>& datagram) {
  wire::FrameReader r(
      absl::MakeConstSpan(datagram).subspan(wire::kPreambleSize));
  wire::Frame f;
  if (!r.Next(&f)) return 0;
  switch (f.type) {
    case wire::FrameType::kData:
      return f.data.src_incarnation;
    case wire::FrameType::kAck:
      return f.ack.src_incarnation;
    case wire::FrameType::kCtrl:
      return f.ctrl.src_incarnation;
  }
  return 0;
}

}  // namespace braid::endpoint::testing

#endif  // BRAID_TESTS_ENDPOINT_FORGE_H_

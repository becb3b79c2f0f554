// The invariants every received Ethernet frame must satisfy in the DPDK
// backend's framing code (ClassifyFrame, HandleNeighborFrame), shared by the
// GoogleTest random fuzzer and the libFuzzer target.
#ifndef BRAID_TESTS_FUZZ_DPDK_FRAME_CHECK_H_
#define BRAID_TESTS_FUZZ_DPDK_FRAME_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "backend/dpdk/frame.h"
#include "backend/dpdk/neighbor.h"
#include "tests/backend/dpdk/frame_test_util.h"

namespace braid::backend::dpdk::fuzz {

// The receiving side of every fuzzed frame.
inline LocalIdentity FuzzIdentity(bool v6) {
  return testing::IdentityOf(v6 ? "[fd00::2]:9000" : "10.0.0.2:9000");
}

struct EthCheckResult {
  std::string violation;  // empty when every invariant held
  FrameKind kind = FrameKind::kDrop;
  RxDrop why = RxDrop::kCount;
  NeighborAction action = NeighborAction::kNone;
};

// Rules for a frame ClassifyFrame accepted as UDP. Empty when they hold.
inline std::string CheckAcceptedUdp(const uint8_t* f, size_t size,
                                    const LocalIdentity& me, HwChecksum ip,
                                    HwChecksum l4, const ParsedUdp& u) {
  const bool v4 = me.addr.family == NetAddr::Family::kIpv4;
  const uint32_t hdr = FrameHeaderLen(me.addr.family);
  if (u.payload_offset != hdr) return "payload offset is not the header size";
  if (uint64_t{u.payload_offset} + u.payload_len > size) {
    return "payload runs past the frame";
  }
  if (u.src.family != me.addr.family) return "source of another family";
  if (std::memcmp(f, me.mac.data(), 6) != 0) return "accepted another MAC";
  if (LoadBe16(f + hdr - 6) != me.addr.port) return "accepted another port";
  if (LoadBe16(f + hdr - 8) != u.src.port) return "source port mismatch";
  if (LoadBe16(f + hdr - 4) != u.payload_len + kUdpHeaderLen) {
    return "payload length is not the UDP length";
  }
  if (v4 && (f[14] != 0x45 || (LoadBe16(f + 20) & 0x3fff) != 0)) {
    return "accepted IPv4 options or a fragment";
  }
  testing::Bytes frame(f, f + size);
  if (v4 && ip == HwChecksum::kUnknown &&
      testing::NaiveSum(testing::Bytes(f + 14, f + 34)) != 0xffff) {
    return "accepted a bad IPv4 header checksum";
  }
  const uint16_t field = LoadBe16(f + hdr - 2);
  if (l4 == HwChecksum::kUnknown && !(v4 && field == 0)) {
    testing::Bytes all = testing::PseudoHeader(frame);
    all.insert(all.end(), f + hdr - 8, f + u.payload_offset + u.payload_len);
    if (testing::NaiveSum(all) != 0xffff) return "accepted a bad UDP checksum";
  }
  if (!v4 && field == 0) return "accepted a zero IPv6 UDP checksum";
  return "";
}

// Rules for the reply HandleNeighborFrame wrote. Empty when they hold.
inline std::string CheckReply(const uint8_t* r, size_t len,
                              const LocalIdentity& me) {
  if (me.addr.family == NetAddr::Family::kIpv4) {
    ArpMessage m;
    if (len != kArpFrameLen || !ParseArp(absl::MakeConstSpan(r, len), &m)) {
      return "ARP reply does not parse";
    }
    if (m.op != kArpOpReply || m.sender_mac != me.mac ||
        std::memcmp(m.sender_ip.ip.data(), me.addr.ip.data(), 4) != 0) {
      return "ARP reply does not announce us";
    }
    return "";
  }
  NdMessage m;
  if (len != kNdFrameLen || !ParseNd(absl::MakeConstSpan(r, len), &m)) {
    return "neighbour advertisement does not parse";
  }
  if (m.type != kNdAdvertisement || m.target.ip != me.addr.ip ||
      !m.has_link_addr || m.link_addr != me.mac) {
    return "neighbour advertisement does not announce us";
  }
  return "";
}

// Runs ClassifyFrame and HandleNeighborFrame (the latter on every frame,
// whatever the classification: it must be safe alone) over `f` (which the
// caller allocated exactly `size` bytes long) and checks their results.
inline EthCheckResult CheckEthFrame(const uint8_t* f, size_t size,
                                    const LocalIdentity& me, HwChecksum ip,
                                    HwChecksum l4, TimeNs now,
                                    NeighborTable* table) {
  EthCheckResult r;
  const absl::Span<const uint8_t> frame(f, size);
  ParsedUdp udp;
  r.kind = ClassifyFrame(frame, me, ip, l4, &udp, &r.why);
  if (r.kind == FrameKind::kUdp) {
    r.violation = CheckAcceptedUdp(f, size, me, ip, l4, udp);
  } else if (r.kind == FrameKind::kDrop && r.why >= RxDrop::kCount) {
    r.violation = "drop without a reason";
  }
  if (!r.violation.empty()) return r;

  uint8_t reply[kMaxNeighborFrameLen + 16];
  std::memset(reply, 0xee, sizeof(reply));
  size_t reply_len = 12345;
  r.action = HandleNeighborFrame(frame, me, now, table,
                                 absl::MakeSpan(reply, kMaxNeighborFrameLen),
                                 &reply_len);
  if (reply[kMaxNeighborFrameLen] != 0xee) {
    r.violation = "reply written past reply_out";
  } else if ((r.action == NeighborAction::kReply) != (reply_len > 0)) {
    r.violation = absl::StrCat("action ", NeighborActionName(r.action),
                               " with reply_len ", reply_len);
  } else if (reply_len > 0) {
    r.violation = CheckReply(reply, reply_len, me);
  } else if (table->size() > table->capacity()) {
    r.violation = "neighbour table over capacity";
  }
  return r;
}

}  // namespace braid::backend::dpdk::fuzz

#endif  // BRAID_TESTS_FUZZ_DPDK_FRAME_CHECK_H_

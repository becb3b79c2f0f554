// What a UD receive's first 40 bytes (the GRH slot) say about the sender.
// InfiniBand and RoCE v1 put a GRH there (an IPv6-shaped header: version 6,
// traffic class, source and destination GIDs); RoCE v2 over IPv4 puts the
// 20-byte IPv4 header in the slot's last 20 bytes and leaves the first 20
// undefined. Every byte may be forged by whoever sent the datagram.
#ifndef BRAID_BACKEND_VERBS_UD_UD_GRH_H_
#define BRAID_BACKEND_VERBS_UD_UD_GRH_H_

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <optional>

namespace braid::backend {

inline constexpr uint32_t kGrhBytes = 40;

struct GrhInfo {
  std::array<uint8_t, 16> sgid{};  // IPv4 senders as ::ffff:a.b.c.d
  bool ce = false;                 // ECN field is Congestion Experienced
};

// Reads the sender's GID and ECN from a received GRH slot (kGrhBytes at
// `grh`). nullopt when neither an IPv6-shaped GRH nor an IPv4 header is
// there.
std::optional<GrhInfo> ParseGrh(const uint8_t* grh);

// Writes an IPv6-shaped GRH for a datagram of `payload_len` bytes from
// `sgid` to `dgid` with traffic class `tclass` (tests build receives with
// it).
void WriteGrh(const uint8_t* sgid, const uint8_t* dgid, uint8_t tclass,
              uint16_t payload_len, uint8_t* grh);

// An ibv_mtu as bytes (256..4096); 0 for a value outside the enum.
uint32_t MtuBytes(ibv_mtu mtu);

}  // namespace braid::backend

#endif  // BRAID_BACKEND_VERBS_UD_UD_GRH_H_

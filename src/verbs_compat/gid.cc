#include "verbs_compat/gid.h"

#include <cstring>

namespace braid::verbs_compat {

ibv_gid EncodeGid(const NetAddr& addr) {
  ibv_gid g;
  std::memset(&g, 0, sizeof(g));
  if (addr.family == NetAddr::Family::kIbUd) {
    const uint32_t qpn = addr.qpn();
    g.raw[5] = static_cast<uint8_t>(qpn >> 16);
    g.raw[6] = static_cast<uint8_t>(qpn >> 8);
    g.raw[7] = static_cast<uint8_t>(qpn);
    std::memcpy(&g.raw[8], addr.ip.data() + 8, 8);
    return g;
  }
  g.raw[8] = static_cast<uint8_t>(addr.port >> 8);
  g.raw[9] = static_cast<uint8_t>(addr.port & 0xff);
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  std::memcpy(&g.raw[12], addr.ip.data(), 4);
  return g;
}

bool CarriesUd(const NetAddr& addr) {
  if (addr.family != NetAddr::Family::kIbUd) return false;
  for (int i = 0; i < 8; ++i) {
    if (addr.ip[i] != 0) return false;
  }
  return addr.ip[10] == 0xff && addr.ip[11] == 0xff && addr.qpn() != 0;
}

std::optional<NetAddr> DecodeGid(const ibv_gid& gid) {
  for (int i = 0; i < 5; ++i) {
    if (gid.raw[i] != 0) return std::nullopt;
  }
  if (gid.raw[10] != 0xff || gid.raw[11] != 0xff) return std::nullopt;
  const uint32_t qpn =
      (uint32_t{gid.raw[5]} << 16) | (uint32_t{gid.raw[6]} << 8) | gid.raw[7];
  if (qpn != 0) {
    uint8_t carrier[16] = {0};
    std::memcpy(carrier + 8, &gid.raw[8], 8);
    return NetAddr::IbUd(carrier, qpn);
  }
  const uint16_t port = static_cast<uint16_t>((gid.raw[8] << 8) | gid.raw[9]);
  if (port == 0) return std::nullopt;
  const uint32_t ip = (uint32_t{gid.raw[12]} << 24) |
                      (uint32_t{gid.raw[13]} << 16) |
                      (uint32_t{gid.raw[14]} << 8) | gid.raw[15];
  if (ip == 0) return std::nullopt;
  return NetAddr::Ipv4(ip, port);
}

std::optional<NetAddr> ResolveAh(const ibv_ah_attr& ah, const NetAddr& local) {
  if (ah.is_global) {
    std::optional<NetAddr> a = DecodeGid(ah.grh.dgid);
    if (a.has_value()) return a;
    // A GRH whose GID is not one of ours: fall back to the LID if present.
  }
  // Over UD a LID cannot name the queue pair: GRH only.
  if (local.family == NetAddr::Family::kIbUd) return std::nullopt;
  if (ah.dlid == 0 || ah.dlid >= 0xC000) return std::nullopt;
  NetAddr a = local;
  a.port = ah.dlid;
  return a;
}

}  // namespace braid::verbs_compat

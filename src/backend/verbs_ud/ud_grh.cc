#include "backend/verbs_ud/ud_grh.h"

#include <cstring>

namespace braid::backend {
namespace {

constexpr uint8_t kEcnCe = 3;
constexpr uint32_t kIpv4At = 20;  // RoCE v2/IPv4: header in the last 20 bytes

}  // namespace

std::optional<GrhInfo> ParseGrh(const uint8_t* grh) {
  GrhInfo info;
  if ((grh[0] >> 4) == 6) {
    const uint8_t tclass = static_cast<uint8_t>((grh[0] << 4) | (grh[1] >> 4));
    info.ce = (tclass & 3) == kEcnCe;
    std::memcpy(info.sgid.data(), grh + 8, 16);
    return info;
  }
  const uint8_t* ip = grh + kIpv4At;
  if (ip[0] == 0x45) {  // version 4, no options (RoCE v2 never has any)
    info.ce = (ip[1] & 3) == kEcnCe;
    info.sgid[10] = 0xff;
    info.sgid[11] = 0xff;
    std::memcpy(info.sgid.data() + 12, ip + 12, 4);
    return info;
  }
  return std::nullopt;
}

void WriteGrh(const uint8_t* sgid, const uint8_t* dgid, uint8_t tclass,
              uint16_t payload_len, uint8_t* grh) {
  std::memset(grh, 0, kGrhBytes);
  grh[0] = static_cast<uint8_t>(0x60 | (tclass >> 4));
  grh[1] = static_cast<uint8_t>(tclass << 4);
  grh[4] = static_cast<uint8_t>(payload_len >> 8);
  grh[5] = static_cast<uint8_t>(payload_len);
  grh[6] = 0x1b;  // next header: IB BTH
  grh[7] = 64;
  std::memcpy(grh + 8, sgid, 16);
  std::memcpy(grh + 24, dgid, 16);
}

uint32_t MtuBytes(ibv_mtu mtu) {
  switch (mtu) {
    case IBV_MTU_256:
      return 256;
    case IBV_MTU_512:
      return 512;
    case IBV_MTU_1024:
      return 1024;
    case IBV_MTU_2048:
      return 2048;
    case IBV_MTU_4096:
      return 4096;
  }
  return 0;
}

}  // namespace braid::backend

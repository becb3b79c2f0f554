// What braid0 reports as device limits, and enforces.
#ifndef BRAID_VERBS_COMPAT_LIMITS_H_
#define BRAID_VERBS_COMPAT_LIMITS_H_

#include <cstdint>

namespace braid::verbs_compat {

inline constexpr uint32_t kMaxQp = 1 << 16;
inline constexpr uint32_t kMaxQpWr = 1 << 15;
inline constexpr uint32_t kMaxSge = 32;
inline constexpr uint32_t kMaxInline = 4096;
inline constexpr uint32_t kMaxCq = 1 << 16;
inline constexpr uint32_t kMaxCqe = 1 << 22;
inline constexpr uint32_t kMaxMr = 1 << 20;
inline constexpr uint32_t kMaxPd = 1 << 16;
inline constexpr uint32_t kMaxRdAtom = 16;
inline constexpr uint32_t kMaxAh = 1 << 16;
inline constexpr uint32_t kMaxSrq = 1 << 14;
inline constexpr uint32_t kMaxSrqWr = 1 << 15;
inline constexpr uint32_t kMaxSrqSge = 32;
// UD messages are limited to the port MTU (4096), like RoCE.
inline constexpr uint32_t kUdMaxPayload = 4096;
inline constexpr uint32_t kGrhBytes = 40;
// Vendor id 0xFFFFFF: not an IEEE OUI, so no program mistakes braid0 for a
// real vendor's device (perftest then takes its generic code paths).
inline constexpr uint32_t kVendorId = 0xFFFFFF;
inline constexpr uint32_t kVendorPartId = 0xB4A1;
inline constexpr uint32_t kHwVer = 1;

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_LIMITS_H_

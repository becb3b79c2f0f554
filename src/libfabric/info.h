// What the provider offers (fi_getinfo): one FI_EP_RDM description over
// braid, narrowed by the application's hints. Only what works is listed.
#ifndef BRAID_LIBFABRIC_INFO_H_
#define BRAID_LIBFABRIC_INFO_H_

#include <rdma/fabric.h>

#include <cstdint>

#include "libfabric/config.h"

namespace braid::libfabric {

// RMA and atomics in both directions, as initiator and as target.
inline constexpr uint64_t kRmaCaps =
    FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
// Capabilities offered: messages and tagged messages, both directions,
// directed receive, source addresses in completions, RMA and atomics
// (only to applications whose mr_mode accepts kRmaMrMode; atomics unless
// FI_BRAID_ATOMICS=0, see OfferedCaps).
inline constexpr uint64_t kCaps = FI_MSG | FI_TAGGED | FI_SEND | FI_RECV |
                                  FI_DIRECTED_RECV | FI_SOURCE | FI_LOCAL_COMM |
                                  FI_REMOTE_COMM | kRmaCaps;
// kCaps less FI_ATOMIC unless `config` enables atomics.
inline uint64_t OfferedCaps(const ProviderConfig& config) {
  return config.atomics ? kCaps : kCaps & ~static_cast<uint64_t>(FI_ATOMIC);
}
// What RMA and atomics need of the application's memory registration:
// keys are the provider's (random, 64 bits), remote addresses are virtual
// addresses. No FI_MR_LOCAL: local buffers need no registration.
inline constexpr int kRmaMrMode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
inline constexpr uint64_t kTxOpFlags = FI_COMPLETION | FI_INJECT_COMPLETE |
                                       FI_TRANSMIT_COMPLETE |
                                       FI_DELIVERY_COMPLETE;
inline constexpr uint64_t kRxOpFlags = FI_COMPLETION;
inline constexpr uint64_t kTagFormat = 0xAAAAAAAAAAAAAAAAull;

// fi_getinfo for the provider. Returns 0 with a fresh list in *info (the
// caller frees it with fi_freeinfo), -FI_ENODATA if the hints ask for
// something not offered, or -FI_EINVAL / -FI_ENOMEM.
int GetInfo(uint32_t version, const char* node, const char* service,
            uint64_t flags, const fi_info* hints, const ProviderConfig& config,
            fi_info** info);

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_INFO_H_

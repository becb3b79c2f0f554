// The libfabric provider entry: the fi_provider struct libfabric gets from
// fi_prov_ini, used for logging and parameters.
#ifndef BRAID_LIBFABRIC_PROVIDER_H_
#define BRAID_LIBFABRIC_PROVIDER_H_

#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

namespace braid::libfabric {

inline constexpr const char kProviderName[] = "braid";
inline constexpr uint32_t kProviderVersion = FI_VERSION(0, 1);

fi_provider* Provider();

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_PROVIDER_H_

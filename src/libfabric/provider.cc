// fi_prov_ini: the one symbol libbraid-fi.so exports. libfabric dlopens
// lib<name>-fi.so files found in FI_PROVIDER_PATH (or its provider
// directory) and calls it.
#include "libfabric/provider.h"

#include <rdma/fi_errno.h>

#include "libfabric/config.h"
#include "libfabric/info.h"
#include "libfabric/objects.h"

namespace braid::libfabric {
namespace {

int ProvGetInfo(uint32_t version, const char* node, const char* service,
                uint64_t flags, const fi_info* hints, fi_info** info) {
  return GetInfo(version, node, service, flags, hints, Config(), info);
}

void ProvCleanup() {}

fi_provider kProvider = {
    .version = kProviderVersion,
    .fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
    .context = {},
    .name = kProviderName,
    .getinfo = ProvGetInfo,
    .fabric = OpenFabric,
    .cleanup = ProvCleanup,
};

}  // namespace

fi_provider* Provider() { return &kProvider; }

}  // namespace braid::libfabric

extern "C" FI_EXT_INI {
  braid::libfabric::DefineParams();
  return braid::libfabric::Provider();
}

// The braid0 device: its ibv_device, the configuration it was listed with,
// and what ibv_query_device / ibv_query_port / ibv_query_gid report.
#ifndef BRAID_VERBS_COMPAT_DEVICE_H_
#define BRAID_VERBS_COMPAT_DEVICE_H_

#include <infiniband/verbs.h>

#include "verbs_compat/config.h"

namespace braid::verbs_compat {

class Context;

// Who this copy of the library is: the device name it lists and the prefix
// of the environment variables it reads. libbraid-verbs.so is "braid0" /
// "BRAID_VERBS_"; a test-only second copy (libbraid-verbs-carrier.so, which
// defines its own ThisLibrary) is another device with its own variables, so
// that braid0 can run over its UD queue pairs in one process.
struct LibraryIdentity {
  const char* device_name;
  const char* env_prefix;
};
const LibraryIdentity& ThisLibrary();

// The braid0 device, or nullptr if the configuration is invalid or
// BRAID_VERBS_DISABLE is set (the reason is printed to stderr once).
ibv_device* BraidDevice();
// The configuration braid0 was listed with (valid if BraidDevice()).
const VerbsConfig& BraidConfig();

void FillDeviceAttr(Context* ctx, ibv_device_attr* attr);
// Fills the extended attributes up to attr_size bytes.
void FillDeviceAttrEx(Context* ctx, ibv_device_attr_ex* attr, size_t attr_size);
void FillPortAttr(Context* ctx, ibv_port_attr* attr);
// braid0's node GUID (also its system image GUID), network byte order.
uint64_t NodeGuidBe();

}  // namespace braid::verbs_compat

#endif  // BRAID_VERBS_COMPAT_DEVICE_H_

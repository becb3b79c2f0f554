// TEST ONLY: the identity of libbraid-verbs-carrier.so, a second copy of the
// verbs device that lists itself as "braid1" and reads BRAID_CARRIER_*
// variables. Preloaded after libbraid-verbs.so, it is the RDMA device braid0
// reaches through libibverbs, so braid0 runs over the verbs UD backend
// (BRAID_VERBS_BACKEND=verbs_ud, BRAID_VERBS_UD_DEVICE=braid1) on a host
// without an RDMA NIC.
#include "verbs_compat/device.h"

namespace braid::verbs_compat {

const LibraryIdentity& ThisLibrary() {
  static const LibraryIdentity id{"braid1", "BRAID_CARRIER_"};
  return id;
}

}  // namespace braid::verbs_compat

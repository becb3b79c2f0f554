// Entry points the provider does not offer: each returns -FI_ENOSYS (the
// public headers have no such helpers; libfabric's own are internal).
#ifndef BRAID_LIBFABRIC_STUBS_H_
#define BRAID_LIBFABRIC_STUBS_H_

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

namespace braid::libfabric::stubs {

inline int OpsOpen(fid*, const char*, uint64_t, void**, void*) {
  return -FI_ENOSYS;
}
inline int TxCtx(fid_ep*, int, fi_tx_attr*, fid_ep**, void*) {
  return -FI_ENOSYS;
}
inline int RxCtx(fid_ep*, int, fi_rx_attr*, fid_ep**, void*) {
  return -FI_ENOSYS;
}
inline int Setname(fid_t, void*, size_t) { return -FI_ENOSYS; }
inline int Getpeer(fid_ep*, void*, size_t*) { return -FI_ENOSYS; }
inline int Connect(fid_ep*, const void*, const void*, size_t) {
  return -FI_ENOSYS;
}
inline int Listen(fid_pep*) { return -FI_ENOSYS; }
inline int Accept(fid_ep*, const void*, size_t) { return -FI_ENOSYS; }
inline int Reject(fid_pep*, fid_t, const void*, size_t) { return -FI_ENOSYS; }
inline int Shutdown(fid_ep*, uint64_t) { return -FI_ENOSYS; }
inline int Join(fid_ep*, const void*, uint64_t, fid_mc**, void*) {
  return -FI_ENOSYS;
}

// The fi_ops table of an object: close, and optionally bind and control;
// nothing else.
inline fi_ops FidOps(int (*close)(fid*),
                     int (*bind)(fid*, fid*, uint64_t) = nullptr,
                     int (*control)(fid*, int, void*) = nullptr) {
  return fi_ops{.size = sizeof(fi_ops),
                .close = close,
                .bind = bind,
                .control = control,
                .ops_open = OpsOpen,
                .tostr = nullptr,
                .ops_set = nullptr};
}

}  // namespace braid::libfabric::stubs

#endif  // BRAID_LIBFABRIC_STUBS_H_

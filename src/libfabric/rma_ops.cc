// The fi_ops_rma table of an endpoint: libfabric's C entry points for
// fi_read*, fi_write*, fi_inject_write, fi_writedata and
// fi_inject_writedata, each taking the domain lock and calling Ep (rma.cc).
// One target range per operation (rma_iov_limit 1); local descriptors are
// ignored (no FI_MR_LOCAL).
#include "libfabric/rma_ops.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <mutex>

#include "libfabric/ep.h"

namespace braid::libfabric {
namespace {

Ep* E(fid_ep* ep) { return FromFid<Ep>(ep); }

using Lock = std::lock_guard<std::mutex>;

ssize_t DoWrite(Ep* ep, const iovec* iov, size_t count, fi_addr_t dest,
                uint64_t addr, uint64_t key, uint64_t data, void* ctx,
                uint64_t flags, bool inject_call = false) {
  Lock l(ep->domain->mu);
  ++ep->app_calls;
  return ep->Write(iov, count, dest, addr, key, data, ctx, flags, inject_call);
}

ssize_t DoRead(Ep* ep, const iovec* iov, size_t count, fi_addr_t src,
               uint64_t addr, uint64_t key, void* ctx, uint64_t flags) {
  Lock l(ep->domain->mu);
  ++ep->app_calls;
  return ep->Read(iov, count, src, addr, key, ctx, flags);
}

// The one target range of a message; -FI_EINVAL for none or several, or
// one shorter than the local buffers.
ssize_t OneRange(const fi_msg_rma* m, const fi_rma_iov** out) {
  if (m == nullptr || m->rma_iov == nullptr || m->rma_iov_count != 1) {
    return -FI_EINVAL;
  }
  if (m->rma_iov[0].len < IovBytes(m->msg_iov, m->iov_count)) {
    return -FI_EINVAL;
  }
  *out = &m->rma_iov[0];
  return 0;
}

ssize_t Read(fid_ep* f, void* buf, size_t len, void*, fi_addr_t src,
             uint64_t addr, uint64_t key, void* ctx) {
  iovec v{buf, len};
  return DoRead(E(f), &v, 1, src, addr, key, ctx, E(f)->tx_op_flags);
}
ssize_t Readv(fid_ep* f, const iovec* iov, void**, size_t count, fi_addr_t src,
              uint64_t addr, uint64_t key, void* ctx) {
  return DoRead(E(f), iov, count, src, addr, key, ctx, E(f)->tx_op_flags);
}
ssize_t Readmsg(fid_ep* f, const fi_msg_rma* m, uint64_t flags) {
  const fi_rma_iov* r = nullptr;
  if (ssize_t e = OneRange(m, &r)) return e;
  return DoRead(E(f), m->msg_iov, m->iov_count, m->addr, r->addr, r->key,
                m->context, flags);
}
ssize_t Write(fid_ep* f, const void* buf, size_t len, void*, fi_addr_t dest,
              uint64_t addr, uint64_t key, void* ctx) {
  iovec v{const_cast<void*>(buf), len};
  return DoWrite(E(f), &v, 1, dest, addr, key, 0, ctx, E(f)->tx_op_flags);
}
ssize_t Writev(fid_ep* f, const iovec* iov, void**, size_t count,
               fi_addr_t dest, uint64_t addr, uint64_t key, void* ctx) {
  return DoWrite(E(f), iov, count, dest, addr, key, 0, ctx, E(f)->tx_op_flags);
}
ssize_t Writemsg(fid_ep* f, const fi_msg_rma* m, uint64_t flags) {
  const fi_rma_iov* r = nullptr;
  if (ssize_t e = OneRange(m, &r)) return e;
  return DoWrite(E(f), m->msg_iov, m->iov_count, m->addr, r->addr, r->key,
                 m->data, m->context, flags);
}
ssize_t Inject(fid_ep* f, const void* buf, size_t len, fi_addr_t dest,
               uint64_t addr, uint64_t key) {
  iovec v{const_cast<void*>(buf), len};
  return DoWrite(E(f), &v, 1, dest, addr, key, 0, nullptr, FI_INJECT, true);
}
ssize_t Writedata(fid_ep* f, const void* buf, size_t len, void*, uint64_t data,
                  fi_addr_t dest, uint64_t addr, uint64_t key, void* ctx) {
  iovec v{const_cast<void*>(buf), len};
  return DoWrite(E(f), &v, 1, dest, addr, key, data, ctx,
                 E(f)->tx_op_flags | FI_REMOTE_CQ_DATA);
}
ssize_t Injectdata(fid_ep* f, const void* buf, size_t len, uint64_t data,
                   fi_addr_t dest, uint64_t addr, uint64_t key) {
  iovec v{const_cast<void*>(buf), len};
  return DoWrite(E(f), &v, 1, dest, addr, key, data, nullptr,
                 FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

fi_ops_rma kRmaOps = {
    .size = sizeof(fi_ops_rma),
    .read = Read,
    .readv = Readv,
    .readmsg = Readmsg,
    .write = Write,
    .writev = Writev,
    .writemsg = Writemsg,
    .inject = Inject,
    .writedata = Writedata,
    .injectdata = Injectdata,
};

}  // namespace

fi_ops_rma* RmaOps() { return &kRmaOps; }

}  // namespace braid::libfabric

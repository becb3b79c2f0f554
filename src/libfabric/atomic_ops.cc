// The fi_ops_atomic table of an endpoint: libfabric's C entry points for
// fi_atomic*, fi_inject_atomic, fi_fetch_atomic*, fi_compare_atomic* and
// their *valid queries, each taking the domain lock and calling
// Ep::Atomic (atomic.cc). One target range per operation; local
// descriptors are ignored (no FI_MR_LOCAL).
#include "libfabric/atomic_ops.h"

#include <rdma/fi_errno.h>

#include <mutex>

#include "libfabric/config.h"
#include "libfabric/ep.h"

namespace braid::libfabric {
namespace {

Ep* E(fid_ep* ep) { return FromFid<Ep>(ep); }

struct Target {
  fi_addr_t dest;
  uint64_t addr;
  uint64_t key;
};

ssize_t Do(fid_ep* f, AtomicKind kind, const fi_ioc* buf, size_t buf_count,
           const fi_ioc* cmp, size_t cmp_count, const fi_ioc* res,
           size_t res_count, const Target& t, fi_datatype dt, fi_op op,
           void* ctx, uint64_t flags, bool inject_call = false) {
  Ep* ep = E(f);
  std::lock_guard<std::mutex> l(ep->domain->mu);
  ++ep->app_calls;
  return ep->Atomic(kind, buf, buf_count, cmp, cmp_count, res, res_count,
                    t.dest, t.addr, t.key, dt, op, ctx, flags, inject_call);
}

// The one target range of a message, or -FI_EINVAL.
ssize_t TargetOf(const fi_msg_atomic* m, Target* t) {
  if (m == nullptr || m->rma_iov == nullptr || m->rma_iov_count != 1) {
    return -FI_EINVAL;
  }
  *t = {m->addr, m->rma_iov[0].addr, m->rma_iov[0].key};
  return 0;
}

ssize_t Write(fid_ep* f, const void* buf, size_t count, void*, fi_addr_t dest,
              uint64_t addr, uint64_t key, fi_datatype dt, fi_op op,
              void* ctx) {
  fi_ioc v{const_cast<void*>(buf), count};
  return Do(f, AtomicKind::kWrite, &v, 1, nullptr, 0, nullptr, 0,
            {dest, addr, key}, dt, op, ctx, E(f)->tx_op_flags);
}
ssize_t Writev(fid_ep* f, const fi_ioc* iov, void**, size_t count,
               fi_addr_t dest, uint64_t addr, uint64_t key, fi_datatype dt,
               fi_op op, void* ctx) {
  return Do(f, AtomicKind::kWrite, iov, count, nullptr, 0, nullptr, 0,
            {dest, addr, key}, dt, op, ctx, E(f)->tx_op_flags);
}
ssize_t Writemsg(fid_ep* f, const fi_msg_atomic* m, uint64_t flags) {
  Target t;
  if (ssize_t e = TargetOf(m, &t)) return e;
  return Do(f, AtomicKind::kWrite, m->msg_iov, m->iov_count, nullptr, 0,
            nullptr, 0, t, m->datatype, m->op, m->context, flags);
}
ssize_t Inject(fid_ep* f, const void* buf, size_t count, fi_addr_t dest,
               uint64_t addr, uint64_t key, fi_datatype dt, fi_op op) {
  fi_ioc v{const_cast<void*>(buf), count};
  return Do(f, AtomicKind::kWrite, &v, 1, nullptr, 0, nullptr, 0,
            {dest, addr, key}, dt, op, nullptr, FI_INJECT, true);
}
ssize_t ReadWrite(fid_ep* f, const void* buf, size_t count, void*, void* result,
                  void*, fi_addr_t dest, uint64_t addr, uint64_t key,
                  fi_datatype dt, fi_op op, void* ctx) {
  fi_ioc v{const_cast<void*>(buf), count};
  fi_ioc r{result, count};
  return Do(f, AtomicKind::kFetch, &v, 1, nullptr, 0, &r, 1, {dest, addr, key},
            dt, op, ctx, E(f)->tx_op_flags);
}
ssize_t ReadWritev(fid_ep* f, const fi_ioc* iov, void**, size_t count,
                   fi_ioc* resultv, void**, size_t result_count, fi_addr_t dest,
                   uint64_t addr, uint64_t key, fi_datatype dt, fi_op op,
                   void* ctx) {
  return Do(f, AtomicKind::kFetch, iov, count, nullptr, 0, resultv,
            result_count, {dest, addr, key}, dt, op, ctx, E(f)->tx_op_flags);
}
ssize_t ReadWritemsg(fid_ep* f, const fi_msg_atomic* m, fi_ioc* resultv, void**,
                     size_t result_count, uint64_t flags) {
  Target t;
  if (ssize_t e = TargetOf(m, &t)) return e;
  return Do(f, AtomicKind::kFetch, m->msg_iov, m->iov_count, nullptr, 0,
            resultv, result_count, t, m->datatype, m->op, m->context, flags);
}
ssize_t CompWrite(fid_ep* f, const void* buf, size_t count, void*,
                  const void* compare, void*, void* result, void*,
                  fi_addr_t dest, uint64_t addr, uint64_t key, fi_datatype dt,
                  fi_op op, void* ctx) {
  fi_ioc v{const_cast<void*>(buf), count};
  fi_ioc c{const_cast<void*>(compare), count};
  fi_ioc r{result, count};
  return Do(f, AtomicKind::kCompare, &v, 1, &c, 1, &r, 1, {dest, addr, key}, dt,
            op, ctx, E(f)->tx_op_flags);
}
ssize_t CompWritev(fid_ep* f, const fi_ioc* iov, void**, size_t count,
                   const fi_ioc* comparev, void**, size_t compare_count,
                   fi_ioc* resultv, void**, size_t result_count, fi_addr_t dest,
                   uint64_t addr, uint64_t key, fi_datatype dt, fi_op op,
                   void* ctx) {
  return Do(f, AtomicKind::kCompare, iov, count, comparev, compare_count,
            resultv, result_count, {dest, addr, key}, dt, op, ctx,
            E(f)->tx_op_flags);
}
ssize_t CompWritemsg(fid_ep* f, const fi_msg_atomic* m, const fi_ioc* comparev,
                     void**, size_t compare_count, fi_ioc* resultv, void**,
                     size_t result_count, uint64_t flags) {
  Target t;
  if (ssize_t e = TargetOf(m, &t)) return e;
  return Do(f, AtomicKind::kCompare, m->msg_iov, m->iov_count, comparev,
            compare_count, resultv, result_count, t, m->datatype, m->op,
            m->context, flags);
}

int Valid(AtomicKind kind, fi_datatype dt, fi_op op, size_t* count) {
  if (!AtomicOffered(kind, dt, op)) return -FI_EOPNOTSUPP;
  if (count) *count = kMaxAtomicBytes / AtomicTypeSize(dt);
  return 0;
}
int WriteValid(fid_ep*, fi_datatype dt, fi_op op, size_t* count) {
  return Valid(AtomicKind::kWrite, dt, op, count);
}
int ReadWriteValid(fid_ep*, fi_datatype dt, fi_op op, size_t* count) {
  return Valid(AtomicKind::kFetch, dt, op, count);
}
int CompWriteValid(fid_ep*, fi_datatype dt, fi_op op, size_t* count) {
  return Valid(AtomicKind::kCompare, dt, op, count);
}

fi_ops_atomic kAtomicOps = {
    .size = sizeof(fi_ops_atomic),
    .write = Write,
    .writev = Writev,
    .writemsg = Writemsg,
    .inject = Inject,
    .readwrite = ReadWrite,
    .readwritev = ReadWritev,
    .readwritemsg = ReadWritemsg,
    .compwrite = CompWrite,
    .compwritev = CompWritev,
    .compwritemsg = CompWritemsg,
    .writevalid = WriteValid,
    .readwritevalid = ReadWriteValid,
    .compwritevalid = CompWriteValid,
};

}  // namespace

fi_ops_atomic* AtomicOps() { return &kAtomicOps; }

int QueryAtomic(fid_domain*, fi_datatype dt, fi_op op, fi_atomic_attr* attr,
                uint64_t flags) {
  if (!Config().atomics) return -FI_EOPNOTSUPP;  // FI_ATOMIC not offered
  if (flags & ~static_cast<uint64_t>(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC)) {
    return -FI_EBADFLAGS;
  }
  const AtomicKind kind = (flags & FI_COMPARE_ATOMIC) ? AtomicKind::kCompare
                          : (flags & FI_FETCH_ATOMIC) ? AtomicKind::kFetch
                                                      : AtomicKind::kWrite;
  size_t count = 0;
  if (int r = Valid(kind, dt, op, &count)) return r;
  if (attr) {
    attr->size = AtomicTypeSize(dt);
    attr->count = count;
  }
  return 0;
}

}  // namespace braid::libfabric

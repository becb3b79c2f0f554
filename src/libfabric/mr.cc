// Memory regions (fi_mr_reg, fi_mr_regv, fi_mr_regattr): each registers
// its memory in the domain's MrTable under a fresh random key
// (FI_MR_PROV_KEY: the application's requested key is ignored) and is
// addressed by virtual address (FI_MR_VIRT_ADDR). Closing one removes it
// at once: a remote access that arrives afterwards is refused (bad key),
// one in progress is refused for its remaining fragments. Sends, receives
// and the local buffers of RMA need no registration (no FI_MR_LOCAL).
#include <rdma/fi_errno.h>

#include <mutex>

#include "libfabric/objects.h"
#include "libfabric/provider.h"
#include "libfabric/stubs.h"

namespace braid::libfabric {
namespace {

// The FI_* access bits a region may carry.
constexpr uint64_t kMrAccess =
    FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;

int MrClose(fid* f) {
  Mr* mr = FromFid<Mr>(f);
  {
    std::lock_guard<std::mutex> l(mr->domain->mu);
    mr->domain->mrs.Remove(mr->fid.key);
  }
  delete mr;
  return 0;
}

int MrBind(fid*, fid*, uint64_t) { return -FI_ENOSYS; }  // no FI_MR_ENDPOINT

int MrControl(fid*, int command, void*) {
  return command == FI_ENABLE ? 0 : -FI_ENOSYS;
}

fi_ops kMrFiOps = stubs::FidOps(MrClose, MrBind, MrControl);

int Register(fid* f, const iovec* iov, size_t count, uint64_t access,
             fid_mr** out, void* context) {
  if (f == nullptr || f->fclass != FI_CLASS_DOMAIN || out == nullptr) {
    return -FI_EINVAL;
  }
  if (count > 1) return -FI_EINVAL;  // mr_iov_limit 1
  if (count == 1 && iov == nullptr) return -FI_EINVAL;
  if (access & ~kMrAccess) return -FI_EINVAL;
  Domain* d = FromFid<Domain>(f);
  auto* base = count ? static_cast<uint8_t*>(iov[0].iov_base) : nullptr;
  const size_t len = count ? iov[0].iov_len : 0;
  if (base == nullptr && len > 0) return -FI_EINVAL;
  absl::StatusOr<uint64_t> key;
  {
    std::lock_guard<std::mutex> l(d->mu);
    key = d->mrs.Add(base, len, access);
  }
  if (!key.ok()) {
    FI_WARN(Provider(), FI_LOG_MR, "fi_mr_reg: %s\n",
            std::string(key.status().message()).c_str());
    return -FI_ENOSPC;
  }
  auto* mr = new Mr();
  mr->fid.fid.fclass = FI_CLASS_MR;
  mr->fid.fid.context = context;
  mr->fid.fid.ops = &kMrFiOps;
  mr->fid.mem_desc = mr;  // never read: no FI_MR_LOCAL
  mr->fid.key = *key;
  mr->domain = d;
  *out = &mr->fid;
  return 0;
}

int Reg(fid* f, const void* buf, size_t len, uint64_t access, uint64_t,
        uint64_t, uint64_t, fid_mr** mr, void* context) {
  iovec v{const_cast<void*>(buf), len};
  return Register(f, &v, 1, access, mr, context);
}

int RegV(fid* f, const iovec* iov, size_t count, uint64_t access, uint64_t,
         uint64_t, uint64_t, fid_mr** mr, void* context) {
  return Register(f, iov, count, access, mr, context);
}

int RegAttr(fid* f, const fi_mr_attr* attr, uint64_t, fid_mr** mr) {
  if (attr == nullptr) return -FI_EINVAL;
  if (attr->iface != FI_HMEM_SYSTEM) return -FI_ENOSYS;
  return Register(f, attr->mr_iov, attr->iov_count, attr->access, mr,
                  attr->context);
}

fi_ops_mr kMrOps = {
    .size = sizeof(fi_ops_mr),
    .reg = Reg,
    .regv = RegV,
    .regattr = RegAttr,
};

}  // namespace

fi_ops_mr* MrOps() { return &kMrOps; }

}  // namespace braid::libfabric

// The fabric, domain and event-queue objects (memory regions: mr.cc).
// The event queue exists for clients that open one and never gets an
// event (no connection management on FI_EP_RDM).
#include <rdma/fi_errno.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "libfabric/atomic_ops.h"
#include "libfabric/config.h"
#include "libfabric/objects.h"
#include "libfabric/provider.h"
#include "libfabric/stubs.h"

namespace braid::libfabric {
namespace {

// --- domain ---

int DomainClose(fid* f) {
  Domain* d = FromFid<Domain>(f);
  {
    std::lock_guard<std::mutex> l(d->mu);
    if (!d->eps.empty() || d->mrs.size() > 0) return -FI_EBUSY;
  }
  d->progress.reset();
  fi_freeinfo(d->info);
  delete d;
  return 0;
}

fi_ops kDomainFiOps = stubs::FidOps(DomainClose);

int NoScalableEp(fid_domain*, fi_info*, fid_ep**, void*) { return -FI_ENOSYS; }
int NoCntr(fid_domain*, fi_cntr_attr*, fid_cntr**, void*) { return -FI_ENOSYS; }
int NoPoll(fid_domain*, fi_poll_attr*, fid_poll**) { return -FI_ENOSYS; }
int NoStx(fid_domain*, fi_tx_attr*, fid_stx**, void*) { return -FI_ENOSYS; }
int NoSrx(fid_domain*, fi_rx_attr*, fid_ep**, void*) { return -FI_ENOSYS; }
int NoCollective(fid_domain*, fi_collective_op, fi_collective_attr*, uint64_t) {
  return -FI_ENOSYS;
}
int Endpoint2(fid_domain* d, fi_info* info, fid_ep** ep, uint64_t flags,
              void* context) {
  if (flags) return -FI_EBADFLAGS;
  return OpenEp(d, info, ep, context);
}

fi_ops_domain kDomainOps = {
    .size = sizeof(fi_ops_domain),
    .av_open = OpenAv,
    .cq_open = OpenCq,
    .endpoint = OpenEp,
    .scalable_ep = NoScalableEp,
    .cntr_open = NoCntr,
    .poll_open = NoPoll,
    .stx_ctx = NoStx,
    .srx_ctx = NoSrx,
    .query_atomic = QueryAtomic,
    .query_collective = NoCollective,
    .endpoint2 = Endpoint2,
};

// --- event queue ---

ssize_t EqRead(fid_eq*, uint32_t*, void*, size_t, uint64_t) {
  return -FI_EAGAIN;
}
ssize_t EqReadErr(fid_eq*, fi_eq_err_entry*, uint64_t) { return -FI_EAGAIN; }
ssize_t EqWrite(fid_eq*, uint32_t, const void*, size_t, uint64_t) {
  return -FI_ENOSYS;
}
ssize_t EqSRead(fid_eq*, uint32_t*, void*, size_t, int timeout, uint64_t) {
  // Nothing ever arrives: wait out the timeout (a bounded one).
  if (timeout > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout));
  return -FI_EAGAIN;
}
const char* EqStrError(fid_eq*, int, const void*, char* buf, size_t len) {
  const char* s = "braid: no event-queue errors";
  if (buf && len) {
    std::strncpy(buf, s, len - 1);
    buf[len - 1] = '\0';
    return buf;
  }
  return s;
}

fi_ops_eq kEqOps = {
    .size = sizeof(fi_ops_eq),
    .read = EqRead,
    .readerr = EqReadErr,
    .write = EqWrite,
    .sread = EqSRead,
    .strerror = EqStrError,
};

int EqClose(fid* f) {
  delete FromFid<Eq>(f);
  return 0;
}

fi_ops kEqFiOps = stubs::FidOps(EqClose);

// --- fabric ---

int FabricClose(fid* f) {
  delete FromFid<Fabric>(f);
  return 0;
}

fi_ops kFabricFiOps = stubs::FidOps(FabricClose);

int NoPassiveEp(fid_fabric*, fi_info*, fid_pep**, void*) { return -FI_ENOSYS; }
int NoWaitSet(fid_fabric*, fi_wait_attr*, fid_wait**) { return -FI_ENOSYS; }
int Domain2(fid_fabric* f, fi_info* info, fid_domain** d, uint64_t flags,
            void* context) {
  if (flags) return -FI_EBADFLAGS;
  return OpenDomain(f, info, d, context);
}

fi_ops_fabric kFabricOps = {
    .size = sizeof(fi_ops_fabric),
    .domain = OpenDomain,
    .passive_ep = NoPassiveEp,
    .eq_open = OpenEq,
    .wait_open = NoWaitSet,
    .trywait = TryWait,
    .domain2 = Domain2,
};

}  // namespace

int OpenDomain(fid_fabric* fabric, fi_info* info, fid_domain** out,
               void* context) {
  if (info && info->domain_attr && info->domain_attr->name &&
      std::strcmp(info->domain_attr->name, kProviderName) != 0) {
    return -FI_EINVAL;
  }
  auto* d = new Domain();
  d->fid.fid.fclass = FI_CLASS_DOMAIN;
  d->fid.fid.context = context;
  d->fid.fid.ops = &kDomainFiOps;
  d->fid.ops = &kDomainOps;
  d->fid.mr = MrOps();
  d->fabric = FromFid<Fabric>(fabric);
  d->info = fi_dupinfo(info);
  if (Config().progress_idle > DurationNs::Zero()) {
    d->progress = std::make_unique<ProgressThread>(d, Config().progress_idle);
  }
  *out = &d->fid;
  return 0;
}

int OpenEq(fid_fabric*, fi_eq_attr* attr, fid_eq** out, void* context) {
  auto* eq = new Eq();
  eq->fid.fid.fclass = FI_CLASS_EQ;
  eq->fid.fid.context = context;
  eq->fid.fid.ops = &kEqFiOps;
  eq->fid.ops = &kEqOps;
  *out = &eq->fid;
  return 0;
}

int OpenFabric(fi_fabric_attr* attr, fid_fabric** out, void* context) {
  if (attr && attr->name && std::strcmp(attr->name, kProviderName) != 0) {
    return -FI_EINVAL;
  }
  auto* f = new Fabric();
  f->fid.fid.fclass = FI_CLASS_FABRIC;
  f->fid.fid.context = context;
  f->fid.fid.ops = &kFabricFiOps;
  f->fid.ops = &kFabricOps;
  f->fid.api_version = attr ? attr->api_version : FI_VERSION(1, 0);
  *out = &f->fid;
  return 0;
}

}  // namespace braid::libfabric

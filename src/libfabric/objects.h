// The provider's libfabric objects. Each starts with the libfabric fid
// struct it implements (standard layout), so a fid pointer handed back by
// libfabric is the object. One mutex per domain guards every object of
// the domain (FI_THREAD_SAFE); the data path is single-threaded in
// practice, so it is uncontended.
#ifndef BRAID_LIBFABRIC_OBJECTS_H_
#define BRAID_LIBFABRIC_OBJECTS_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "braid/address.h"
#include "libfabric/drain_skip.h"
#include "libfabric/match_queue.h"
#include "libfabric/mr_table.h"
#include "libfabric/progress.h"

namespace braid::libfabric {

struct Ep;

struct Fabric {
  fid_fabric fid;
};

struct Domain {
  fid_domain fid;
  Fabric* fabric = nullptr;
  fi_info* info = nullptr;  // fi_dupinfo of the domain's info
  std::mutex mu;            // guards every object of the domain
  std::vector<Ep*> eps;     // open endpoints (the progress thread's work)
  MrTable mrs;              // what remote RMA may touch, by key
  std::unique_ptr<ProgressThread> progress;  // null: FI_BRAID_PROGRESS_US=0
  // The application's API version (err_data_size semantics of readerr).
  uint32_t api_version() const { return fabric->fid.api_version; }
};

struct Av {
  fid_av fid;
  Domain* domain = nullptr;
  fi_av_type type = FI_AV_TABLE;
  std::vector<NetAddr> addrs;  // by fi_addr_t; invalid = removed
  absl::flat_hash_map<NetAddr, fi_addr_t> index;
  // The address of `a`, or nullptr for an unknown or removed one.
  const NetAddr* Lookup(fi_addr_t a) const {
    if (a >= addrs.size() || !addrs[a].valid()) return nullptr;
    return &addrs[a];
  }
  // The fi_addr_t of `peer`, or FI_ADDR_NOTAVAIL.
  fi_addr_t Reverse(const NetAddr& peer) const {
    auto it = index.find(peer);
    return it == index.end() ? FI_ADDR_NOTAVAIL : it->second;
  }
};

struct CqEntry {
  fi_cq_tagged_entry e{};
  fi_addr_t src = FI_ADDR_NOTAVAIL;
};

struct CqError {
  fi_cq_err_entry e{};
  std::string text;  // err_data: names the peer and the cause
};

struct Cq {
  fid_cq fid;
  Domain* domain = nullptr;
  fi_cq_format format = FI_CQ_FORMAT_CONTEXT;
  size_t entry_size = sizeof(fi_cq_entry);
  Fifo<CqEntry> entries;
  std::deque<CqError> errors;
  std::string err_data_held;  // the last error's text, valid until next read
  std::vector<Ep*> eps;       // endpoints bound to it: read drives them
  int epfd = -1;              // wait object: the endpoints' wait fds
  int signal_fd = -1;         // eventfd for fi_cq_signal
  bool wait = false;          // opened with a wait object
  uint32_t empty_reads = 0;   // reads in a row that found nothing
  DrainSkip drain;            // may the next empty read skip progress?

  void Push(const CqEntry& c) {
    CqEntry copy = c;
    entries.push_back(std::move(copy));
  }
  void PushError(CqError&& e) { errors.push_back(std::move(e)); }
  // Drives every bound endpoint once. Domain lock held.
  void ProgressAll();
  // The sum of the bound endpoints' app_calls. Domain lock held.
  uint64_t AppCalls() const;
};

struct Mr {
  fid_mr fid;  // fid.key: the region's key in domain->mrs
  Domain* domain = nullptr;
};

struct Eq {
  fid_eq fid;
};

// Provider-specific error numbers (fi_cq_err_entry::prov_errno). Send
// failures carry braid's FailureCause (1..4).
inline constexpr int kProvErrTruncated = 100;
inline constexpr int kProvErrCanceled = 101;
inline constexpr int kProvErrNoMessage = 102;
inline constexpr int kProvErrRmaTimeout = 103;  // the RMA target fell silent
// An RMA the target refused: kProvErrRma + RmaStatus (mr_table.h).
inline constexpr int kProvErrRma = 110;
const char* ProvErrName(int prov_errno);

template <typename T, typename F>
T* FromFid(F* fid) {
  return reinterpret_cast<T*>(fid);
}

// Object constructors (the fi_ops tables live with each).
int OpenFabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
int OpenDomain(fid_fabric* fabric, fi_info* info, fid_domain** dom,
               void* context);
int OpenAv(fid_domain* domain, fi_av_attr* attr, fid_av** av, void* context);
int OpenCq(fid_domain* domain, fi_cq_attr* attr, fid_cq** cq, void* context);
int OpenEq(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** eq, void* context);
int OpenEp(fid_domain* domain, fi_info* info, fid_ep** ep, void* context);
// The domain's fi_ops_mr (mr.cc).
fi_ops_mr* MrOps();
// fi_trywait for the provider's CQs. 0: the caller may block.
int TryWait(fid_fabric* fabric, fid** fids, int count);

}  // namespace braid::libfabric

#endif  // BRAID_LIBFABRIC_OBJECTS_H_

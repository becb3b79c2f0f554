// Address vectors: fi_addr_t i names the i-th inserted address (FI_AV_TABLE
// and FI_AV_MAP alike); an address is braid's NetAddr, exchanged as a
// sockaddr_in or sockaddr_in6.
#include <arpa/inet.h>
#include <rdma/fi_errno.h>

#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "libfabric/objects.h"
#include "libfabric/sockaddr.h"
#include "libfabric/stubs.h"

namespace braid::libfabric {
namespace {

using Lock = std::lock_guard<std::mutex>;

Av* A(fid_av* f) { return FromFid<Av>(f); }

fi_addr_t Add(Av* av, const NetAddr& a) {
  auto it = av->index.find(a);
  if (it != av->index.end()) return it->second;
  fi_addr_t i = av->addrs.size();
  av->addrs.push_back(a);
  av->index.emplace(a, i);
  return i;
}

int Insert(fid_av* f, const void* addr, size_t count, fi_addr_t* fi_addr,
           uint64_t flags, void* context) {
  Av* av = A(f);
  if (flags) return -FI_EBADFLAGS;
  Lock l(av->domain->mu);
  const auto* p = static_cast<const uint8_t*>(addr);
  int done = 0;
  for (size_t i = 0; i < count; ++i) {
    size_t len = SockaddrLen(p);
    NetAddr a;
    if (len == 0 || !FromSockaddr(p, len, &a) || a.port == 0) {
      if (fi_addr) fi_addr[i] = FI_ADDR_NOTAVAIL;
      p += len ? len : sizeof(sockaddr_in);
      continue;
    }
    fi_addr_t x = Add(av, a);
    if (fi_addr) fi_addr[i] = x;
    ++done;
    p += len;
  }
  return done;
}

int InsertSvc(fid_av* f, const char* node, const char* service,
              fi_addr_t* fi_addr, uint64_t flags, void* context) {
  NetAddr a;
  auto parsed = NetAddr::Parse(absl::StrCat(node, ":", service));
  if (!parsed.ok()) {
    parsed = NetAddr::Parse(absl::StrCat("[", node, "]:", service));
  }
  if (!parsed.ok()) return -FI_EINVAL;
  sockaddr_storage ss;
  ToSockaddr(*parsed, &ss);
  return Insert(f, &ss, 1, fi_addr, flags, context);
}

int InsertSym(fid_av*, const char*, size_t, const char*, size_t, fi_addr_t*,
              uint64_t, void*) {
  return -FI_ENOSYS;
}

int Remove(fid_av* f, fi_addr_t* fi_addr, size_t count, uint64_t flags) {
  Av* av = A(f);
  Lock l(av->domain->mu);
  for (size_t i = 0; i < count; ++i) {
    fi_addr_t x = fi_addr[i];
    if (x >= av->addrs.size() || !av->addrs[x].valid()) return -FI_EINVAL;
    av->index.erase(av->addrs[x]);
    av->addrs[x] = NetAddr();
  }
  return 0;
}

int Lookup(fid_av* f, fi_addr_t fi_addr, void* addr, size_t* addrlen) {
  Av* av = A(f);
  Lock l(av->domain->mu);
  const NetAddr* a = av->Lookup(fi_addr);
  if (a == nullptr) return -FI_EINVAL;
  sockaddr_storage ss;
  size_t n = ToSockaddr(*a, &ss);
  std::memcpy(addr, &ss, std::min(n, *addrlen));
  *addrlen = n;
  return 0;
}

const char* StrAddr(fid_av*, const void* addr, char* buf, size_t* len) {
  NetAddr a;
  std::string s = "(invalid)";
  size_t n = SockaddrLen(addr);
  if (n && FromSockaddr(addr, n, &a)) s = a.ToString();
  if (*len > 0) {
    std::strncpy(buf, s.c_str(), *len - 1);
    buf[*len - 1] = '\0';
  }
  *len = s.size() + 1;
  return buf;
}

int AvSet(fid_av*, fi_av_set_attr*, fid_av_set**, void*) { return -FI_ENOSYS; }

fi_ops_av kAvOps = {
    .size = sizeof(fi_ops_av),
    .insert = Insert,
    .insertsvc = InsertSvc,
    .insertsym = InsertSym,
    .remove = Remove,
    .lookup = Lookup,
    .straddr = StrAddr,
    .av_set = AvSet,
};

int AvClose(fid* f) {
  delete FromFid<Av>(f);
  return 0;
}

fi_ops kAvFiOps = stubs::FidOps(AvClose);

}  // namespace

int OpenAv(fid_domain* domain, fi_av_attr* attr, fid_av** out, void* context) {
  if (attr->flags & (FI_EVENT | FI_READ | FI_SYMMETRIC)) return -FI_ENOSYS;
  if (attr->name != nullptr) return -FI_ENOSYS;  // no shared AVs
  if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
      attr->type != FI_AV_TABLE) {
    return -FI_EINVAL;
  }
  auto* av = new Av();
  av->fid.fid.fclass = FI_CLASS_AV;
  av->fid.fid.context = context;
  av->fid.fid.ops = &kAvFiOps;
  av->fid.ops = &kAvOps;
  av->domain = FromFid<Domain>(domain);
  av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
  av->addrs.reserve(attr->count);
  *out = &av->fid;
  return 0;
}

}  // namespace braid::libfabric

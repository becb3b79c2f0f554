#include "libfabric/info.h"

#include <netdb.h>
#include <rdma/fi_errno.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

#include "braid/address.h"
#include "libfabric/mr_table.h"
#include "libfabric/provider.h"
#include "libfabric/sockaddr.h"
#include "libfabric/wire_header.h"

namespace braid::libfabric {
namespace {

// Resolves node/service (numeric or by name) to an address. Port 0 when
// service is null.
bool Resolve(const char* node, const char* service, NetAddr* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(node, service ? service : "0", &hints, &res) != 0) {
    return false;
  }
  bool ok = false;
  for (addrinfo* r = res; r && !ok; r = r->ai_next) {
    ok = FromSockaddr(r->ai_addr, r->ai_addrlen, out);
  }
  freeaddrinfo(res);
  return ok;
}

bool NameMatches(const char* asked) {
  return asked == nullptr || std::strcmp(asked, kProviderName) == 0;
}

// True if the application's mr_mode (hints) accepts what RMA needs:
// kRmaMrMode, or FI_MR_BASIC (which implies it). Before API 1.5 mr_mode
// was FI_MR_UNSPEC, FI_MR_BASIC or FI_MR_SCALABLE.
bool RmaMrModeFits(uint32_t version, const fi_info* h) {
  if (h == nullptr || h->domain_attr == nullptr) return true;
  const int m = h->domain_attr->mr_mode;
  if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
    return m == FI_MR_UNSPEC || m == FI_MR_BASIC;
  }
  if (m & FI_MR_BASIC) return true;
  if (m & FI_MR_SCALABLE) return false;
  return (m & kRmaMrMode) == kRmaMrMode;
}

// The mr_mode returned with RMA.
int RmaMrMode(uint32_t version, const fi_info* h) {
  const bool basic =
      FI_VERSION_LT(version, FI_VERSION(1, 5)) ||
      (h && h->domain_attr && (h->domain_attr->mr_mode & FI_MR_BASIC));
  return basic ? FI_MR_BASIC : kRmaMrMode;
}

// -FI_ENODATA if the hints ask for anything not offered, else 0.
int CheckHints(uint32_t version, const fi_info* h,
               const ProviderConfig& config) {
  if (h->caps & ~OfferedCaps(config)) return -FI_ENODATA;
  if ((h->caps & kRmaCaps) && !RmaMrModeFits(version, h)) return -FI_ENODATA;
  switch (h->addr_format) {
    case FI_FORMAT_UNSPEC:
    case FI_SOCKADDR:
    case FI_SOCKADDR_IN:
    case FI_SOCKADDR_IN6:
      break;
    default:
      return -FI_ENODATA;
  }
  if (h->ep_attr) {
    if (h->ep_attr->type != FI_EP_UNSPEC && h->ep_attr->type != FI_EP_RDM) {
      return -FI_ENODATA;
    }
    if (h->ep_attr->tx_ctx_cnt > 1 || h->ep_attr->rx_ctx_cnt > 1) {
      return -FI_ENODATA;
    }
  }
  if (h->fabric_attr && !NameMatches(h->fabric_attr->name)) {
    return -FI_ENODATA;
  }
  if (h->domain_attr) {
    const fi_domain_attr& d = *h->domain_attr;
    if (!NameMatches(d.name)) return -FI_ENODATA;
    if (d.data_progress == FI_PROGRESS_AUTO) return -FI_ENODATA;
    if (d.cq_data_size > 8) return -FI_ENODATA;
    if (d.av_type != FI_AV_UNSPEC && d.av_type != FI_AV_MAP &&
        d.av_type != FI_AV_TABLE) {
      return -FI_ENODATA;
    }
  }
  if (h->tx_attr) {
    if (h->tx_attr->msg_order & ~static_cast<uint64_t>(FI_ORDER_SAS)) {
      return -FI_ENODATA;
    }
    if (h->tx_attr->inject_size > kInjectSize) return -FI_ENODATA;
    if (h->tx_attr->op_flags & ~kTxOpFlags) return -FI_ENODATA;
  }
  if (h->rx_attr) {
    if (h->rx_attr->msg_order & ~static_cast<uint64_t>(FI_ORDER_SAS)) {
      return -FI_ENODATA;
    }
    if (h->rx_attr->op_flags & ~kRxOpFlags) return -FI_ENODATA;
  }
  return 0;
}

int SetAddr(const NetAddr& a, void** addr, size_t* len) {
  sockaddr_storage ss;
  size_t n = ToSockaddr(a, &ss);
  *addr = std::malloc(n);
  if (*addr == nullptr) return -FI_ENOMEM;
  std::memcpy(*addr, &ss, n);
  *len = n;
  return 0;
}

uint64_t Caps(uint32_t version, const fi_info* hints,
              const ProviderConfig& config) {
  const uint64_t offered = OfferedCaps(config);
  if (hints == nullptr || hints->caps == 0) {
    // Everything, less RMA for an application that cannot register memory
    // the way it needs.
    return RmaMrModeFits(version, hints) ? offered : offered & ~kRmaCaps;
  }
  uint64_t caps = hints->caps | FI_LOCAL_COMM | FI_REMOTE_COMM;
  if (!(caps & (FI_SEND | FI_RECV))) caps |= FI_SEND | FI_RECV;
  return caps;
}

void FillAttrs(uint32_t version, const fi_info* hints,
               const ProviderConfig& config, const NetAddr& src, fi_info* fi) {
  fi->caps = Caps(version, hints, config);
  fi->mode = 0;
  fi->addr_format =
      src.family == NetAddr::Family::kIpv6 ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
  fi_tx_attr& tx = *fi->tx_attr;
  tx.caps = fi->caps & (FI_MSG | FI_TAGGED | FI_SEND | FI_RMA | FI_ATOMIC |
                        FI_READ | FI_WRITE);
  tx.op_flags = hints && hints->tx_attr ? hints->tx_attr->op_flags : 0;
  tx.msg_order = FI_ORDER_SAS;
  tx.comp_order = FI_ORDER_NONE;
  tx.inject_size = kInjectSize;
  tx.size = kTxSize;
  tx.iov_limit = kIovLimit;
  tx.rma_iov_limit = (fi->caps & (FI_RMA | FI_ATOMIC)) ? 1 : 0;
  fi_rx_attr& rx = *fi->rx_attr;
  rx.caps =
      fi->caps & (FI_MSG | FI_TAGGED | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE |
                  FI_RMA | FI_ATOMIC | FI_REMOTE_READ | FI_REMOTE_WRITE);
  rx.op_flags = hints && hints->rx_attr ? hints->rx_attr->op_flags : 0;
  rx.msg_order = FI_ORDER_SAS;
  rx.comp_order = FI_ORDER_NONE;
  rx.size = kRxSize;
  rx.iov_limit = kIovLimit;
  fi_ep_attr& ep = *fi->ep_attr;
  ep.type = FI_EP_RDM;
  ep.protocol = FI_PROTO_UNSPEC;
  ep.protocol_version = kHeaderVersion;
  ep.max_msg_size = kMaxMessageBytes - kHeaderBytes;
  ep.mem_tag_format = kTagFormat;
  ep.tx_ctx_cnt = 1;
  ep.rx_ctx_cnt = 1;
  fi_domain_attr& d = *fi->domain_attr;
  d.name = strdup(kProviderName);
  d.threading = FI_THREAD_SAFE;
  d.control_progress = FI_PROGRESS_AUTO;
  d.data_progress = FI_PROGRESS_MANUAL;
  d.resource_mgmt = FI_RM_ENABLED;
  d.av_type =
      hints && hints->domain_attr ? hints->domain_attr->av_type : FI_AV_UNSPEC;
  d.mr_mode = (fi->caps & (FI_RMA | FI_ATOMIC)) ? RmaMrMode(version, hints) : 0;
  d.mr_key_size = 8;
  d.mr_cnt = MrTable::kMaxRegions;
  d.cq_data_size = 8;
  d.cq_cnt = 256;
  d.ep_cnt = 256;
  d.tx_ctx_cnt = 256;
  d.rx_ctx_cnt = 256;
  d.max_ep_tx_ctx = 1;
  d.max_ep_rx_ctx = 1;
  d.mr_iov_limit = 1;
  d.caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
  d.max_err_data = 256;
  fi->fabric_attr->name = strdup(kProviderName);
  fi->fabric_attr->prov_version = kProviderVersion;
}

// The local and (if named) remote address the hints and arguments give.
int Addresses(const char* node, const char* service, uint64_t flags,
              const fi_info* hints, const ProviderConfig& config, NetAddr* src,
              NetAddr* dest) {
  if (!Resolve(config.bind_ip.c_str(), nullptr, src)) {
    return -FI_EINVAL;
  }
  if (hints && hints->src_addr &&
      !FromSockaddr(hints->src_addr, hints->src_addrlen, src)) {
    return -FI_ENODATA;
  }
  if (hints && hints->dest_addr &&
      !FromSockaddr(hints->dest_addr, hints->dest_addrlen, dest)) {
    return -FI_ENODATA;
  }
  if (node || service) {
    NetAddr a;
    const char* host = node ? node : nullptr;
    if (flags & FI_SOURCE) {
      if (host == nullptr) {
        NetAddr bind = *src;
        if (!Resolve(nullptr, service, &a)) return -FI_ENODATA;
        bind.port = a.port;
        *src = bind;
      } else {
        if (!Resolve(host, service, src)) return -FI_ENODATA;
      }
    } else if (host) {
      if (!Resolve(host, service, dest)) return -FI_ENODATA;
    }
  }
  return 0;
}

}  // namespace

int GetInfo(uint32_t version, const char* node, const char* service,
            uint64_t flags, const fi_info* hints, const ProviderConfig& config,
            fi_info** info) {
  *info = nullptr;
  if (hints) {
    int r = CheckHints(version, hints, config);
    if (r) return r;
  }
  NetAddr src, dest;
  int r = Addresses(node, service, flags, hints, config, &src, &dest);
  if (r) return r;
  if (dest.valid() && dest.family != src.family) return -FI_ENODATA;
  if (hints && hints->addr_format == FI_SOCKADDR_IN &&
      src.family != NetAddr::Family::kIpv4) {
    return -FI_ENODATA;
  }
  if (hints && hints->addr_format == FI_SOCKADDR_IN6 &&
      src.family != NetAddr::Family::kIpv6) {
    return -FI_ENODATA;
  }
  fi_info* fi = fi_allocinfo();
  if (fi == nullptr) return -FI_ENOMEM;
  FillAttrs(version, hints, config, src, fi);
  r = SetAddr(src, &fi->src_addr, &fi->src_addrlen);
  if (r == 0 && dest.valid()) {
    r = SetAddr(dest, &fi->dest_addr, &fi->dest_addrlen);
  }
  if (r) {
    fi_freeinfo(fi);
    return r;
  }
  *info = fi;
  return 0;
}

}  // namespace braid::libfabric

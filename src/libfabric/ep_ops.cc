// The fi_ops tables of an endpoint: libfabric's C entry points, each
// taking the domain lock and calling Ep (ep.h).
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "libfabric/atomic_ops.h"
#include "libfabric/config.h"
#include "libfabric/ep.h"
#include "libfabric/info.h"
#include "libfabric/link_mtu.h"
#include "libfabric/provider.h"
#include "libfabric/rma_ops.h"
#include "libfabric/sockaddr.h"
#include "libfabric/stubs.h"

namespace braid::libfabric {
namespace {

Ep* E(fid_ep* ep) { return FromFid<Ep>(ep); }
Ep* E(fid_t f) { return FromFid<Ep>(f); }

using Lock = std::lock_guard<std::mutex>;

void Unbind(Cq* cq, Ep* ep) {
  if (cq == nullptr) return;
  cq->eps.erase(std::remove(cq->eps.begin(), cq->eps.end(), ep), cq->eps.end());
}

int EpClose(fid* f) {
  Ep* ep = E(f);
  {
    Lock l(ep->domain->mu);
    auto& eps = ep->domain->eps;
    eps.erase(std::remove(eps.begin(), eps.end(), ep), eps.end());
    Unbind(ep->tx_cq, ep);
    if (ep->rx_cq != ep->tx_cq) Unbind(ep->rx_cq, ep);
    ep->Close();
  }
  delete ep;
  return 0;
}

int BindCq(Ep* ep, Cq* cq, uint64_t flags) {
  if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) {
    return -FI_EBADFLAGS;
  }
  if (flags & FI_TRANSMIT) {
    ep->tx_cq = cq;
    ep->tx_selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
  }
  if (flags & FI_RECV) {
    ep->rx_cq = cq;
    ep->rx_selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
  }
  if (std::find(cq->eps.begin(), cq->eps.end(), ep) == cq->eps.end()) {
    cq->eps.push_back(ep);
    if (cq->epfd >= 0 && ep->wait_fd() >= 0) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = ep;
      epoll_ctl(cq->epfd, EPOLL_CTL_ADD, ep->wait_fd(), &ev);
    }
  }
  return 0;
}

int EpBind(fid* f, fid* bfid, uint64_t flags) {
  Ep* ep = E(f);
  Lock l(ep->domain->mu);
  switch (bfid->fclass) {
    case FI_CLASS_AV:
      if (ep->av) return -FI_EINVAL;
      ep->av = FromFid<Av>(bfid);
      return 0;
    case FI_CLASS_CQ:
      return BindCq(ep, FromFid<Cq>(bfid), flags);
    case FI_CLASS_EQ:
      return 0;  // no asynchronous events on an RDM endpoint
    default:
      return -FI_ENOSYS;
  }
}

int EpControl(fid* f, int command, void* arg) {
  Ep* ep = E(f);
  Lock l(ep->domain->mu);
  switch (command) {
    case FI_ENABLE:
      if (ep->av == nullptr) return -FI_ENOAV;
      if (ep->tx_cq == nullptr && ep->rx_cq == nullptr) return -FI_ENOCQ;
      ep->enabled = true;
      return 0;
    case FI_GETOPSFLAG: {
      auto* flags = static_cast<uint64_t*>(arg);
      if (*flags & FI_TRANSMIT) {
        *flags = ep->tx_op_flags | FI_TRANSMIT;
      } else if (*flags & FI_RECV) {
        *flags = ep->rx_op_flags | FI_RECV;
      } else {
        return -FI_EINVAL;
      }
      return 0;
    }
    case FI_SETOPSFLAG: {
      uint64_t flags = *static_cast<uint64_t*>(arg);
      if (flags & FI_TRANSMIT) {
        ep->tx_op_flags = flags & ~FI_TRANSMIT;
      } else if (flags & FI_RECV) {
        ep->rx_op_flags = flags & ~FI_RECV;
      } else {
        return -FI_EINVAL;
      }
      return 0;
    }
    default:
      return -FI_ENOSYS;
  }
}

fi_ops kEpFiOps = stubs::FidOps(EpClose, EpBind, EpControl);

ssize_t EpCancel(fid_t f, void* context) {
  Ep* ep = E(f);
  Lock l(ep->domain->mu);
  return ep->Cancel(context);
}
int EpGetopt(fid_t, int, int, void*, size_t*) { return -FI_ENOPROTOOPT; }
int EpSetopt(fid_t, int, int, const void*, size_t) { return -FI_ENOPROTOOPT; }
ssize_t EpRxSizeLeft(fid_ep*) { return kRxSize; }
ssize_t EpTxSizeLeft(fid_ep*) { return kTxSize; }

fi_ops_ep kEpOps = {
    .size = sizeof(fi_ops_ep),
    .cancel = EpCancel,
    .getopt = EpGetopt,
    .setopt = EpSetopt,
    .tx_ctx = stubs::TxCtx,
    .rx_ctx = stubs::RxCtx,
    .rx_size_left = EpRxSizeLeft,
    .tx_size_left = EpTxSizeLeft,
};

int EpGetname(fid_t f, void* addr, size_t* addrlen) {
  Ep* ep = E(f);
  Lock l(ep->domain->mu);
  if (!ep->endpoint) return -FI_EOPBADSTATE;
  sockaddr_storage ss;
  size_t n = ToSockaddr(ep->local_address(), &ss);
  size_t room = *addrlen;
  *addrlen = n;
  if (room < n) return -FI_ETOOSMALL;
  std::memcpy(addr, &ss, n);
  return 0;
}

fi_ops_cm kEpCmOps = {
    .size = sizeof(fi_ops_cm),
    .setname = stubs::Setname,
    .getname = EpGetname,
    .getpeer = stubs::Getpeer,
    .connect = stubs::Connect,
    .listen = stubs::Listen,
    .accept = stubs::Accept,
    .reject = stubs::Reject,
    .shutdown = stubs::Shutdown,
    .join = stubs::Join,
};

// --- FI_MSG ---

ssize_t MsgSend(Ep* ep, const iovec* iov, size_t count, fi_addr_t dest,
                uint64_t data, void* ctx, uint64_t flags,
                bool inject_call = false) {
  Lock l(ep->domain->mu);
  ++ep->app_calls;
  return ep->Send(MsgKind::kMsg, iov, count, dest, 0, data, ctx, flags,
                  inject_call);
}

ssize_t MsgRecv(Ep* ep, const iovec* iov, size_t count, fi_addr_t src,
                void* ctx, uint64_t flags) {
  Lock l(ep->domain->mu);
  ++ep->app_calls;
  return ep->Recv(MsgKind::kMsg, iov, count, src, 0, 0, ctx, flags);
}

ssize_t Recv(fid_ep* f, void* buf, size_t len, void*, fi_addr_t src,
             void* ctx) {
  iovec v{buf, len};
  return MsgRecv(E(f), &v, 1, src, ctx, E(f)->rx_op_flags);
}
ssize_t Recvv(fid_ep* f, const iovec* iov, void**, size_t count, fi_addr_t src,
              void* ctx) {
  return MsgRecv(E(f), iov, count, src, ctx, E(f)->rx_op_flags);
}
ssize_t Recvmsg(fid_ep* f, const fi_msg* m, uint64_t flags) {
  return MsgRecv(E(f), m->msg_iov, m->iov_count, m->addr, m->context, flags);
}
ssize_t Send(fid_ep* f, const void* buf, size_t len, void*, fi_addr_t dest,
             void* ctx) {
  iovec v{const_cast<void*>(buf), len};
  return MsgSend(E(f), &v, 1, dest, 0, ctx, E(f)->tx_op_flags);
}
ssize_t Sendv(fid_ep* f, const iovec* iov, void**, size_t count, fi_addr_t dest,
              void* ctx) {
  return MsgSend(E(f), iov, count, dest, 0, ctx, E(f)->tx_op_flags);
}
ssize_t Sendmsg(fid_ep* f, const fi_msg* m, uint64_t flags) {
  return MsgSend(E(f), m->msg_iov, m->iov_count, m->addr, m->data, m->context,
                 flags);
}
ssize_t Inject(fid_ep* f, const void* buf, size_t len, fi_addr_t dest) {
  iovec v{const_cast<void*>(buf), len};
  return MsgSend(E(f), &v, 1, dest, 0, nullptr, FI_INJECT, true);
}
ssize_t Senddata(fid_ep* f, const void* buf, size_t len, void*, uint64_t data,
                 fi_addr_t dest, void* ctx) {
  iovec v{const_cast<void*>(buf), len};
  return MsgSend(E(f), &v, 1, dest, data, ctx,
                 E(f)->tx_op_flags | FI_REMOTE_CQ_DATA);
}
ssize_t Injectdata(fid_ep* f, const void* buf, size_t len, uint64_t data,
                   fi_addr_t dest) {
  iovec v{const_cast<void*>(buf), len};
  return MsgSend(E(f), &v, 1, dest, data, nullptr,
                 FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

fi_ops_msg kMsgOps = {
    .size = sizeof(fi_ops_msg),
    .recv = Recv,
    .recvv = Recvv,
    .recvmsg = Recvmsg,
    .send = Send,
    .sendv = Sendv,
    .sendmsg = Sendmsg,
    .inject = Inject,
    .senddata = Senddata,
    .injectdata = Injectdata,
};

// --- FI_TAGGED ---

ssize_t TSend(Ep* ep, const iovec* iov, size_t count, fi_addr_t dest,
              uint64_t tag, uint64_t data, void* ctx, uint64_t flags,
              bool inject_call = false) {
  Lock l(ep->domain->mu);
  ++ep->app_calls;
  return ep->Send(MsgKind::kTagged, iov, count, dest, tag, data, ctx, flags,
                  inject_call);
}

ssize_t TRecv(Ep* ep, const iovec* iov, size_t count, fi_addr_t src,
              uint64_t tag, uint64_t ignore, void* ctx, uint64_t flags) {
  Lock l(ep->domain->mu);
  ++ep->app_calls;
  return ep->Recv(MsgKind::kTagged, iov, count, src, tag, ignore, ctx, flags);
}

ssize_t Trecv(fid_ep* f, void* buf, size_t len, void*, fi_addr_t src,
              uint64_t tag, uint64_t ignore, void* ctx) {
  iovec v{buf, len};
  return TRecv(E(f), &v, 1, src, tag, ignore, ctx, E(f)->rx_op_flags);
}
ssize_t Trecvv(fid_ep* f, const iovec* iov, void**, size_t count, fi_addr_t src,
               uint64_t tag, uint64_t ignore, void* ctx) {
  return TRecv(E(f), iov, count, src, tag, ignore, ctx, E(f)->rx_op_flags);
}
ssize_t Trecvmsg(fid_ep* f, const fi_msg_tagged* m, uint64_t flags) {
  return TRecv(E(f), m->msg_iov, m->iov_count, m->addr, m->tag, m->ignore,
               m->context, flags);
}
ssize_t Tsend(fid_ep* f, const void* buf, size_t len, void*, fi_addr_t dest,
              uint64_t tag, void* ctx) {
  iovec v{const_cast<void*>(buf), len};
  return TSend(E(f), &v, 1, dest, tag, 0, ctx, E(f)->tx_op_flags);
}
ssize_t Tsendv(fid_ep* f, const iovec* iov, void**, size_t count,
               fi_addr_t dest, uint64_t tag, void* ctx) {
  return TSend(E(f), iov, count, dest, tag, 0, ctx, E(f)->tx_op_flags);
}
ssize_t Tsendmsg(fid_ep* f, const fi_msg_tagged* m, uint64_t flags) {
  return TSend(E(f), m->msg_iov, m->iov_count, m->addr, m->tag, m->data,
               m->context, flags);
}
ssize_t Tinject(fid_ep* f, const void* buf, size_t len, fi_addr_t dest,
                uint64_t tag) {
  iovec v{const_cast<void*>(buf), len};
  return TSend(E(f), &v, 1, dest, tag, 0, nullptr, FI_INJECT, true);
}
ssize_t Tsenddata(fid_ep* f, const void* buf, size_t len, void*, uint64_t data,
                  fi_addr_t dest, uint64_t tag, void* ctx) {
  iovec v{const_cast<void*>(buf), len};
  return TSend(E(f), &v, 1, dest, tag, data, ctx,
               E(f)->tx_op_flags | FI_REMOTE_CQ_DATA);
}
ssize_t Tinjectdata(fid_ep* f, const void* buf, size_t len, uint64_t data,
                    fi_addr_t dest, uint64_t tag) {
  iovec v{const_cast<void*>(buf), len};
  return TSend(E(f), &v, 1, dest, tag, data, nullptr,
               FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

fi_ops_tagged kTaggedOps = {
    .size = sizeof(fi_ops_tagged),
    .recv = Trecv,
    .recvv = Trecvv,
    .recvmsg = Trecvmsg,
    .send = Tsend,
    .sendv = Tsendv,
    .sendmsg = Tsendmsg,
    .inject = Tinject,
    .senddata = Tsenddata,
    .injectdata = Tinjectdata,
};

absl::StatusOr<std::unique_ptr<Endpoint>> OpenBraid(const fi_info* info) {
  const ProviderConfig& cfg = Config();
  EndpointOptions o;
  NetAddr bind;
  if (info->src_addr &&
      FromSockaddr(info->src_addr, info->src_addrlen, &bind)) {
    o.bind = bind.ToString();
  } else {
    o.bind = absl::StrCat(cfg.bind_ip, ":0");
  }
  // Unset, FI_BRAID_MTU is the bound interface's (at most a jumbo frame).
  o.mtu = cfg.mtu;
  if (o.mtu == 0) {
    auto ip = NetAddr::Parse(o.bind, /*allow_port_zero=*/true);
    o.mtu = DefaultMtu(ip.ok() ? *ip : NetAddr());
  }
  o.protocol.paths = cfg.paths;
  o.protocol.mode = cfg.mode;
  o.protocol.max_message_bytes = kMaxMessageBytes;
  o.protocol.peer_timeout = cfg.peer_timeout;
  return Endpoint::Open(o);
}

}  // namespace

int OpenEp(fid_domain* domain, fi_info* info, fid_ep** out, void* context) {
  Domain* d = FromFid<Domain>(domain);
  if (info == nullptr || info->ep_attr == nullptr ||
      (info->ep_attr->type != FI_EP_RDM &&
       info->ep_attr->type != FI_EP_UNSPEC)) {
    return -FI_EINVAL;
  }
  auto endpoint = OpenBraid(info);
  if (!endpoint.ok()) {
    FI_WARN(Provider(), FI_LOG_EP_CTRL, "opening the braid endpoint: %s\n",
            std::string(endpoint.status().message()).c_str());
    return absl::IsAlreadyExists(endpoint.status()) ? -FI_EADDRINUSE
                                                    : -FI_EINVAL;
  }
  auto* ep = new Ep();
  ep->fid.fid.fclass = FI_CLASS_EP;
  ep->fid.fid.context = context;
  ep->fid.fid.ops = &kEpFiOps;
  ep->fid.ops = &kEpOps;
  ep->fid.cm = &kEpCmOps;
  ep->fid.msg = &kMsgOps;
  ep->fid.tagged = &kTaggedOps;
  ep->fid.rma = RmaOps();
  ep->fid.atomic = AtomicOps();
  ep->domain = d;
  ep->caps = info->caps ? info->caps : OfferedCaps(Config());
  if (info->tx_attr) ep->tx_op_flags = info->tx_attr->op_flags;
  if (info->rx_attr) ep->rx_op_flags = info->rx_attr->op_flags;
  ep->endpoint = std::move(*endpoint);
  // Runs inside Poll, which the provider calls with the domain lock held.
  ep->endpoint->SetPlacementHandler(
      [ep](const PlacementRequest& req, absl::Span<uint8_t>* dest) {
        return ep->Place(req, dest);
      });
  {
    std::lock_guard<std::mutex> l(d->mu);
    d->eps.push_back(ep);
  }
  *out = &ep->fid;
  return 0;
}

}  // namespace braid::libfabric

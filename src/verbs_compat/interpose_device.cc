// Exported libibverbs entry points for devices and contexts: braid0 is
// appended to the device list; calls on braid0 objects are served here and
// every other call goes to the real libibverbs.
#include <endian.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "braid/verbs.h"
#include "verbs_compat/context.h"
#include "verbs_compat/device.h"
#include "verbs_compat/real_verbs.h"
#include "verbs_compat/shell.h"

#undef ibv_get_device_list
#undef ibv_query_port

using braid::verbs_compat::BraidConfig;
using braid::verbs_compat::BraidDevice;
using braid::verbs_compat::Context;
using braid::verbs_compat::IsBraidContext;
using braid::verbs_compat::IsBraidDevice;

namespace {

// Lists handed out -> the real list they extend (may be null).
struct ListMap {
  std::mutex mu;
  absl::flat_hash_map<ibv_device**, ibv_device**> lists;
};
ListMap& Lists() {
  static ListMap* m = new ListMap();
  return *m;
}

// For the gid_type query (libibverbs-private enum ibv_gid_type_sysfs).
constexpr int kGidTypeSysfsRoceV2 = 1;

}  // namespace

extern "C" {

ibv_device** ibv_get_device_list(int* num_devices) {
  BRAID_REAL(ibv_get_device_list, "IBVERBS_1.1");
  int n_real = 0;
  ibv_device** real_list = real ? real(&n_real) : nullptr;
  const int saved_errno = errno;
  ibv_device* b = BraidDevice();
  if (b == nullptr) {
    if (num_devices) *num_devices = n_real;
    errno = saved_errno;
    return real_list;
  }
  if (real_list == nullptr) n_real = 0;
  auto** list =
      static_cast<ibv_device**>(calloc(n_real + 2, sizeof(ibv_device*)));
  if (list == nullptr) {
    errno = ENOMEM;
    return real_list;
  }
  for (int i = 0; i < n_real; ++i) list[i] = real_list[i];
  list[n_real] = b;
  {
    std::lock_guard<std::mutex> lk(Lists().mu);
    Lists().lists[list] = real_list;
  }
  if (num_devices) *num_devices = n_real + 1;
  return list;
}

void ibv_free_device_list(ibv_device** list) {
  BRAID_REAL(ibv_free_device_list, "IBVERBS_1.1");
  ibv_device** real_list = nullptr;
  bool ours = false;
  {
    std::lock_guard<std::mutex> lk(Lists().mu);
    auto it = Lists().lists.find(list);
    if (it != Lists().lists.end()) {
      ours = true;
      real_list = it->second;
      Lists().lists.erase(it);
    }
  }
  if (!ours) {
    if (real) real(list);
    return;
  }
  if (real_list != nullptr && real) real(real_list);
  free(list);
}

const char* ibv_get_device_name(ibv_device* device) {
  if (IsBraidDevice(device)) return device->name;
  BRAID_REAL(ibv_get_device_name, "IBVERBS_1.1");
  return real ? real(device) : nullptr;
}

__be64 ibv_get_device_guid(ibv_device* device) {
  if (IsBraidDevice(device)) return braid::verbs_compat::NodeGuidBe();
  BRAID_REAL(ibv_get_device_guid, "IBVERBS_1.1");
  return real ? real(device) : 0;
}

int ibv_get_device_index(ibv_device* device) {
  if (IsBraidDevice(device)) return -1;
  BRAID_REAL(ibv_get_device_index, "IBVERBS_1.9");
  return real ? real(device) : -1;
}

ibv_context* ibv_open_device(ibv_device* device) {
  if (IsBraidDevice(device)) {
    absl::StatusOr<Context*> c = Context::Open(device, BraidConfig());
    if (!c.ok()) {
      std::fprintf(stderr, "braid-verbs: %s\n",
                   std::string(c.status().message()).c_str());
      errno = EADDRINUSE;
      return nullptr;
    }
    return (*c)->ibv();
  }
  BRAID_REAL(ibv_open_device, "IBVERBS_1.1");
  if (!real) {
    errno = ENOSYS;
    return nullptr;
  }
  return real(device);
}

int ibv_close_device(ibv_context* context) {
  if (IsBraidContext(context)) {
    Context* ctx = Context::From(context);
    ctx->Linger(braid::DurationNs::Millis(500));
    delete ctx;
    return 0;
  }
  BRAID_REAL(ibv_close_device, "IBVERBS_1.1");
  return real ? real(context) : ENOSYS;
}

int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  if (IsBraidContext(context)) {
    Context* ctx = Context::From(context);
    for (;;) {
      {
        std::lock_guard<std::mutex> lk(ctx->mu());
        if (ctx->async().Take(event)) return 0;
      }
      // None queued: a non-blocking async_fd fails as read(2) would, a
      // blocking one waits for the next event (AsyncEvents::Take alone reads
      // the fd, with the lock held, so a destroy can drop queued events).
      const int fl = fcntl(context->async_fd, F_GETFL);
      if (fl < 0) return -1;
      if (fl & O_NONBLOCK) {
        errno = EAGAIN;
        return -1;
      }
      pollfd pfd{context->async_fd, POLLIN, 0};
      if (poll(&pfd, 1, -1) < 0 && errno != EINTR) return -1;
    }
  }
  BRAID_REAL(ibv_get_async_event, "IBVERBS_1.1");
  return real ? real(context, event) : -1;
}

void ibv_ack_async_event(ibv_async_event* event) {
  const ibv_context* c = braid::verbs_compat::AsyncEventContext(*event);
  if (c != nullptr && IsBraidContext(c)) {
    braid::verbs_compat::AckAsyncEvent(*event);
    return;
  }
  BRAID_REAL(ibv_ack_async_event, "IBVERBS_1.1");
  if (real) real(event);
}

int ibv_query_device(ibv_context* context, ibv_device_attr* device_attr) {
  if (IsBraidContext(context)) {
    braid::verbs_compat::FillDeviceAttr(Context::From(context), device_attr);
    return 0;
  }
  BRAID_REAL(ibv_query_device, "IBVERBS_1.1");
  return real ? real(context, device_attr) : ENOSYS;
}

int ibv_query_port(ibv_context* context, uint8_t port_num,
                   _compat_ibv_port_attr* port_attr) {
  if (IsBraidContext(context)) {
    if (port_num != 1) return EINVAL;
    braid::verbs_compat::FillPortAttr(
        Context::From(context), reinterpret_cast<ibv_port_attr*>(port_attr));
    return 0;
  }
  BRAID_REAL(ibv_query_port, "IBVERBS_1.1");
  return real ? real(context, port_num, port_attr) : ENOSYS;
}

int ibv_query_gid(ibv_context* context, uint8_t port_num, int index,
                  ibv_gid* gid) {
  if (IsBraidContext(context)) {
    if (port_num != 1 || index != 0) return -1;
    *gid = Context::From(context)->gid();
    return 0;
  }
  BRAID_REAL(ibv_query_gid, "IBVERBS_1.1");
  return real ? real(context, port_num, index, gid) : -1;
}

int _ibv_query_gid_ex(ibv_context* context, uint32_t port_num,
                      uint32_t gid_index, ibv_gid_entry* entry, uint32_t flags,
                      size_t entry_size) {
  if (IsBraidContext(context)) {
    if (flags != 0) return EINVAL;
    if (port_num != 1) return EINVAL;
    if (gid_index != 0) return ENODATA;
    ibv_gid_entry e;
    std::memset(&e, 0, sizeof(e));
    e.gid = Context::From(context)->gid();
    e.gid_index = 0;
    e.port_num = 1;
    e.gid_type = IBV_GID_TYPE_ROCE_V2;
    e.ndev_ifindex = 0;
    std::memcpy(entry, &e, std::min(entry_size, sizeof(e)));
    return 0;
  }
  BRAID_REAL(_ibv_query_gid_ex, "IBVERBS_1.11");
  return real ? real(context, port_num, gid_index, entry, flags, entry_size)
              : ENOSYS;
}

ssize_t _ibv_query_gid_table(ibv_context* context, ibv_gid_entry* entries,
                             size_t max_entries, uint32_t flags,
                             size_t entry_size) {
  if (IsBraidContext(context)) {
    if (flags != 0) return -EINVAL;
    if (max_entries < 1) return -EINVAL;
    const int r = _ibv_query_gid_ex(context, 1, 0, entries, 0, entry_size);
    return r == 0 ? 1 : -r;
  }
  BRAID_REAL(_ibv_query_gid_table, "IBVERBS_1.11");
  return real ? real(context, entries, max_entries, flags, entry_size)
              : -ENOSYS;
}

// libibverbs-private (IBVERBS_PRIVATE_*), used by ibv_devinfo.
int ibv_query_gid_type(ibv_context* context, uint8_t port_num,
                       unsigned int index, int* type) {
  if (IsBraidContext(context)) {
    if (port_num != 1 || index != 0) return -1;
    *type = kGidTypeSysfsRoceV2;
    return 0;
  }
  static const auto real =
      reinterpret_cast<int (*)(ibv_context*, uint8_t, unsigned int, int*)>(
          braid::verbs_compat::FindReal("ibv_query_gid_type",
                                        BRAID_IBVERBS_PRIVATE));
  return real ? real(context, port_num, index, type) : -1;
}

int ibv_query_pkey(ibv_context* context, uint8_t port_num, int index,
                   __be16* pkey) {
  if (IsBraidContext(context)) {
    if (port_num != 1 || index != 0) return -1;
    *pkey = htobe16(0xffff);
    return 0;
  }
  BRAID_REAL(ibv_query_pkey, "IBVERBS_1.1");
  return real ? real(context, port_num, index, pkey) : -1;
}

int ibv_get_pkey_index(ibv_context* context, uint8_t port_num, __be16 pkey) {
  if (IsBraidContext(context)) {
    return (port_num == 1 && pkey == htobe16(0xffff)) ? 0 : -1;
  }
  BRAID_REAL(ibv_get_pkey_index, "IBVERBS_1.5");
  return real ? real(context, port_num, pkey) : -1;
}

int ibv_resolve_eth_l2_from_gid(ibv_context* context, ibv_ah_attr* attr,
                                uint8_t eth_mac[6], uint16_t* vid) {
  if (IsBraidContext(context)) {
    // A locally administered MAC derived from the destination GID.
    eth_mac[0] = 0x02;
    std::memcpy(eth_mac + 1, attr->grh.dgid.raw + 11, 5);
    if (vid) *vid = 0xffff;
    return 0;
  }
  BRAID_REAL(ibv_resolve_eth_l2_from_gid, "IBVERBS_1.1");
  return real ? real(context, attr, eth_mac, vid) : ENOSYS;
}

int braid_verbs_query_stats_sized(ibv_context* context, braid_verbs_stats* out,
                                  size_t size) {
  if (!IsBraidContext(context) || out == nullptr || size == 0 ||
      size % sizeof(uint64_t) != 0) {
    return EINVAL;
  }
  braid_verbs_stats all{};
  Context::From(context)->FillStats(&all);
  std::memcpy(out, &all, std::min(size, sizeof(all)));
  return 0;
}

// The symbol programs built before braid_verbs_query_stats_sized call (the
// header now maps the name to the sized call): the struct as it was then.
#undef braid_verbs_query_stats
int braid_verbs_query_stats(ibv_context* context, braid_verbs_stats* out) {
  return braid_verbs_query_stats_sized(context, out,
                                       offsetof(braid_verbs_stats, acks_sent));
}

}  // extern "C"

#include "verbs_compat/device.h"

#include <endian.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "verbs_compat/context.h"
#include "verbs_compat/limits.h"
#include "verbs_compat/shell.h"

namespace braid::verbs_compat {
namespace {

struct DeviceState {
  ibv_device device;
  VerbsConfig config;
  bool valid = false;
};

// getenv, with the BRAID_VERBS_ prefix of `name` replaced by this library's.
const char* LibraryGetenv(const char* name) {
  const LibraryIdentity& id = ThisLibrary();
  constexpr char kPrefix[] = "BRAID_VERBS_";
  constexpr size_t kLen = sizeof(kPrefix) - 1;
  if (std::strcmp(id.env_prefix, kPrefix) == 0 ||
      std::strncmp(name, kPrefix, kLen) != 0) {
    return getenv(name);
  }
  const std::string renamed = std::string(id.env_prefix) + (name + kLen);
  return getenv(renamed.c_str());
}

DeviceState& State() {
  static DeviceState* s = [] {
    auto* st = new DeviceState();
    std::memset(&st->device, 0, sizeof(st->device));
    const char* name = ThisLibrary().device_name;
    absl::StatusOr<VerbsConfig> c = LoadConfig(LibraryGetenv, name);
    if (!c.ok()) {
      std::fprintf(stderr, "braid-verbs: %s; %s is not listed\n",
                   std::string(c.status().message()).c_str(), name);
      return st;
    }
    st->config = *c;
    if (c->disabled) return st;
    ibv_device& d = st->device;
    d.node_type = IBV_NODE_CA;
    d.transport_type = IBV_TRANSPORT_IB;
    std::snprintf(d.name, sizeof(d.name), "%s", name);
    std::snprintf(d.dev_name, sizeof(d.dev_name), "uverbs-%s", name);
    std::snprintf(d.dev_path, sizeof(d.dev_path),
                  "/sys/class/infiniband_verbs/uverbs-%s", name);
    std::snprintf(d.ibdev_path, sizeof(d.ibdev_path),
                  "/sys/class/infiniband/%s", name);
    st->valid = true;
    return st;
  }();
  return *s;
}

}  // namespace

__attribute__((weak)) const LibraryIdentity& ThisLibrary() {
  static const LibraryIdentity id{"braid0", "BRAID_VERBS_"};
  return id;
}

bool IsBraidDevice(const ibv_device* device) {
  return device != nullptr && device == &State().device && State().valid;
}

ibv_device* BraidDevice() {
  DeviceState& s = State();
  return s.valid ? &s.device : nullptr;
}

const VerbsConfig& BraidConfig() { return State().config; }

uint64_t NodeGuidBe() { return htobe64(0x02b4a1d0000000b0ull); }

void FillDeviceAttr(Context* ctx, ibv_device_attr* a) {
  std::memset(a, 0, sizeof(*a));
  std::snprintf(a->fw_ver, sizeof(a->fw_ver), "braid-0.1.0");
  a->node_guid = NodeGuidBe();
  a->sys_image_guid = NodeGuidBe();
  a->max_mr_size = 1ull << 40;
  a->page_size_cap = 4096;
  a->vendor_id = kVendorId;
  a->vendor_part_id = kVendorPartId;
  a->hw_ver = kHwVer;
  a->max_qp = kMaxQp;
  a->max_qp_wr = kMaxQpWr;
  a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE |
                        IBV_DEVICE_PORT_ACTIVE_EVENT;
  a->max_sge = kMaxSge;
  a->max_sge_rd = kMaxSge;
  a->max_cq = kMaxCq;
  a->max_cqe = kMaxCqe;
  a->max_mr = kMaxMr;
  a->max_pd = kMaxPd;
  a->max_qp_rd_atom = kMaxRdAtom;
  a->max_ee_rd_atom = 0;
  a->max_res_rd_atom = kMaxRdAtom * kMaxQp;
  a->max_qp_init_rd_atom = kMaxRdAtom;
  a->max_ee_init_rd_atom = 0;
  a->atomic_cap = IBV_ATOMIC_HCA;
  a->max_ah = kMaxAh;
  a->max_srq = kMaxSrq;
  a->max_srq_wr = kMaxSrqWr;
  a->max_srq_sge = kMaxSrqSge;
  a->max_pkeys = 1;
  a->local_ca_ack_delay = 0;
  a->phys_port_cnt = 1;
  (void)ctx;
}

void FillDeviceAttrEx(Context* ctx, ibv_device_attr_ex* attr,
                      size_t attr_size) {
  ibv_device_attr_ex full;
  std::memset(&full, 0, sizeof(full));
  FillDeviceAttr(ctx, &full.orig_attr);
  full.max_dm_size = 0;
  full.pci_atomic_caps.fetch_add = 0;
  std::memcpy(attr, &full, std::min(attr_size, sizeof(full)));
}

void FillPortAttr(Context* ctx, ibv_port_attr* p) {
  std::memset(p, 0, sizeof(*p));
  p->state = IBV_PORT_ACTIVE;
  p->max_mtu = IBV_MTU_4096;
  p->active_mtu = IBV_MTU_4096;
  p->gid_tbl_len = 1;
  p->port_cap_flags = 0;
  p->max_msg_sz = ctx->max_message_bytes() - 64;
  p->bad_pkey_cntr = 0;
  p->qkey_viol_cntr = 0;
  p->pkey_tbl_len = 1;
  p->lid = ctx->local().port;
  p->sm_lid = 0;
  p->lmc = 0;
  p->max_vl_num = 1;
  p->sm_sl = 0;
  p->subnet_timeout = 0;
  p->init_type_reply = 0;
  p->active_width = 2;   // 4x
  p->active_speed = 32;  // EDR (25 Gb/s per lane)
  p->phys_state = 5;     // LinkUp
  p->link_layer = IBV_LINK_LAYER_ETHERNET;
  p->flags = 0;
  p->port_cap_flags2 = 0;
}

}  // namespace braid::verbs_compat

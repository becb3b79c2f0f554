#include "backend/verbs_ud/ud_device.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/verbs_ud/ud_grh.h"

namespace braid::backend {
namespace {

constexpr uint32_t kSlotAlign = 64;

uint32_t RoundUp(uint32_t n, uint32_t a) { return (n + a - 1) / a * a; }

// A refusal by the device, as a status naming the call and errno.
absl::Status Refused(const char* call, int err, const std::string& dev) {
  const std::string what =
      absl::StrCat(call, " on ", dev, " failed: ", std::strerror(err));
  if (err == ENOMEM || err == EAGAIN || err == ENOSPC) {
    return absl::ResourceExhaustedError(what);
  }
  if (err == EINVAL) return absl::InvalidArgumentError(what);
  return absl::UnavailableError(what);
}

}  // namespace

absl::StatusOr<std::unique_ptr<UdDevice>> UdDevice::Open(
    const UdDeviceConfig& cfg, const UdVerbsOps& ops) {
  if (cfg.qkey & 0x80000000u) {
    return absl::InvalidArgumentError(
        absl::StrCat("ud.qkey 0x", absl::Hex(cfg.qkey),
                     " has the high bit set (a privileged Q_Key)"));
  }
  if (cfg.send_queue == 0 || cfg.recv_queue == 0) {
    return absl::InvalidArgumentError("ud.send_queue and ud.recv_queue: >= 1");
  }
  std::unique_ptr<UdDevice> d(new UdDevice(cfg, ops));
  if (absl::Status s = d->OpenContext(); !s.ok()) return s;
  if (absl::Status s = d->CheckPort(); !s.ok()) return s;
  if (absl::Status s = d->MakeObjects(); !s.ok()) return s;
  if (absl::Status s = d->MakePool(); !s.ok()) return s;
  if (absl::Status s = d->Reactivate(); !s.ok()) return s;
  return d;
}

absl::Status UdDevice::OpenContext() {
  int n = 0;
  ibv_device** list = ops_.get_device_list(&n);
  if (list == nullptr || n == 0) {
    const int err = errno;
    if (list != nullptr) ops_.free_device_list(list);
    return absl::NotFoundError(absl::StrCat(
        "ud.device: no RDMA device on this host (ibv_get_device_list: ",
        list == nullptr ? std::strerror(err) : "empty",
        "); load the NIC's driver, or libbraid-verbs.so for braid0"));
  }
  ibv_device* dev = nullptr;
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.emplace_back(ops_.get_device_name(list[i]));
    if (dev == nullptr &&
        (cfg_.device.empty() || names.back() == cfg_.device)) {
      dev = list[i];
      name_ = names.back();
    }
  }
  if (dev == nullptr) {
    ops_.free_device_list(list);
    return absl::NotFoundError(
        absl::StrCat("ud.device: no device '", cfg_.device,
                     "' (there are: ", absl::StrJoin(names, ", "), ")"));
  }
  ctx_ = ops_.open_device(dev);
  const int err = errno;
  ops_.free_device_list(list);
  if (ctx_ == nullptr) return Refused("ibv_open_device", err, name_);
  // Async events are read without blocking (VerbsUdBackend checks them).
  const int fl = fcntl(ctx_->async_fd, F_GETFL);
  if (fl >= 0) fcntl(ctx_->async_fd, F_SETFL, fl | O_NONBLOCK);
  return absl::OkStatus();
}

absl::Status UdDevice::CheckPort() {
  ibv_port_attr pa{};
  if (int rc = ops_.query_port(ctx_, cfg_.port, &pa); rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ud.port ", cfg_.port, ": ibv_query_port on ", name_,
                     " failed: ", std::strerror(rc > 0 ? rc : errno)));
  }
  if (pa.state != IBV_PORT_ACTIVE) {
    return absl::InvalidArgumentError(
        absl::StrCat("ud.port ", cfg_.port, " of ", name_, " is not active (",
                     ibv_port_state_str(pa.state), ")"));
  }
  if (cfg_.gid_index >= static_cast<uint32_t>(pa.gid_tbl_len) ||
      ops_.query_gid(ctx_, cfg_.port, static_cast<int>(cfg_.gid_index),
                     &gid_) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ud.gid_index ", cfg_.gid_index, ": ", name_, " port ",
                     cfg_.port, " has ", pa.gid_tbl_len, " GIDs"));
  }
  static const uint8_t kZero[16] = {0};
  if (std::memcmp(gid_.raw, kZero, 16) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ud.gid_index ", cfg_.gid_index, " of ", name_, " port ",
                     cfg_.port, " is empty (no address configured there)"));
  }
  const uint32_t mtu = MtuBytes(pa.active_mtu);
  if (cfg_.max_datagram > mtu) {
    return absl::InvalidArgumentError(
        absl::StrCat("ud.max_datagram ", cfg_.max_datagram, " exceeds ", name_,
                     " port ", cfg_.port, "'s active MTU of ", mtu));
  }
  max_datagram_ = cfg_.max_datagram ? cfg_.max_datagram : mtu;
  return absl::OkStatus();
}

absl::Status UdDevice::MakeObjects() {
  pd_ = ops_.alloc_pd(ctx_);
  if (pd_ == nullptr) return Refused("ibv_alloc_pd", errno, name_);
  send_cq_ = ops_.create_cq(ctx_, static_cast<int>(cfg_.send_queue), nullptr,
                            nullptr, 0);
  if (send_cq_ == nullptr) return Refused("ibv_create_cq (send)", errno, name_);
  // Receive completions with the time the device wrote them, where it can.
  ibv_cq_init_attr_ex ca{};
  ca.cqe = cfg_.recv_queue;
  ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_SRC_QP |
                IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
  recv_cq_ex_ = ops_.create_cq_ex(ctx_, &ca);
  if (recv_cq_ex_ != nullptr) {
    recv_cq_ = ibv_cq_ex_to_cq(recv_cq_ex_);
  } else {
    recv_cq_ = ops_.create_cq(ctx_, static_cast<int>(cfg_.recv_queue), nullptr,
                              nullptr, 0);
  }
  if (recv_cq_ == nullptr) return Refused("ibv_create_cq (recv)", errno, name_);
  ibv_qp_init_attr a{};
  a.send_cq = send_cq_;
  a.recv_cq = recv_cq_;
  a.qp_type = IBV_QPT_UD;
  a.sq_sig_all = 0;
  a.cap.max_send_wr = cfg_.send_queue;
  a.cap.max_recv_wr = cfg_.recv_queue;
  a.cap.max_send_sge = 2;
  a.cap.max_recv_sge = 1;
  qp_ = ops_.create_qp(pd_, &a);
  if (qp_ == nullptr) return Refused("ibv_create_qp (UD)", errno, name_);
  return absl::OkStatus();
}

absl::Status UdDevice::MakePool() {
  send_slot_ = RoundUp(max_datagram_, kSlotAlign);
  recv_slot_ = RoundUp(kGrhBytes + max_datagram_, kSlotAlign);
  pool_bytes_ = size_t{cfg_.send_queue} * send_slot_ +
                size_t{cfg_.recv_queue} * recv_slot_;
  void* p = mmap(nullptr, pool_bytes_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    const size_t want = pool_bytes_;
    pool_bytes_ = 0;
    return absl::ResourceExhaustedError(
        absl::StrCat("ud: cannot map ", want, " bytes of buffers"));
  }
  pool_ = static_cast<uint8_t*>(p);
  pool_mr_ = ops_.reg_mr(pd_, pool_, pool_bytes_, IBV_ACCESS_LOCAL_WRITE);
  if (pool_mr_ == nullptr) {
    return Refused("ibv_reg_mr (buffer pool)", errno, name_);
  }
  return absl::OkStatus();
}

absl::Status UdDevice::Reactivate() {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RESET;
  if (int rc = ops_.modify_qp(qp_, &a, IBV_QP_STATE); rc != 0) {
    return Refused("ibv_modify_qp (RESET)", rc, name_);
  }
  a = {};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = cfg_.port;
  a.qkey = cfg_.qkey;
  if (int rc = ops_.modify_qp(
          qp_, &a,
          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
      rc != 0) {
    return Refused("ibv_modify_qp (INIT)", rc, name_);
  }
  a = {};
  a.qp_state = IBV_QPS_RTR;
  if (int rc = ops_.modify_qp(qp_, &a, IBV_QP_STATE); rc != 0) {
    return Refused("ibv_modify_qp (RTR)", rc, name_);
  }
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (int rc = ops_.modify_qp(qp_, &a, IBV_QP_STATE | IBV_QP_SQ_PSN); rc != 0) {
    return Refused("ibv_modify_qp (RTS)", rc, name_);
  }
  return absl::OkStatus();
}

void UdDevice::DestroyQp() {
  if (qp_ != nullptr) ops_.destroy_qp(qp_);
  qp_ = nullptr;
}

UdDevice::~UdDevice() {
  if (qp_ != nullptr) ops_.destroy_qp(qp_);
  if (pool_mr_ != nullptr) ops_.dereg_mr(pool_mr_);
  if (pool_ != nullptr) munmap(pool_, pool_bytes_);
  if (send_cq_ != nullptr) ops_.destroy_cq(send_cq_);
  if (recv_cq_ != nullptr) ops_.destroy_cq(recv_cq_);
  if (pd_ != nullptr) ops_.dealloc_pd(pd_);
  if (ctx_ != nullptr) ops_.close_device(ctx_);
}

}  // namespace braid::backend

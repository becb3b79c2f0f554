// The verbs objects behind one UD endpoint: the device context, protection
// domain, send and receive completion queues, the UD queue pair, and one
// registered pool holding the send and receive buffers. Setup and teardown
// only; the datapath is VerbsUdBackend's.
#ifndef BRAID_BACKEND_VERBS_UD_UD_DEVICE_H_
#define BRAID_BACKEND_VERBS_UD_UD_DEVICE_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "backend/verbs_ud/ud_verbs_ops.h"

namespace braid::backend {

struct UdDeviceConfig {
  std::string device;  // "" = the first device
  uint8_t port = 1;
  uint32_t gid_index = 0;
  uint32_t qkey = 0;
  uint32_t send_queue = 512;
  uint32_t recv_queue = 1024;
  uint32_t max_datagram = 0;  // 0 = the port's active MTU
};

class UdDevice {
 public:
  // Opens `cfg.device` and makes the objects; the queue pair is left in
  // RTS, ready to send and receive (receives are not posted yet). Errors:
  // NotFound (no such device, or no device at all: the names there are
  // listed), InvalidArgument (port or GID index out of range, a port that
  // is not active, a privileged Q_Key, max_datagram over the port's MTU),
  // ResourceExhausted (the device refused a queue, a CQ or the buffer
  // registration), Unavailable (any other refusal), each naming the call.
  static absl::StatusOr<std::unique_ptr<UdDevice>> Open(
      const UdDeviceConfig& cfg, const UdVerbsOps& ops);
  ~UdDevice();
  UdDevice(const UdDevice&) = delete;
  UdDevice& operator=(const UdDevice&) = delete;

  // Takes the queue pair from any state (error, after a fatal completion)
  // back through RESET, INIT and RTR to RTS. Work requests it held are gone;
  // the caller re-posts receives.
  absl::Status Reactivate();
  // Destroys the queue pair now (before the rest, at shutdown); nothing may
  // use it afterwards.
  void DestroyQp();

  ibv_context* context() const { return ctx_; }
  ibv_pd* pd() const { return pd_; }
  ibv_cq* send_cq() const { return send_cq_; }
  ibv_cq* recv_cq() const { return recv_cq_; }
  // The receive CQ as an extended CQ that reports each completion's
  // CLOCK_REALTIME time (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK), or
  // nullptr where the device cannot (recv_cq() is then a plain CQ).
  ibv_cq_ex* recv_cq_stamped() const { return recv_cq_ex_; }
  ibv_qp* qp() const { return qp_; }
  const ibv_gid& gid() const { return gid_; }
  const UdDeviceConfig& config() const { return cfg_; }
  const std::string& name() const { return name_; }
  uint32_t max_datagram() const { return max_datagram_; }

  // The send buffers (send_queue of them, send_slot() bytes each) and the
  // receive buffers (recv_queue of them, recv_slot() bytes: a 40-byte GRH
  // slot and a datagram), in one region registered with key lkey().
  uint8_t* send_buf(uint32_t i) const { return pool_ + size_t{i} * send_slot_; }
  uint8_t* recv_buf(uint32_t i) const {
    return pool_ + size_t{cfg_.send_queue} * send_slot_ +
           size_t{i} * recv_slot_;
  }
  uint32_t recv_slot() const { return recv_slot_; }
  uint32_t lkey() const { return pool_mr_->lkey; }

 private:
  UdDevice(const UdDeviceConfig& cfg, const UdVerbsOps& ops)
      : cfg_(cfg), ops_(ops) {}
  absl::Status OpenContext();
  absl::Status CheckPort();
  absl::Status MakeObjects();
  absl::Status MakePool();

  UdDeviceConfig cfg_;
  const UdVerbsOps& ops_;
  std::string name_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* send_cq_ = nullptr;
  ibv_cq* recv_cq_ = nullptr;
  ibv_cq_ex* recv_cq_ex_ = nullptr;
  ibv_qp* qp_ = nullptr;
  ibv_gid gid_{};
  uint32_t max_datagram_ = 0;
  uint32_t send_slot_ = 0;
  uint32_t recv_slot_ = 0;
  uint8_t* pool_ = nullptr;
  size_t pool_bytes_ = 0;
  ibv_mr* pool_mr_ = nullptr;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_VERBS_UD_UD_DEVICE_H_

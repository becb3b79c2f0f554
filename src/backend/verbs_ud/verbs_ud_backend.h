// The verbs UD backend: braid datagrams as the payload of an RDMA NIC's
// Unreliable Datagram service (docs/verbs-ud.md). One UD queue pair per
// endpoint; peers are UD queue pairs too ("[gid]/qpn"). Each entropy value
// is an address handle with its own GRH flow label (UdAhCache), which a
// RoCE v2 NIC turns into the UDP source port, so paths spread over ECMP.
//
// Transmit: a send buffer per send-queue slot, registered once; a datagram
// is copied there, except that a tail (payload) in memory the application
// registered (RegisterMemory) leaves by reference as a second gather entry:
// no copy. Work requests are posted as one chain per burst, every
// signal_every-th and the last of each burst signalled; a completion frees
// its slot and every earlier one (send completions come in order).
// Receive: buffers are posted in bulk at start and re-posted, as one chain,
// at the next RxBurst once the core is done with them; the GRH slot tells
// the sender's GID and ECN.
// Errors: a full send queue is back-pressure (TxBurst takes fewer); an
// address handle the device refuses drops that datagram (counted; the
// protocol resends, then fails the send at peer timeout); a queue pair in
// the error state is reset to RTS and its receives re-posted; a fatal
// device event stops the backend (counted; sends fail at peer timeout).
#ifndef BRAID_BACKEND_VERBS_UD_VERBS_UD_BACKEND_H_
#define BRAID_BACKEND_VERBS_UD_VERBS_UD_BACKEND_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/backend.h"
#include "backend/verbs_ud/ud_ah_cache.h"
#include "backend/verbs_ud/ud_device.h"
#include "backend/verbs_ud/ud_regions.h"
#include "backend/verbs_ud/ud_verbs_ops.h"
#include "braid/options.h"

namespace braid::backend {

class VerbsUdBackend final : public Backend {
 public:
  // Opens the device `o` names and makes the queue pair, with `entropies`
  // paths per peer unless `o.entropies` says otherwise. `ecn`: mark
  // datagrams ECT(0) (the GRH traffic class's ECN bits). Errors: as
  // UdDevice::Open, and InvalidArgument for other out-of-range options.
  static absl::StatusOr<std::unique_ptr<VerbsUdBackend>> Open(
      const VerbsUdBackendOptions& o, uint16_t entropies, bool ecn,
      const UdVerbsOps& ops = DefaultUdVerbsOps());
  ~VerbsUdBackend() override;

  uint32_t EntropyCount() const override { return entropies_; }
  NetAddr LocalAddress() const override { return local_; }
  uint32_t MaxDatagram() const override { return dev_->max_datagram(); }
  size_t TxBurst(absl::Span<const TxPacket> pkts) override;
  size_t RxBurst(absl::Span<RxPacket> out) override;
  TimeNs LastRxTime() const override { return last_rx_; }
  // Receive timestamps come from the device's completions when it has
  // them (always on: they cost nothing).
  bool KeepsTails() const override { return true; }
  void ReleaseTails() override { ReapSends(); }
  // A NIC gathers a second entry at no cost to the CPU: payloads of 512
  // bytes and more stay in the message (copied here only when they are not
  // in registered memory, which costs what the core's copy would).
  uint32_t MinUncopiedTail() const override { return 512; }
  absl::Status RegisterMemory(const void* addr, size_t len) override;
  absl::Status DeregisterMemory(const void* addr) override;
  BackendCounters counters() const override;

 private:
  VerbsUdBackend(std::unique_ptr<UdDevice> dev, const UdAhConfig& ah,
                 uint32_t signal_every, const UdVerbsOps& ops);
  // Posts every receive buffer in `slots` as one chain; false (counted) if
  // the queue pair refused.
  bool PostRecvs(const uint32_t* slots, size_t n);
  // Takes send completions: frees slots, lets go of held tails.
  void ReapSends();
  // Frees send slots up to and including sequence `seq`.
  void ReleaseThrough(uint64_t seq);
  // Fills the work request for `p` in send slot `slot`; false if `p` cannot
  // go (counted) and is dropped. `seq` is the number it will be posted as.
  bool BuildSend(const TxPacket& p, uint64_t seq, ibv_send_wr* wr,
                 ibv_sge* sge);
  // One receive completion, from either kind of CQ.
  struct RecvDone {
    uint64_t wr_id;
    ibv_wc_status status;
    uint32_t byte_len;
    uint32_t src_qp;
    unsigned int wc_flags;
    TimeNs arrival;  // Infinite without device timestamps
  };
  // Takes up to `max` receive completions (max <= kMaxBurst); negative on
  // a CQ error. When it takes any, *now is the CLOCK_MONOTONIC time read
  // right after.
  int PollRecv(RecvDone* out, int max, TimeNs* now);
  // The queue pair went to the error state: reset it and re-post receives.
  void Recover();
  // Reads pending asynchronous events (QP fatal, device fatal).
  void CheckAsyncEvents();

  const UdVerbsOps& ops_;
  std::unique_ptr<UdDevice> dev_;
  UdAhCache ahs_;
  UdRegions regions_;
  NetAddr local_;
  uint32_t entropies_;
  uint32_t qkey_;
  uint32_t sq_depth_, rq_depth_;
  uint32_t signal_every_;
  // Send slots: sequence s uses slot s % sq_depth_; [reaped_, next_) are in
  // flight. holds_[slot] is the tail hold a zero-copy send keeps.
  uint64_t next_ = 0, reaped_ = 0;
  std::vector<TxHold*> holds_;
  // Receive buffers handed to the core by the last RxBurst, re-posted at
  // the next.
  std::vector<uint32_t> rx_lent_;
  bool need_recovery_ = false;
  bool failed_ = false;
  uint32_t rx_calls_ = 0;
  TimeNs last_rx_ = TimeNs::Infinite();
  BackendCounters c_;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_VERBS_UD_VERBS_UD_BACKEND_H_

// TEST FACILITY. A Backend decorator that impairs outbound datagrams —
// drop, duplicate, reorder, corrupt — with a seeded RNG, so loss recovery can
// be exercised on plain loopback without root. Not for production traffic.
#ifndef BRAID_BACKEND_IMPAIR_IMPAIR_BACKEND_H_
#define BRAID_BACKEND_IMPAIR_IMPAIR_BACKEND_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "base/rng.h"
#include "braid/options.h"

namespace braid::backend {

struct ImpairCounters {
  uint64_t dropped = 0;
  uint64_t duplicated = 0;
  uint64_t reordered = 0;
  uint64_t corrupted = 0;
};

class ImpairBackend final : public Backend {
 public:
  // Wraps `inner`. Reordered datagrams are held back and sent after the
  // next 1..8 datagrams (or at the latest with the next TxBurst call).
  ImpairBackend(std::unique_ptr<Backend> inner, const TestImpairments& imp);

  uint32_t EntropyCount() const override { return inner_->EntropyCount(); }
  NetAddr LocalAddress() const override { return inner_->LocalAddress(); }
  uint32_t MaxDatagram() const override { return inner_->MaxDatagram(); }
  // Always takes every packet (impaired ones are consumed here).
  size_t TxBurst(absl::Span<const TxPacket> pkts) override;
  size_t RxBurst(absl::Span<RxPacket> out) override {
    return inner_->RxBurst(out);
  }
  int WaitFd() const override { return inner_->WaitFd(); }
  TimeNs LastRxTime() const override { return inner_->LastRxTime(); }
  void SetRxTimestamps(bool on) override { inner_->SetRxTimestamps(on); }
  BackendCounters counters() const override { return inner_->counters(); }
  const ImpairCounters& impair_counters() const { return counters_; }

 private:
  struct Held {
    TxPacket pkt;
    std::vector<uint8_t> bytes;
    int release_after = 0;
  };
  void Emit(const TxPacket& p);
  void Flush();

  std::unique_ptr<Backend> inner_;
  TestImpairments imp_;
  Rng rng_;
  ImpairCounters counters_;
  std::vector<Held> held_;    // reordered, waiting
  std::vector<Held> copies_;  // storage for this burst's altered copies
  size_t copies_used_ = 0;
  std::vector<TxPacket> out_;  // the burst handed to inner_
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_IMPAIR_IMPAIR_BACKEND_H_

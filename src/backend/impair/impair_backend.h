// TEST FACILITY. A Backend decorator that impairs outbound datagrams —
// drop, duplicate, reorder, corrupt — with a seeded RNG, so loss recovery can
// be exercised on plain loopback without root. Not for production traffic.
#ifndef BRAID_BACKEND_IMPAIR_IMPAIR_BACKEND_H_
#define BRAID_BACKEND_IMPAIR_IMPAIR_BACKEND_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "base/clock.h"
#include "base/rng.h"
#include "braid/testing/impairment.h"

namespace braid::backend {

struct ImpairCounters {
  uint64_t dropped = 0;
  uint64_t duplicated = 0;
  uint64_t reordered = 0;
  uint64_t corrupted = 0;
  uint64_t released_late = 0;  // reordered, released by RxBurst after max_hold
};

class ImpairBackend final : public Backend {
 public:
  // Wraps `inner`. Reordered datagrams are held back and sent after the
  // next 1..8 datagrams, at the latest with the next TxBurst call -- or,
  // if the sender goes quiet, by the first RxBurst that finds them held for
  // `max_hold`: the network this models delivers late, not never. (Without
  // that, a sender waiting for the ack of a held datagram sent nothing and
  // so released nothing until an RTO: --reorder 0.5 crawled at 0.004
  // Gbit/s.)
  // `clock`: what RxBurst reads (not owned); null = CLOCK_MONOTONIC. Works
  // over any backend whose timestamps are on that clock's scale.
  ImpairBackend(std::unique_ptr<Backend> inner, const TestImpairments& imp,
                DurationNs max_hold = DurationNs::Micros(50),
                Clock* clock = nullptr);

  uint32_t EntropyCount() const override { return inner_->EntropyCount(); }
  NetAddr LocalAddress() const override { return inner_->LocalAddress(); }
  bool Reaches(NetAddr::Family f) const override { return inner_->Reaches(f); }
  uint32_t MaxDatagram() const override { return inner_->MaxDatagram(); }
  // Always takes every packet (impaired ones are consumed here).
  size_t TxBurst(absl::Span<const TxPacket> pkts) override;
  // Releases datagrams held for max_hold, then receives from `inner`.
  size_t RxBurst(absl::Span<RxPacket> out) override;
  int WaitFd() const override { return inner_->WaitFd(); }
  // When the oldest held datagram is due (so an endpoint blocked in its
  // fd still releases it then), else the inner backend's deadline.
  TimeNs NextDeadline() const override;
  TimeNs LastRxTime() const override { return inner_->LastRxTime(); }
  void SetRxTimestamps(bool on) override { inner_->SetRxTimestamps(on); }
  // Held and duplicated datagrams are copies: tails are never kept, so the
  // inner backend sees no holds; only the request to let go is passed on.
  void ReleaseTails() override { inner_->ReleaseTails(); }
  absl::Status RegisterMemory(const void* addr, size_t len) override {
    return inner_->RegisterMemory(addr, len);
  }
  absl::Status DeregisterMemory(const void* addr) override {
    return inner_->DeregisterMemory(addr);
  }
  // The inner backend's counters plus the impairments applied.
  BackendCounters counters() const override {
    BackendCounters c = inner_->counters();
    c.impair_dropped = counters_.dropped;
    c.impair_corrupted = counters_.corrupted;
    c.impair_duplicated = counters_.duplicated;
    c.impair_reordered = counters_.reordered;
    return c;
  }
  const ImpairCounters& impair_counters() const { return counters_; }

 private:
  struct Held {
    TxPacket pkt;
    std::vector<uint8_t> bytes;
    int release_after = 0;
    TimeNs since;  // when it was held
  };
  // Whether each datagram meets an event of probability p: draws the
  // number of datagrams until the next one (geometric) rather than one
  // number per datagram, so a burst with no event in it costs nothing
  // (the injector's per-datagram draws were 2-3 % of a sender's time at
  // 1 % loss, time a real network's losses do not cost the sender).
  class EventGap {
   public:
    void Init(double p, Rng* rng);
    // This datagram: true if the event hits it.
    bool Hit(Rng* rng) {
      if (left_ > 0) {
        --left_;
        return false;
      }
      left_ = Draw(rng);
      return true;
    }
    // Datagrams that pass before the next hit.
    uint64_t left() const { return left_; }
    // n (< left()) datagrams passed.
    void Pass(uint64_t n) { left_ -= n; }

   private:
    uint64_t Draw(Rng* rng) const;
    double p_ = 0;
    uint64_t left_ = UINT64_MAX;
  };

  // A run id (see TxBurst) for datagrams that have no siblings.
  static constexpr uint32_t kNoRun = UINT32_MAX;
  // Appends p to out_, a member of run `run` of the current burst.
  void Emit(const TxPacket& p, uint32_t run);
  // Hands out_ to inner_, with TxPacket::run_follow rewritten from out_run_.
  void Flush();
  // Applies the impairments to p, a member of run `run` of the current
  // burst: drops, holds or emits it (twice if duplicated), then releases
  // the held datagrams whose turn has come.
  void Impair(const TxPacket& p, uint32_t run);
  // Holds a copy of p back (reordered) for the next 1..8 datagrams.
  void Hold(const TxPacket& p);
  // Emits the held datagrams that enough others have overtaken.
  void ReleaseDue();
  // Hands pkts to inner_, again while it takes some (what it refuses is
  // lost, which the protocol repairs like any other loss).
  void Forward(absl::Span<const TxPacket> pkts);

  std::unique_ptr<Backend> inner_;
  DurationNs max_hold_;
  MonotonicClock monotonic_;
  Clock* clock_;
  Rng rng_;
  // Each stage sees the datagrams the ones before it let through.
  EventGap drop_, corrupt_, reorder_, duplicate_;
  ImpairCounters counters_;
  std::vector<Held> held_;    // reordered, waiting
  std::vector<Held> copies_;  // storage for this burst's altered copies
  size_t copies_used_ = 0;
  std::vector<TxPacket> out_;  // the burst handed to inner_
  // Per out_ entry: the run of the caller's burst it came from (the index
  // of the run's first datagram), or kNoRun. Entries next to each other
  // with one run id are still siblings after drops and duplicates, so
  // Flush can give inner_ true run_follow hints (without them the UDP
  // backend groups a GSO run datagram by datagram: 2.7 % of the sender's
  // time at 1 % loss against 0.4 % lossless, perf).
  std::vector<uint32_t> out_run_;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_IMPAIR_IMPAIR_BACKEND_H_

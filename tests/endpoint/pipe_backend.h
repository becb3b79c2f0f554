// Test and benchmark helper: a Backend joined to another by an in-memory
// pipe — what one side's TxBurst takes, the other's RxBurst hands out, in
// order, with no delay. It can refuse datagrams on command (back-pressure)
// and keeps a log of what it sent. Storage is reused, so a steady exchange
// allocates nothing once warmed up.
#ifndef BRAID_TESTS_ENDPOINT_PIPE_BACKEND_H_
#define BRAID_TESTS_ENDPOINT_PIPE_BACKEND_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "backend/backend.h"

namespace braid::endpoint::testing {

class PipeBackend final : public backend::Backend {
 public:
  PipeBackend(NetAddr local, uint32_t max_datagram = 1472,
              uint32_t entropies = 64)
      : local_(local), max_datagram_(max_datagram), entropies_(entropies) {}

  // Joins `a` and `b` both ways.
  static void Connect(PipeBackend* a, PipeBackend* b) {
    a->peer_ = b;
    b->peer_ = a;
  }

  uint32_t EntropyCount() const override { return entropies_; }
  NetAddr LocalAddress() const override { return local_; }
  uint32_t MaxDatagram() const override { return max_datagram_; }

  // Copies datagrams into the peer's inbox until `accept_` runs out (then
  // the rest is refused: a short count).
  size_t TxBurst(absl::Span<const backend::TxPacket> pkts) override {
    ++tx_calls_;
    size_t n = 0;
    for (const backend::TxPacket& p : pkts) {
      if (accept_ == 0) break;
      if (accept_ != kUnlimited) --accept_;
      if (peer_ != nullptr) peer_->Deliver(local_, p);
      if (log_) {
        sent_.emplace_back(p.size());
        p.CopyTo(sent_.back().data());
      }
      ++n;
    }
    counters_.tx_packets += n;
    return n;
  }

  // Hands out up to out.size() datagrams; their bytes stay valid until the
  // next RxBurst.
  size_t RxBurst(absl::Span<backend::RxPacket> out) override {
    ++rx_calls_;
    // The slots handed out last time are free now: move the waiting ones to
    // the front (swapping buffers, no copy), so storage is reused.
    for (size_t i = head_; i < count_; ++i) {
      std::swap(inbox_[i - head_], inbox_[i]);
    }
    count_ -= head_;
    head_ = 0;
    size_t n = 0;
    for (; n < out.size() && head_ < count_; ++n, ++head_) {
      Slot& s = inbox_[head_];
      out[n] = backend::RxPacket{};
      out[n].src = s.src;
      out[n].data = s.bytes.data();
      out[n].len = s.len;
    }
    counters_.rx_packets += n;
    return n;
  }

  backend::BackendCounters counters() const override { return counters_; }

  // Back-pressure: take `n` more datagrams, then refuse until AcceptAll.
  void AcceptOnly(size_t n) { accept_ = n; }
  void AcceptAll() { accept_ = kUnlimited; }
  // Records every datagram taken in sent() (off by default).
  void set_log(bool on) { log_ = on; }
  const std::vector<std::vector<uint8_t>>& sent() const { return sent_; }
  void clear_sent() { sent_.clear(); }
  // Datagrams waiting in this side's inbox.
  size_t pending() const { return count_ - head_; }
  uint64_t tx_calls() const { return tx_calls_; }
  uint64_t rx_calls() const { return rx_calls_; }

 private:
  static constexpr size_t kUnlimited = SIZE_MAX;
  struct Slot {
    NetAddr src;
    std::vector<uint8_t> bytes;  // sized once (MaxDatagram), then reused
    uint32_t len = 0;
  };
  void Deliver(const NetAddr& from, const backend::TxPacket& p) {
    // Slots before count_ may be handed out still; only later ones are
    // written (a vector's buffer survives the slots' reallocation).
    if (count_ == inbox_.size()) inbox_.emplace_back();
    Slot& s = inbox_[count_++];
    s.src = from;
    if (s.bytes.size() < p.size())
      s.bytes.resize(std::max(p.size(), max_datagram_));
    p.CopyTo(s.bytes.data());
    s.len = p.size();
  }

  NetAddr local_;
  uint32_t max_datagram_;
  uint32_t entropies_;
  PipeBackend* peer_ = nullptr;
  std::vector<Slot> inbox_;
  size_t head_ = 0;   // next slot to hand out
  size_t count_ = 0;  // slots filled
  size_t accept_ = kUnlimited;
  bool log_ = false;
  std::vector<std::vector<uint8_t>> sent_;
  uint64_t tx_calls_ = 0;
  uint64_t rx_calls_ = 0;
  backend::BackendCounters counters_;
};

}  // namespace braid::endpoint::testing

#endif  // BRAID_TESTS_ENDPOINT_PIPE_BACKEND_H_

#include "backend/impair/impair_backend.h"

#include <algorithm>

#include "base/monotonic_clock.h"

namespace braid::backend {

ImpairBackend::ImpairBackend(std::unique_ptr<Backend> inner,
                             const TestImpairments& imp, DurationNs max_hold,
                             Clock clock)
    : inner_(std::move(inner)),
      imp_(imp),
      max_hold_(max_hold),
      clock_(clock != nullptr ? clock : &MonotonicNow),
      rng_(imp.seed) {
  out_.reserve(256);
}

size_t ImpairBackend::RxBurst(absl::Span<RxPacket> out) {
  // held_ keeps the order datagrams were held in: the front is the oldest.
  if (!held_.empty()) {
    const TimeNs now = clock_();
    if (now - held_.front().since >= max_hold_) {
      auto stale = [&](const Held& h) { return now - h.since >= max_hold_; };
      for (const Held& h : held_) {
        if (!stale(h)) continue;
        out_.push_back(h.pkt);  // data points into h.bytes
        ++counters_.released_late;
      }
      Flush();
      held_.erase(std::remove_if(held_.begin(), held_.end(), stale),
                  held_.end());
    }
  }
  return inner_->RxBurst(out);
}

TimeNs ImpairBackend::NextDeadline() const {
  const TimeNs inner = inner_->NextDeadline();
  if (held_.empty()) return inner;
  return Min(inner, held_.front().since + max_hold_);
}

void ImpairBackend::Emit(const TxPacket& p) {
  out_.push_back(p);
  out_.back().run_follow = 0;  // the burst is no longer the one built
  // Held datagrams count down as others pass them.
  for (Held& h : held_) --h.release_after;
}

void ImpairBackend::Flush() {
  size_t off = 0;
  // The inner backend may take fewer under back-pressure; what it refuses is
  // lost, which the protocol repairs like any other loss.
  while (off < out_.size()) {
    const size_t n = inner_->TxBurst(absl::MakeConstSpan(out_).subspan(off));
    if (n == 0) break;
    off += n;
  }
  out_.clear();
}

size_t ImpairBackend::TxBurst(absl::Span<const TxPacket> pkts) {
  copies_used_ = 0;
  for (const TxPacket& p : pkts) {
    if (imp_.drop > 0 && rng_.Bernoulli(imp_.drop)) {
      ++counters_.dropped;
      continue;
    }
    const TxPacket* send = &p;
    if (imp_.corrupt > 0 && p.size() > 0 && rng_.Bernoulli(imp_.corrupt)) {
      // Corruption on the wire: the receiver's UDP checksum (computed by
      // this host's kernel after us, so a flip here would go unnoticed)
      // discards the datagram. Modelled as that discard; the parser's
      // handling of corrupted bytes is exercised by the fuzz tests and the
      // simulator's deliver_corrupted mode.
      ++counters_.corrupted;
      continue;
    }
    if (imp_.reorder > 0 && rng_.Bernoulli(imp_.reorder)) {
      Held h;
      // Held past this call: keep a copy of the whole datagram.
      h.bytes.resize(send->size());
      send->CopyTo(h.bytes.data());
      h.pkt = *send;
      h.pkt.run_follow = 0;
      h.pkt.len = send->size();
      h.pkt.tail = nullptr;
      h.pkt.tail_len = 0;
      h.release_after = 1 + static_cast<int>(rng_.Uniform(8));
      h.since = clock_();
      held_.push_back(std::move(h));
      held_.back().pkt.data = held_.back().bytes.data();
      ++counters_.reordered;
      continue;
    }
    Emit(*send);
    if (imp_.duplicate > 0 && rng_.Bernoulli(imp_.duplicate)) {
      Emit(*send);
      ++counters_.duplicated;
    }
    // Release held datagrams whose turn has come (after the ones that
    // overtook them).
    for (size_t i = 0; i < held_.size();) {
      if (held_[i].release_after <= 0) {
        out_.push_back(held_[i].pkt);
        // Keep the bytes alive until Flush: park them in copies_.
        if (copies_used_ == copies_.size()) copies_.emplace_back();
        copies_[copies_used_].bytes.swap(held_[i].bytes);
        out_.back().data = copies_[copies_used_].bytes.data();
        ++copies_used_;
        held_.erase(held_.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }
  Flush();
  // Anything still held goes out with the next burst at the latest; if no
  // burst follows, release it now so nothing is stranded forever.
  if (pkts.empty() && !held_.empty()) {
    for (Held& h : held_) out_.push_back(h.pkt);
    Flush();
    held_.clear();
  }
  return pkts.size();
}

}  // namespace braid::backend

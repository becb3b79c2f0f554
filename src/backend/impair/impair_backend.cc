#include "backend/impair/impair_backend.h"

#include <algorithm>
#include <cmath>

namespace braid::backend {

ImpairBackend::ImpairBackend(std::unique_ptr<Backend> inner,
                             const TestImpairments& imp, DurationNs max_hold,
                             Clock* clock)
    : inner_(std::move(inner)),
      max_hold_(max_hold),
      clock_(clock != nullptr ? clock : &monotonic_),
      rng_(imp.seed) {
  out_.reserve(256);
  out_run_.reserve(256);
  drop_.Init(imp.drop, &rng_);
  corrupt_.Init(imp.corrupt, &rng_);
  reorder_.Init(imp.reorder, &rng_);
  duplicate_.Init(imp.duplicate, &rng_);
}

void ImpairBackend::EventGap::Init(double p, Rng* rng) {
  p_ = p;
  left_ = Draw(rng);
}

uint64_t ImpairBackend::EventGap::Draw(Rng* rng) const {
  if (p_ <= 0) return UINT64_MAX;
  if (p_ >= 1) return 0;
  // Datagrams before the next hit: P(gap = k) = (1 - p)^k p.
  const double u = 1.0 - rng->UniformDouble();  // (0, 1]
  const double gap = std::floor(std::log(u) / std::log1p(-p_));
  return gap >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(gap);
}

size_t ImpairBackend::RxBurst(absl::Span<RxPacket> out) {
  // held_ keeps the order datagrams were held in: the front is the oldest.
  if (!held_.empty()) {
    const TimeNs now = clock_->Now();
    if (now - held_.front().since >= max_hold_) {
      auto stale = [&](const Held& h) { return now - h.since >= max_hold_; };
      for (const Held& h : held_) {
        if (!stale(h)) continue;
        Emit(h.pkt, kNoRun);  // data points into h.bytes
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

void ImpairBackend::Emit(const TxPacket& p, uint32_t run) {
  out_.push_back(p);
  out_run_.push_back(run);
}

void ImpairBackend::Flush() {
  // The caller's hints no longer count what follows in out_ (drops,
  // duplicates and held datagrams changed that). Recount from the back:
  // neighbours from one run are siblings (same dst, entropy, ect, local
  // and size; a duplicate is its original's sibling too).
  uint8_t follow = 0;
  for (size_t i = out_.size(); i-- > 0;) {
    const bool sibling = i + 1 < out_.size() && out_run_[i] != kNoRun &&
                         out_run_[i] == out_run_[i + 1];
    follow = sibling ? static_cast<uint8_t>(std::min(follow + 1, 255)) : 0;
    out_[i].run_follow = follow;
  }
  Forward(out_);
  out_.clear();
  out_run_.clear();
}

void ImpairBackend::Forward(absl::Span<const TxPacket> pkts) {
  size_t off = 0;
  while (off < pkts.size()) {
    const size_t n = inner_->TxBurst(pkts.subspan(off));
    if (n == 0) break;
    off += n;
  }
}

// Inlined, as Hold and ReleaseDue: they run once per datagram sent.
[[gnu::always_inline]] inline void ImpairBackend::Impair(const TxPacket& p,
                                                         uint32_t run) {
  if (drop_.Hit(&rng_)) {
    ++counters_.dropped;
    return;
  }
  if (corrupt_.Hit(&rng_)) {
    // Corruption on the wire: the receiver's UDP checksum (computed by
    // this host's kernel after us, so a flip here would go unnoticed)
    // discards the datagram. Modelled as that discard; the parser's
    // handling of corrupted bytes is exercised by the fuzz tests and the
    // simulator's deliver_corrupted mode.
    ++counters_.corrupted;
    return;
  }
  if (reorder_.Hit(&rng_)) {
    Hold(p);
    ++counters_.reordered;
    return;
  }
  // Held datagrams count down as others pass them.
  for (Held& h : held_) --h.release_after;
  Emit(p, run);
  if (duplicate_.Hit(&rng_)) {
    for (Held& h : held_) --h.release_after;
    Emit(p, run);
    ++counters_.duplicated;
  }
  // Release held datagrams whose turn has come (after the ones that
  // overtook them).
  ReleaseDue();
}

[[gnu::always_inline]] inline void ImpairBackend::Hold(const TxPacket& p) {
  Held h;
  // Held past this call: keep a copy of the whole datagram.
  h.bytes.resize(p.size());
  p.CopyTo(h.bytes.data());
  h.pkt = p;
  h.pkt.run_follow = 0;
  h.pkt.len = p.size();
  h.pkt.tail = nullptr;
  h.pkt.tail_len = 0;
  h.release_after = 1 + static_cast<int>(rng_.Uniform(8));
  h.since = clock_->Now();
  held_.push_back(std::move(h));
  held_.back().pkt.data = held_.back().bytes.data();
}

[[gnu::always_inline]] inline void ImpairBackend::ReleaseDue() {
  for (size_t k = 0; k < held_.size();) {
    if (held_[k].release_after <= 0) {
      Emit(held_[k].pkt, kNoRun);
      // Keep the bytes alive until Flush: park them in copies_.
      if (copies_used_ == copies_.size()) copies_.emplace_back();
      copies_[copies_used_].bytes.swap(held_[k].bytes);
      out_.back().data = copies_[copies_used_].bytes.data();
      ++copies_used_;
      held_.erase(held_.begin() + static_cast<long>(k));
    } else {
      ++k;
    }
  }
}

size_t ImpairBackend::TxBurst(absl::Span<const TxPacket> pkts) {
  const uint64_t n = pkts.size();
  if (n > 0 && held_.empty() && n < drop_.left() && n < corrupt_.left() &&
      n < reorder_.left() && n < duplicate_.left()) {
    // Nothing in this burst is impaired: it goes on as it is, hints and
    // all, uncopied.
    drop_.Pass(n);
    corrupt_.Pass(n);
    reorder_.Pass(n);
    duplicate_.Pass(n);
    Forward(pkts);
    return pkts.size();
  }
  copies_used_ = 0;
  // The run the datagram at index i belongs to: runs are named by their
  // first datagram; run_end is the last index its hints reach.
  uint32_t run = kNoRun;
  size_t run_end = 0;
  for (size_t i = 0; i < pkts.size(); ++i) {
    const TxPacket& p = pkts[i];
    if (run == kNoRun || i > run_end) {
      run = static_cast<uint32_t>(i);
      run_end = i;
    }
    run_end = std::max(run_end, i + p.run_follow);
    Impair(p, run);
  }
  Flush();
  // Anything still held goes out with the next burst at the latest; if no
  // burst follows, release it now so nothing is stranded forever.
  if (pkts.empty() && !held_.empty()) {
    for (Held& h : held_) Emit(h.pkt, kNoRun);
    Flush();
    held_.clear();
  }
  return pkts.size();
}

}  // namespace braid::backend

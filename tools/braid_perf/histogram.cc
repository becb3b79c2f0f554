#include "tools/braid_perf/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace braid::perf {

// Values below kSub have their own bucket each; above, bucket (e, m) covers
// [m << e, (m + 1) << e) with m in [kSub, 2 kSub).
int Histogram::Index(uint64_t v) {
  if (v < static_cast<uint64_t>(kSub)) return static_cast<int>(v);
  const int msb = 63 - std::countl_zero(v);
  const int e = msb - kSubBits;  // >= 0
  const uint64_t m = v >> e;     // in [kSub, 2 kSub)
  return kSub * (e + 1) + static_cast<int>(m - kSub);
}

uint64_t Histogram::Lower(int index) {
  if (index < kSub) return static_cast<uint64_t>(index);
  const int e = index / kSub - 1;
  const uint64_t m = static_cast<uint64_t>(index % kSub + kSub);
  return m << e;
}

uint64_t Histogram::Width(int index) {
  if (index < kSub) return 1;
  return uint64_t{1} << (index / kSub - 1);
}

Histogram::Histogram() { samples_.reserve(kExactSamples); }

void Histogram::Add(int64_t ns) {
  const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
  if (samples_.size() < kExactSamples) {
    samples_.push_back(static_cast<int64_t>(v));
    sorted_ = false;
  }
  counts_[std::min(Index(v), kBuckets - 1)]++;
  ++count_;
  sum_ += static_cast<double>(v);
  min_ = std::min<int64_t>(min_, static_cast<int64_t>(v));
  max_ = std::max<int64_t>(max_, static_cast<int64_t>(v));
}

double Histogram::Quantile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // Rank of the sample wanted (1-based), nearest-rank definition.
  const uint64_t rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_))));
  if (exact()) {
    if (!sorted_) {
      std::sort(samples_.begin(), samples_.end());
      sorted_ = true;
    }
    return static_cast<double>(samples_[rank - 1]);
  }
  return BucketQuantile(rank);
}

double Histogram::BucketQuantile(uint64_t rank) const {
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const double mid = static_cast<double>(Lower(i)) +
                         (static_cast<double>(Width(i)) - 1) / 2;
      return std::clamp(mid, static_cast<double>(min_),
                        static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

double Histogram::mean() const {
  return count_ ? sum_ / static_cast<double>(count_) : 0;
}

void Histogram::Clear() {
  samples_.clear();  // keeps the reservation
  sorted_ = true;
  counts_.fill(0);
  count_ = 0;
  sum_ = 0;
  min_ = INT64_MAX;
  max_ = 0;
}

}  // namespace braid::perf

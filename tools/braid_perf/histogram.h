// A latency recorder: the first kExactSamples samples are kept as they are,
// so the quantiles of a run of at most that many samples are exact (the
// nearest-rank sample, the definition udp-blast uses, so the two tools'
// percentiles compare like for like). Every sample also goes into a
// log-linear histogram (64 sub-buckets per power of two, a quantile within
// ~1.6 % of the true sample) that answers once a run has more samples.
// Recording never allocates: the sample store is reserved up front.
#ifndef BRAID_TOOLS_BRAID_PERF_HISTOGRAM_H_
#define BRAID_TOOLS_BRAID_PERF_HISTOGRAM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::perf {

class Histogram {
 public:
  static constexpr size_t kExactSamples = size_t{1} << 20;
  Histogram();

  // Records one sample in nanoseconds (negative values count as 0).
  void Add(int64_t ns);
  // The q-quantile (0..1) in nanoseconds, nearest rank: exact while every
  // sample was kept (count() <= kExactSamples), else the midpoint of the
  // histogram bucket holding it, clamped to [min, max]. 0 when empty.
  double Quantile(double q) const;
  // True when Quantile is exact.
  bool exact() const { return samples_.size() == count_; }
  uint64_t count() const { return count_; }
  double mean() const;
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return max_; }
  void Clear();

 private:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = kSub * 58;
  static int Index(uint64_t v);
  static uint64_t Lower(int index);
  static uint64_t Width(int index);

  double BucketQuantile(uint64_t rank) const;

  // Kept samples; sorted lazily by Quantile (hence mutable).
  mutable std::vector<int64_t> samples_;
  mutable bool sorted_ = true;
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  double sum_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = 0;
};

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_HISTOGRAM_H_

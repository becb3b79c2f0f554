// A log-linear latency histogram (64 sub-buckets per power of two, so a
// quantile is within ~1.6 % of the true sample). Fixed size: recording a
// sample never allocates, and any number of samples fits.
#ifndef BRAID_TOOLS_BRAID_PERF_HISTOGRAM_H_
#define BRAID_TOOLS_BRAID_PERF_HISTOGRAM_H_

#include <array>
#include <cstdint>

namespace braid::perf {

class Histogram {
 public:
  // Records one sample in nanoseconds (negative values count as 0).
  void Add(int64_t ns);
  // The q-quantile (0..1) in nanoseconds: the midpoint of the bucket holding
  // it, clamped to [min, max]. 0 when empty.
  double Quantile(double q) const;
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

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  double sum_ = 0;
  int64_t min_ = INT64_MAX;
  int64_t max_ = 0;
};

}  // namespace braid::perf

#endif  // BRAID_TOOLS_BRAID_PERF_HISTOGRAM_H_

// Strong time types. The protocol core never reads a clock: every entry point
// takes `TimeNs now` from its driver (the simulator or the real endpoint).
#ifndef BRAID_TIME_H_
#define BRAID_TIME_H_

#include <compare>
#include <cstdint>
#include <limits>

namespace braid {

// A span of time in nanoseconds. May be negative.
class DurationNs {
 public:
  constexpr DurationNs() = default;
  constexpr explicit DurationNs(int64_t ns) : ns_(ns) {}
  static constexpr DurationNs Nanos(int64_t n) { return DurationNs(n); }
  static constexpr DurationNs Micros(int64_t n) { return DurationNs(n * 1000); }
  static constexpr DurationNs Millis(int64_t n) {
    return DurationNs(n * 1000000);
  }
  static constexpr DurationNs Seconds(int64_t n) {
    return DurationNs(n * 1000000000);
  }
  static constexpr DurationNs Zero() { return DurationNs(0); }
  static constexpr DurationNs Infinite() {
    return DurationNs(std::numeric_limits<int64_t>::max());
  }

  constexpr int64_t ns() const { return ns_; }
  constexpr double us() const { return static_cast<double>(ns_) / 1e3; }
  constexpr double ms() const { return static_cast<double>(ns_) / 1e6; }
  constexpr double seconds() const { return static_cast<double>(ns_) / 1e9; }
  constexpr bool IsInfinite() const {
    return ns_ == std::numeric_limits<int64_t>::max();
  }

  constexpr DurationNs operator+(DurationNs o) const {
    return DurationNs(ns_ + o.ns_);
  }
  constexpr DurationNs operator-(DurationNs o) const {
    return DurationNs(ns_ - o.ns_);
  }
  constexpr DurationNs operator*(int64_t k) const {
    return DurationNs(ns_ * k);
  }
  constexpr DurationNs operator/(int64_t k) const {
    return DurationNs(ns_ / k);
  }
  constexpr DurationNs& operator+=(DurationNs o) {
    ns_ += o.ns_;
    return *this;
  }
  constexpr DurationNs& operator-=(DurationNs o) {
    ns_ -= o.ns_;
    return *this;
  }
  constexpr auto operator<=>(const DurationNs&) const = default;

 private:
  int64_t ns_ = 0;
};

// A point in time, nanoseconds since an arbitrary epoch chosen by the driver.
class TimeNs {
 public:
  constexpr TimeNs() = default;
  constexpr explicit TimeNs(int64_t ns) : ns_(ns) {}
  static constexpr TimeNs Zero() { return TimeNs(0); }
  // "Never": used by NextWake() when no timer is armed.
  static constexpr TimeNs Infinite() {
    return TimeNs(std::numeric_limits<int64_t>::max());
  }

  constexpr int64_t ns() const { return ns_; }
  constexpr bool IsInfinite() const {
    return ns_ == std::numeric_limits<int64_t>::max();
  }

  constexpr TimeNs operator+(DurationNs d) const {
    if (IsInfinite() || d.IsInfinite()) return Infinite();
    return TimeNs(ns_ + d.ns());
  }
  constexpr TimeNs operator-(DurationNs d) const {
    return TimeNs(ns_ - d.ns());
  }
  constexpr DurationNs operator-(TimeNs o) const {
    return DurationNs(ns_ - o.ns_);
  }
  constexpr TimeNs& operator+=(DurationNs d) {
    *this = *this + d;
    return *this;
  }
  constexpr auto operator<=>(const TimeNs&) const = default;

 private:
  int64_t ns_ = 0;
};

constexpr TimeNs Min(TimeNs a, TimeNs b) { return a < b ? a : b; }
constexpr TimeNs Max(TimeNs a, TimeNs b) { return a < b ? b : a; }
constexpr DurationNs Min(DurationNs a, DurationNs b) { return a < b ? a : b; }
constexpr DurationNs Max(DurationNs a, DurationNs b) { return a < b ? b : a; }

}  // namespace braid

#endif  // BRAID_TIME_H_

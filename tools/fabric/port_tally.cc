#include "tools/fabric/port_tally.h"

#include <algorithm>

namespace braid::fabric {

PortTally::PortTally(uint32_t expected)
    : expected_(expected), seen_(expected, false) {
  delays_ns_.reserve(expected);
}

void PortTally::Record(uint32_t seq, size_t bytes, TimeNs sent, TimeNs arrived,
                       bool ce) {
  if (seq >= expected_) {
    ++out_of_range_;
    return;
  }
  if (seen_[seq]) {
    ++duplicates_;
    return;
  }
  seen_[seq] = true;
  if (static_cast<int64_t>(seq) < highest_seq_) ++reordered_;
  highest_seq_ = std::max<int64_t>(highest_seq_, seq);
  if (received_ == 0) first_arrival_ = arrived;
  last_arrival_ = arrived;
  ++received_;
  bytes_ += bytes;
  if (ce) ++ce_;
  delays_ns_.push_back((arrived - sent).ns());
}

PortReport PortTally::Report(uint16_t sport) const {
  PortReport r;
  r.sport = sport;
  r.expected = expected_;
  r.received = received_;
  r.lost = expected_ - received_;
  r.duplicates = duplicates_;
  r.reordered = reordered_;
  r.out_of_range = out_of_range_;
  r.ce = ce_;
  r.bytes = bytes_;
  if (!delays_ns_.empty()) {
    std::vector<int64_t> d = delays_ns_;
    std::sort(d.begin(), d.end());
    auto at = [&d](double q) {
      size_t i = static_cast<size_t>(q * static_cast<double>(d.size() - 1));
      return DurationNs(d[i]);
    };
    r.delay_min = DurationNs(d.front());
    r.delay_p50 = at(0.5);
    r.delay_p99 = at(0.99);
    r.delay_max = DurationNs(d.back());
  }
  DurationNs span = last_arrival_ - first_arrival_;
  if (received_ > 1 && span > DurationNs::Zero()) {
    r.rate_mbps = static_cast<double>(bytes_) * 8 / span.us();
  }
  return r;
}

}  // namespace braid::fabric

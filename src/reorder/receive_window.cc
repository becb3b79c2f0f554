#include "reorder/receive_window.h"

#include <algorithm>
#include <bit>

namespace braid::reorder {
namespace {

constexpr uint32_t kMinCapacity = 64;
constexpr uint32_t kMaxCapacity = 1u << 30;

uint32_t RoundCapacity(uint32_t c) {
  c = std::clamp(c, kMinCapacity, kMaxCapacity);
  return std::bit_ceil(c);
}

}  // namespace

ReceiveWindow::ReceiveWindow(uint32_t capacity_packets,
                             uint32_t initial_packets)
    : max_capacity_(RoundCapacity(capacity_packets)),
      capacity_(initial_packets == 0
                    ? max_capacity_
                    : std::min(max_capacity_, RoundCapacity(initial_packets))),
      mask_(capacity_ - 1),
      bits_(capacity_ / 64, 0) {}

ReceiveWindow::Verdict ReceiveWindow::Classify(wire::Psn psn) const {
  const int32_t d = psn - cum_;
  if (d < 0) return Verdict::kDuplicate;
  const uint32_t u = static_cast<uint32_t>(d);
  if (u >= max_capacity_) return Verdict::kBeyondWindow;
  if (u >= capacity_) return Verdict::kNew;  // past the ring: not yet seen
  return TestBit(psn) ? Verdict::kDuplicate : Verdict::kNew;
}

void ReceiveWindow::Grow(uint32_t need) {
  const uint32_t cap =
      std::min(max_capacity_, std::bit_ceil(std::max(need, 2 * capacity_)));
  std::vector<uint64_t> bigger(cap / 64, 0);
  const uint32_t new_mask = cap - 1;
  // Every set bit is a PSN in [cum, highest): re-place it by its PSN.
  for (wire::Psn p = cum_ + 1; p < highest_plus_one_; ++p) {
    if (!TestBit(p)) continue;
    const uint32_t i = p.value() & new_mask;
    bigger[i >> 6] |= uint64_t{1} << (i & 63);
  }
  bits_.swap(bigger);
  capacity_ = cap;
  mask_ = new_mask;
}

ReceiveWindow::Verdict ReceiveWindow::OnPacket(wire::Psn psn) {
  const Verdict v = Classify(psn);
  if (v == Verdict::kDuplicate) {
    ++stats_.duplicates;
    return v;
  }
  if (v == Verdict::kBeyondWindow) {
    ++stats_.beyond_window;
    return v;
  }
  ++stats_.new_packets;
  const uint32_t d = static_cast<uint32_t>(psn - cum_);
  if (d >= capacity_) Grow(d + 1);
  // In order only if it is exactly cum and nothing beyond cum was received.
  last_out_of_order_ = !(psn == cum_ && highest_plus_one_ == cum_);
  if (psn + 1 > highest_plus_one_) highest_plus_one_ = psn + 1;
  if (psn == cum_) {
    cum_ = cum_ + 1;
    AdvanceCum();
  } else {
    const uint32_t i = Index(psn);
    bits_[i >> 6] |= uint64_t{1} << (i & 63);
    ++out_of_order_count_;
  }
  return Verdict::kNew;
}

ReceiveWindow::Verdict ReceiveWindow::OnPacketInOrderOnly(wire::Psn psn) {
  if (psn < cum_) {
    ++stats_.duplicates;
    return Verdict::kDuplicate;
  }
  if (psn != cum_) {
    ++stats_.in_order_only_dropped;
    return Verdict::kBeyondWindow;
  }
  ++stats_.new_packets;
  last_out_of_order_ = false;
  cum_ = cum_ + 1;
  highest_plus_one_ = wire::Max(highest_plus_one_, cum_);
  return Verdict::kNew;
}

void ReceiveWindow::AdvanceCum() {
  // Word-at-a-time: count the run of ones starting at cum's bit, clear it,
  // and continue into the next word only if the run reached the word's end.
  while (out_of_order_count_ > 0) {
    const uint32_t i = Index(cum_);
    const uint32_t word = i >> 6;
    const uint32_t bit = i & 63;
    const uint64_t w = bits_[word] >> bit;
    const uint32_t ones = static_cast<uint32_t>(std::countr_one(w));
    if (ones == 0) return;
    // `ones` <= 64 - bit; clear bits [bit, bit + ones).
    const uint64_t run_mask =
        (ones == 64 ? ~uint64_t{0} : ((uint64_t{1} << ones) - 1)) << bit;
    bits_[word] &= ~run_mask;
    cum_ = cum_ + ones;
    out_of_order_count_ -= ones;
    if (bit + ones < 64) return;
  }
}

bool ReceiveWindow::Contains(wire::Psn psn) const {
  const int32_t d = psn - cum_;
  if (d < 0) return true;
  if (static_cast<uint32_t>(d) >= capacity_) return false;
  return TestBit(psn);
}

uint64_t ReceiveWindow::Extract64(wire::Psn psn) const {
  const uint32_t i = Index(psn);
  const uint32_t word = i >> 6;
  const uint32_t bit = i & 63;
  uint64_t v = bits_[word] >> bit;
  if (bit != 0) {
    const uint32_t next = (word + 1) & (mask_ >> 6);
    v |= bits_[next] << (64 - bit);
  }
  return v;
}

size_t ReceiveWindow::FillSack(absl::Span<uint64_t> out) const {
  if (out_of_order_count_ == 0 || out.empty()) return 0;
  const wire::Psn first = cum_ + 1;
  // PSNs [first, highest_plus_one_) may be set; all lie inside the ring.
  const uint32_t span = static_cast<uint32_t>(highest_plus_one_ - first);
  const size_t words = std::min<size_t>(out.size(), (span + 63) / 64);
  size_t written = 0;
  for (size_t j = 0; j < words; ++j) {
    const uint32_t start = static_cast<uint32_t>(j * 64);
    uint64_t v = Extract64(first + start);
    const uint32_t left = span - start;
    // Mask bits past highest_plus_one_: they alias PSNs below cum's ring
    // position (always clear) or the far end of the window; keep it exact.
    if (left < 64) v &= (uint64_t{1} << left) - 1;
    out[j] = v;
    if (v != 0) written = j + 1;
  }
  return written;
}

void ReceiveWindow::Reset(wire::Psn base) {
  std::fill(bits_.begin(), bits_.end(), 0);
  cum_ = base;
  highest_plus_one_ = base;
  out_of_order_count_ = 0;
  last_out_of_order_ = false;
  ++stats_.resets;
}

}  // namespace braid::reorder

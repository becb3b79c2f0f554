#include "reorder/ordered_release.h"

#include <algorithm>
#include <utility>

namespace braid::reorder {

OrderedRelease::OrderedRelease(const OrderedReleaseOptions& options,
                               BufferPool* pool)
    : options_(options), pool_(pool) {}

void OrderedRelease::Drop(CompletedMessage&& m) {
  if (pool_ != nullptr && m.data.capacity() > 0) {
    pool_->Put(std::move(m.data));
  }
  m.data = std::vector<uint8_t>();
}

OrderedRelease::PushResult OrderedRelease::Push(
    CompletedMessage&& m, std::vector<CompletedMessage>* released) {
  if (m.stream_id == 0) {
    ++stats_.released_unordered;
    released->push_back(std::move(m));
    return PushResult::kOk;
  }
  auto it = next_.find(m.stream_id);
  if (it == next_.end()) {
    if (next_.size() >= options_.max_streams) {
      ++stats_.too_many_streams;
      Drop(std::move(m));
      return PushResult::kTooManyStreams;
    }
    it = next_.emplace(m.stream_id, 0).first;
  }
  uint32_t& next = it->second;
  const int32_t ahead = static_cast<int32_t>(m.stream_seq - next);
  if (ahead < 0) {
    ++stats_.stale;
    Drop(std::move(m));
    return PushResult::kStale;
  }
  if (ahead > 0) {
    const uint64_t key = Key(m.stream_id, m.stream_seq);
    if (held_.contains(key)) {
      ++stats_.duplicate;
      Drop(std::move(m));
      return PushResult::kDuplicate;
    }
    ++stats_.held_total;
    held_bytes_ += m.data.size();
    held_.emplace(key, std::move(m));
    return PushResult::kOk;
  }
  // In order: release it and every held successor.
  const uint16_t stream = m.stream_id;
  released->push_back(std::move(m));
  ++stats_.released_ordered;
  ++next;
  while (!held_.empty()) {
    auto h = held_.find(Key(stream, next));
    if (h == held_.end()) break;
    held_bytes_ -= h->second.data.size();
    released->push_back(std::move(h->second));
    held_.erase(h);
    ++stats_.released_ordered;
    ++next;
  }
  return PushResult::kOk;
}

size_t OrderedRelease::Reset() {
  const size_t dropped = held_.size();
  for (auto& [key, m] : held_) Drop(std::move(m));
  held_.clear();
  next_.clear();
  held_bytes_ = 0;
  stats_.reset_dropped += dropped;
  return dropped;
}

void OrderedRelease::Flush(std::vector<CompletedMessage>* released) {
  std::vector<uint64_t> keys;
  keys.reserve(held_.size());
  for (const auto& [key, m] : held_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (uint64_t k : keys) {
    auto it = held_.find(k);
    released->push_back(std::move(it->second));
    ++stats_.released_ordered;
  }
  held_.clear();
  next_.clear();
  held_bytes_ = 0;
}

size_t OrderedRelease::ResetStream(uint16_t stream_id) {
  size_t dropped = 0;
  for (auto it = held_.begin(); it != held_.end();) {
    if ((it->first >> 32) == stream_id) {
      held_bytes_ -= it->second.data.size();
      Drop(std::move(it->second));
      held_.erase(it++);
      ++dropped;
    } else {
      ++it;
    }
  }
  next_.erase(stream_id);
  stats_.reset_dropped += dropped;
  return dropped;
}

uint32_t OrderedRelease::next_seq(uint16_t stream_id) const {
  auto it = next_.find(stream_id);
  return it == next_.end() ? 0 : it->second;
}

}  // namespace braid::reorder

#include "reorder/reassembler.h"

#include <cstring>
#include <utility>

namespace braid::reorder {
namespace {

// Bitmaps up to this many words live inline in the Partial (not charged).
constexpr size_t kInlineWords = 2;

uint64_t BitmapCharge(size_t words) {
  return words > kInlineWords ? words * sizeof(uint64_t) : 0;
}

}  // namespace

Reassembler::Reassembler(const ReassemblerOptions& options, BufferPool* pool)
    : options_(options), pool_(pool) {
  if (options_.max_message_bytes == 0) {
    options_.max_message_bytes = options_.max_bytes;
  }
  if (pool_ == nullptr) pool_ = options_.pool;
  if (pool_ == nullptr) {
    own_pool_ = std::make_unique<BufferPool>();
    pool_ = own_pool_.get();
  }
}

Reassembler::FragResult Reassembler::Malformed(uint64_t* counter) {
  ++*counter;
  return FragResult::kMalformed;
}

Reassembler::FragResult Reassembler::OnFragment(const Fragment& f,
                                                CompletedMessage* out) {
  ++stats_.fragments;
  const uint64_t len = f.payload.size();
  if (f.msg_len > options_.max_message_bytes) {
    return Malformed(&stats_.malformed_too_large);
  }
  if (uint64_t{f.offset} + len > f.msg_len) {
    return Malformed(&stats_.malformed_out_of_bounds);
  }
  const bool final = uint64_t{f.offset} + len == f.msg_len;
  const uint32_t key = f.msg.value();

  auto it = partials_.empty() ? partials_.end() : partials_.find(key);
  bool created = false;
  if (it == partials_.end()) {
    if (final && f.offset == 0) {
      // The whole message in one fragment (also the 0-byte message).
      if (out->data.capacity() > 0) pool_->Put(std::move(out->data));
      out->msg = f.msg;
      out->stream_id = f.stream_id;
      out->stream_seq = f.stream_seq;
      out->data = pool_->Get(len);
      if (len > 0) std::memcpy(out->data.data(), f.payload.data(), len);
      ++stats_.messages_completed;
      ++stats_.single_fragment_messages;
      stats_.bytes_completed += len;
      return FragResult::kComplete;
    }
    if (len == 0) return Malformed(&stats_.malformed_bad_layout);
    if (partials_.size() >= options_.max_partial_messages ||
        memory_used_ + f.msg_len > options_.max_bytes) {
      ++stats_.no_memory;
      return FragResult::kNoMemory;
    }
    it = partials_.try_emplace(key).first;
    Partial& p = it->second;
    p.stream_id = f.stream_id;
    p.stream_seq = f.stream_seq;
    p.msg_len = f.msg_len;
    p.data = pool_->Get(f.msg_len);
    p.charged = f.msg_len;
    memory_used_ += f.msg_len;
    bytes_buffered_ += f.msg_len;
    created = true;
  }

  Partial& p = it->second;
  if (!created && (p.msg_len != f.msg_len || p.stream_id != f.stream_id ||
                   p.stream_seq != f.stream_seq)) {
    return Malformed(&stats_.malformed_inconsistent);
  }

  FragResult r = FragResult::kPartial;
  uint32_t index = 0;
  if (len == 0) {
    r = Malformed(&stats_.malformed_bad_layout);
  } else if (final && p.frag_size == 0) {
    // Last fragment before any other: remember where it sits; validated
    // once a non-final fragment reveals L.
    if (p.have_final) {
      r = Malformed(&stats_.malformed_overlap);
    } else {
      p.have_final = true;
      p.final_offset = f.offset;
      std::memcpy(p.data.data() + f.offset, f.payload.data(), len);
      return FragResult::kPartial;
    }
  } else if (final) {
    index = p.total_frags - 1;
    if (uint64_t{f.offset} != uint64_t{index} * p.frag_size) {
      r = Malformed(&stats_.malformed_bad_layout);
    }
  } else {
    if (p.frag_size == 0) {
      r = LearnFragSize(p, static_cast<uint32_t>(len));
    } else if (len != p.frag_size) {
      r = Malformed(&stats_.malformed_bad_layout);
    }
    if (r == FragResult::kPartial) {
      if (f.offset % p.frag_size != 0) {
        r = Malformed(&stats_.malformed_bad_layout);
      } else {
        index = f.offset / p.frag_size;
      }
    }
  }
  if (r == FragResult::kPartial &&
      ((p.seen[index >> 6] >> (index & 63)) & 1) != 0) {
    r = Malformed(&stats_.malformed_overlap);
  }
  if (r != FragResult::kPartial) {
    if (created) {
      Release(p);
      partials_.erase(it);
    }
    return r;
  }

  p.seen[index >> 6] |= uint64_t{1} << (index & 63);
  ++p.received_frags;
  std::memcpy(p.data.data() + f.offset, f.payload.data(), len);
  if (p.received_frags == p.total_frags) return Complete(key, p, out);
  return FragResult::kPartial;
}

Reassembler::FragResult Reassembler::LearnFragSize(Partial& p, uint32_t len) {
  // Non-final fragment: len < msg_len, so total >= 2.
  const uint32_t total =
      static_cast<uint32_t>((uint64_t{p.msg_len} + len - 1) / len);
  const uint32_t last = total - 1;
  if (p.have_final && uint64_t{p.final_offset} != uint64_t{last} * len) {
    return Malformed(&stats_.malformed_bad_layout);
  }
  const size_t words = (size_t{total} + 63) / 64;
  const uint64_t extra = BitmapCharge(words);
  if (memory_used_ + extra > options_.max_bytes) {
    ++stats_.no_memory;
    return FragResult::kNoMemory;
  }
  p.frag_size = len;
  p.total_frags = total;
  p.seen.assign(words, 0);
  p.charged += extra;
  memory_used_ += extra;
  if (p.have_final) {
    p.seen[last >> 6] |= uint64_t{1} << (last & 63);
    p.received_frags = 1;
  }
  return FragResult::kPartial;
}

Reassembler::FragResult Reassembler::Complete(uint32_t key, Partial& p,
                                              CompletedMessage* out) {
  if (out->data.capacity() > 0) pool_->Put(std::move(out->data));
  out->msg = wire::MsgSeq(key);
  out->stream_id = p.stream_id;
  out->stream_seq = p.stream_seq;
  out->data = std::move(p.data);
  ++stats_.messages_completed;
  stats_.bytes_completed += p.msg_len;
  memory_used_ -= p.charged;
  bytes_buffered_ -= p.msg_len;
  partials_.erase(key);
  return FragResult::kComplete;
}

void Reassembler::Release(Partial& p) {
  memory_used_ -= p.charged;
  bytes_buffered_ -= p.msg_len;
  p.charged = 0;
  if (p.data.capacity() > 0) pool_->Put(std::move(p.data));
}

void Reassembler::Clear() {
  for (auto& [key, p] : partials_) {
    Release(p);
    ++stats_.cleared_messages;
  }
  partials_.clear();
}

}  // namespace braid::reorder

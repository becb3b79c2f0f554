#include "reorder/reassembler.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

namespace braid::reorder {

Reassembler::Reassembler(const ReassemblerOptions& options, BufferPool* pool)
    : options_(options),
      pool_(pool),
      budget_(options.budget != nullptr ? options.budget : &own_budget_),
      chunk_shift_(static_cast<uint32_t>(std::countr_zero(
          std::bit_floor(std::max<uint32_t>(options.chunk_bytes, 64))))) {
  if (options_.max_message_bytes == 0) {
    options_.max_message_bytes = options_.max_bytes;
  }
  if (pool_ == nullptr) pool_ = options_.pool;
  if (pool_ == nullptr) {
    own_pool_ = std::make_unique<BufferPool>();
    pool_ = own_pool_.get();
  }
}

Reassembler::~Reassembler() {
  for (auto& [key, p] : partials_) Release(p);
}

Reassembler::FragResult Reassembler::Malformed(uint64_t* counter) {
  ++*counter;
  return FragResult::kMalformed;
}

namespace {

bool RefuseAll(const Fragment&, absl::Span<uint8_t>*) { return false; }

}  // namespace

Reassembler::FragResult Reassembler::OnFragment(const Fragment& f,
                                                CompletedMessage* out) {
  return OnFragment(f, RefuseAll, out);
}

// Inlined, as the other steps of OnFragment: they run once per fragment.
[[gnu::always_inline]] inline uint64_t* Reassembler::LayoutError(
    const Fragment& f) {
  const bool placed = f.placement != nullptr;
  // A placed message needs no buffer: the limit is the destination's size,
  // which the placement function checks.
  if (!placed && f.msg_len > options_.max_message_bytes) {
    return &stats_.malformed_too_large;
  }
  if (uint64_t{f.offset} + f.payload.size() > f.msg_len) {
    return &stats_.malformed_out_of_bounds;
  }
  if (placed && (f.placement->head_len > f.msg_len ||
                 f.placement->head_len > options_.max_placement_head)) {
    return &stats_.malformed_placement;
  }
  return nullptr;
}

[[gnu::always_inline]] inline Reassembler::FragResult
Reassembler::CompleteWhole(const Fragment& f, uint32_t buf_len, PlaceFn place,
                           CompletedMessage* out) {
  const uint64_t len = f.payload.size();
  if (out->data.capacity() > 0) pool_->Put(std::move(out->data));
  out->msg = f.msg;
  out->stream_id = f.stream_id;
  out->stream_seq = f.stream_seq;
  out->msg_len = f.msg_len;
  out->data = pool_->Reserve(buf_len);
  if (buf_len > options_.fragment_copy_limit) {
    out->data.resize(buf_len);
    std::memcpy(out->data.data(), f.payload.data(),
                options_.fragment_copy_limit);
  } else {
    out->data.assign(f.payload.data(), f.payload.data() + buf_len);
  }
  stats_.bytes_copied += buf_len;
  out->placement = Placement::kNone;
  out->ext = wire::PlacementExt();
  if (f.placement != nullptr) {
    out->ext = *f.placement;
    const uint64_t n = len - buf_len;
    absl::Span<uint8_t> dest;
    if (n > 0 && (!place(f, &dest) || dest.size() < n)) {
      out->placement = Placement::kRefused;
      ++stats_.messages_refused;
    } else {
      if (n > 0) std::memcpy(dest.data(), f.payload.data() + buf_len, n);
      stats_.bytes_placed += n;
      out->placement = Placement::kPlaced;
      ++stats_.messages_placed;
    }
  }
  ++stats_.messages_completed;
  ++stats_.single_fragment_messages;
  stats_.bytes_completed += len;
  return FragResult::kComplete;
}

namespace {

// Writes src[0, n) at `off` of a buffer whose capacity covers it but whose
// size() may not: bytes past size() are appended (no zero-fill first); a
// gap before `off` (a fragment ahead of one still missing, within the
// committed chunks) is zero-filled, to be overwritten when that fragment
// comes.
// With `copy` < n only src[0, copy) is written; the buffer still grows to
// cover [off, off + n) (ReassemblerOptions::fragment_copy_limit).
void WriteAt(std::vector<uint8_t>& v, uint64_t off, const uint8_t* src,
             uint64_t n, uint64_t copy) {
  if (copy < n) {
    if (off + n > v.size()) v.resize(off + n);
    if (copy > 0) std::memcpy(v.data() + off, src, copy);
    return;
  }
  if (off > v.size()) v.resize(off);
  const uint64_t inside = std::min<uint64_t>(n, v.size() - off);
  if (inside > 0) std::memcpy(v.data() + off, src, inside);
  if (inside < n) v.insert(v.end(), src + inside, src + n);
}

}  // namespace

namespace {

// What a partial message costs beyond its bytes: its map slot and record.
constexpr uint64_t kPartialOverhead = 128;

}  // namespace

[[gnu::always_inline]] inline bool Reassembler::Charge(Partial& p, uint64_t n) {
  if (memory_used_ + n > options_.max_bytes) {
    last_refusal_endpoint_ = false;
    return false;
  }
  if (!budget_->TryCommit(n, proven_)) {
    last_refusal_endpoint_ = true;
    return false;
  }
  p.charged += n;
  memory_used_ += n;
  return true;
}

Reassembler::PartialMap::iterator Reassembler::StartPartial(uint32_t key,
                                                            const Fragment& f,
                                                            uint32_t buf_len) {
  const bool placed = f.placement != nullptr;
  auto it = partials_.try_emplace(key).first;
  Partial& p = it->second;
  if (!Charge(p, kPartialOverhead)) {
    partials_.erase(it);
    return partials_.end();
  }
  p.stream_id = f.stream_id;
  p.stream_seq = f.stream_seq;
  p.msg_len = f.msg_len;
  p.buffered = buf_len;
  p.placed = placed;
  if (placed) p.ext = *f.placement;
  bytes_buffered_ += buf_len;
  return it;
}

void Reassembler::GrowBuffer(Partial& p, uint64_t need) {
  if (p.data.capacity() >= need) return;
  // The whole length at once while the endpoint's reservations allow (no
  // copy ever; the pages are touched as fragments land); else twice what
  // the buffer holds, copying it.
  uint64_t want = p.buffered;
  if (p.reserved != 0 || !budget_->TryReserveAhead(want, proven_)) {
    want = std::min<uint64_t>(
        p.buffered, std::max<uint64_t>({need, 2 * p.data.capacity(),
                                        uint64_t{1} << chunk_shift_}));
    budget_->AddReserved(want);
  }
  std::vector<uint8_t> b = pool_->Reserve(want);
  if (!p.data.empty()) b.assign(p.data.begin(), p.data.end());
  if (p.data.capacity() > 0) pool_->Put(std::move(p.data));
  p.data = std::move(b);
  budget_->Unreserve(p.reserved);
  p.reserved = want;
}

bool Reassembler::CommitRange(Partial& p, uint64_t begin, uint64_t end) {
  const uint64_t chunk = uint64_t{1} << chunk_shift_;
  const uint64_t last = (end - 1) >> chunk_shift_;
  for (uint64_t k = begin >> chunk_shift_; k <= last; ++k) {
    if (k < p.chunks) continue;
    auto side = std::lower_bound(
        p.side.begin(), p.side.end(), k,
        [](const SideChunk& c, uint64_t i) { return c.index < i; });
    if (side != p.side.end() && side->index == k) continue;
    const uint64_t start = k * chunk;
    const uint64_t len = std::min<uint64_t>(chunk, p.buffered - start);
    if (!Charge(p, len)) return false;
    if (k > p.chunks) {  // ahead of the buffer: a chunk of its own
      SideChunk c;
      c.index = static_cast<uint32_t>(k);
      c.bytes = pool_->Reserve(len);
      c.bytes.clear();
      p.side.insert(side, std::move(c));
      ++stats_.side_chunks;
      continue;
    }
    GrowBuffer(p, start + len);
    ++p.chunks;
    // The buffer reached chunks that landed ahead of it: move them in.
    while (!p.side.empty() && p.side.front().index == p.chunks) {
      SideChunk& c = p.side.front();
      const uint64_t at = uint64_t{c.index} * chunk;
      GrowBuffer(p, at + std::min<uint64_t>(chunk, p.buffered - at));
      WriteAt(p.data, at, c.bytes.data(), c.bytes.size(), c.bytes.size());
      pool_->Put(std::move(c.bytes));
      p.side.erase(p.side.begin());
      ++p.chunks;
    }
  }
  return true;
}

void Reassembler::WriteBuffer(Partial& p, uint64_t off, const uint8_t* src,
                              uint64_t n, uint64_t copy) {
  const uint64_t chunk = uint64_t{1} << chunk_shift_;
  const uint64_t direct = uint64_t{p.chunks} << chunk_shift_;
  if (off + n <= direct) {  // the common case: all within the buffer
    WriteAt(p.data, off, src, n, copy);
    return;
  }
  while (n > 0) {
    const uint64_t k = off >> chunk_shift_;
    const uint64_t piece = std::min(n, (k + 1) * chunk - off);
    const uint64_t piece_copy = std::min(piece, copy);
    if (k < p.chunks) {
      WriteAt(p.data, off, src, piece, piece_copy);
    } else {
      auto side = std::lower_bound(
          p.side.begin(), p.side.end(), k,
          [](const SideChunk& c, uint64_t i) { return c.index < i; });
      WriteAt(side->bytes, off - k * chunk, src, piece, piece_copy);
    }
    off += piece;
    src += piece;
    n -= piece;
    copy -= piece_copy;
  }
}

[[gnu::always_inline]] inline bool Reassembler::Matches(const Partial& p,
                                                        const Fragment& f) {
  const bool placed = f.placement != nullptr;
  return p.msg_len == f.msg_len && p.stream_id == f.stream_id &&
         p.stream_seq == f.stream_seq && p.placed == placed &&
         (!placed || p.ext == *f.placement);
}

[[gnu::always_inline]] inline Reassembler::FragResult Reassembler::AddToPartial(
    PartialMap::iterator it, bool created, const Fragment& f, PlaceFn place,
    CompletedMessage* out) {
  Partial& p = it->second;
  const uint64_t len = f.payload.size();
  // Only a 0-byte message has an empty fragment (handled above).
  FragResult r =
      len == 0 ? Malformed(&stats_.malformed_bad_layout) : FragResult::kPartial;
  // Memory first, so a refused fragment leaves no trace in the coverage:
  // the buffer chunks it touches, and the coverage ranges that outgrow
  // their inline room (many holes = a badly reordered or forged message).
  const uint64_t buf_end = std::min<uint64_t>(f.offset + len, p.buffered);
  const size_t heap_before = p.seen.heap_bytes();
  const size_t heap_bound =
      len == 0 ? heap_before
               : p.seen.heap_bytes_after(f.offset,
                                         static_cast<uint32_t>(f.offset + len));
  const uint64_t direct = uint64_t{p.chunks} << chunk_shift_;
  if (r == FragResult::kPartial &&
      ((buf_end > direct && f.offset < buf_end &&
        !CommitRange(p, f.offset, buf_end)) ||
       (heap_bound > heap_before && !Charge(p, heap_bound - heap_before)))) {
    ++stats_.no_memory;
    if (last_refusal_endpoint_) ++stats_.no_memory_endpoint;
    r = FragResult::kNoMemory;
  }
  if (r == FragResult::kPartial &&
      !p.seen.Insert(f.offset, static_cast<uint32_t>(f.offset + len))) {
    r = Malformed(&stats_.malformed_overlap);
  }
  if (heap_bound > heap_before && r != FragResult::kNoMemory) {
    // Give back what the bound charged beyond what the ranges took.
    const uint64_t extra = heap_bound - p.seen.heap_bytes();
    p.charged -= extra;
    memory_used_ -= extra;
    budget_->Release(extra);
  }
  if (r != FragResult::kPartial) {
    if (created) {
      Release(p);
      partials_.erase(it);
    }
    return r;
  }
  if (!p.placed && f.offset + len <= uint64_t{p.chunks} << chunk_shift_) {
    WriteAt(p.data, f.offset, f.payload.data(), len,  // within the buffer
            std::min<uint64_t>(len, options_.fragment_copy_limit));
    stats_.bytes_copied += len;
  } else {
    Store(p, f, place);
  }
  if (p.seen.covered_bytes() == p.msg_len) return Complete(it->first, p, out);
  return FragResult::kPartial;
}

Reassembler::FragResult Reassembler::OnFragment(const Fragment& f,
                                                PlaceFn place,
                                                CompletedMessage* out) {
  ++stats_.fragments;
  if (uint64_t* counter = LayoutError(f)) return Malformed(counter);
  const uint64_t len = f.payload.size();
  const bool placed = f.placement != nullptr;
  const bool final = uint64_t{f.offset} + len == f.msg_len;
  const uint32_t key = f.msg.value();
  // Bytes this message buffers: all of it, or (placed) its head.
  const uint32_t buf_len = placed ? f.placement->head_len : f.msg_len;

  auto it = partials_.empty() ? partials_.end() : partials_.find(key);
  bool created = false;
  if (it == partials_.end()) {
    if (final && f.offset == 0) return CompleteWhole(f, buf_len, place, out);
    if (len == 0) return Malformed(&stats_.malformed_bad_layout);
    if (partials_.size() >= options_.max_partial_messages) {
      last_refusal_endpoint_ = false;
      ++stats_.no_memory;
      return FragResult::kNoMemory;
    }
    it = StartPartial(key, f, buf_len);
    if (it == partials_.end()) {
      ++stats_.no_memory;
      if (last_refusal_endpoint_) ++stats_.no_memory_endpoint;
      return FragResult::kNoMemory;
    }
    created = true;
  } else if (!Matches(it->second, f)) {
    return Malformed(&stats_.malformed_inconsistent);
  }
  return AddToPartial(it, created, f, place, out);
}

void Reassembler::Store(Partial& p, const Fragment& f, PlaceFn place) {
  const uint8_t* src = f.payload.data();
  uint64_t left = f.payload.size();
  if (!p.placed) {
    WriteBuffer(p, f.offset, src, left,
                std::min<uint64_t>(left, options_.fragment_copy_limit));
    stats_.bytes_copied += left;
    return;
  }
  const uint64_t head = p.ext.head_len;
  uint64_t off = f.offset;
  if (off < head) {
    const uint64_t n = std::min(left, head - off);
    WriteBuffer(p, off, src, n, n);
    stats_.bytes_copied += n;
    src += n;
    off += n;
    left -= n;
  }
  if (left == 0 || p.refused) return;
  absl::Span<uint8_t> dest;
  if (!place(f, &dest) || dest.size() < uint64_t{p.msg_len} - head) {
    p.refused = true;  // sticky: no later fragment is written either
    return;
  }
  std::memcpy(dest.data() + (off - head), src, left);
  stats_.bytes_placed += left;
}

Reassembler::FragResult Reassembler::Complete(uint32_t key, Partial& p,
                                              CompletedMessage* out) {
  if (out->data.capacity() > 0) pool_->Put(std::move(out->data));
  out->msg = wire::MsgSeq(key);
  out->stream_id = p.stream_id;
  out->stream_seq = p.stream_seq;
  out->data = std::move(p.data);
  // Every byte was written; a reused buffer may have been longer.
  out->data.resize(p.buffered);
  out->msg_len = p.msg_len;
  out->ext = p.ext;
  out->placement = !p.placed   ? Placement::kNone
                   : p.refused ? Placement::kRefused
                               : Placement::kPlaced;
  if (p.placed)
    ++(p.refused ? stats_.messages_refused : stats_.messages_placed);
  ++stats_.messages_completed;
  stats_.bytes_completed += p.msg_len;
  memory_used_ -= p.charged;
  budget_->Release(p.charged);
  budget_->Unreserve(p.reserved);
  bytes_buffered_ -= p.buffered;
  partials_.erase(key);
  return FragResult::kComplete;
}

void Reassembler::Release(Partial& p) {
  memory_used_ -= p.charged;
  budget_->Release(p.charged);
  budget_->Unreserve(p.reserved);
  bytes_buffered_ -= p.buffered;
  p.charged = 0;
  p.reserved = 0;
  p.buffered = 0;
  if (p.data.capacity() > 0) pool_->Put(std::move(p.data));
  for (SideChunk& c : p.side) pool_->Put(std::move(c.bytes));
  p.side.clear();
}

void Reassembler::Clear() {
  for (auto& [key, p] : partials_) {
    Release(p);
    ++stats_.cleared_messages;
  }
  partials_.clear();
}

}  // namespace braid::reorder

#include "libfabric/match_queue.h"

namespace braid::libfabric {

bool Matches(const RecvSpec& spec, const NetAddr& peer, uint64_t tag) {
  if (((spec.tag ^ tag) & ~spec.ignore) != 0) return false;
  return !spec.src.valid() || spec.src == peer;
}

size_t PostedRecv::capacity() const {
  size_t n = 0;
  for (const iovec& v : iov) n += v.iov_len;
  return n;
}

bool PostedQueue::TakeMatch(const NetAddr& peer, uint64_t tag,
                            PostedRecv* out) {
  for (size_t i = 0; i < q_.size(); ++i) {
    if (Matches(q_.at(i).spec, peer, tag)) {
      *out = q_.take(i);
      return true;
    }
  }
  return false;
}

bool PostedQueue::TakeByContext(void* context, PostedRecv* out) {
  for (size_t i = 0; i < q_.size(); ++i) {
    if (q_.at(i).context == context) {
      *out = q_.take(i);
      return true;
    }
  }
  return false;
}

void UnexpectedQueue::Push(UnexpectedMsg&& m) {
  bytes_ += m.payload_bytes();
  q_.push_back(std::move(m));
}

bool UnexpectedQueue::TakeMatch(const RecvSpec& spec, UnexpectedMsg* out) {
  for (size_t i = 0; i < q_.size(); ++i) {
    const UnexpectedMsg& m = q_.at(i);
    if (Matches(spec, m.peer, m.header.tag)) {
      *out = q_.take(i);
      bytes_ -= out->payload_bytes();
      return true;
    }
  }
  return false;
}

const UnexpectedMsg* UnexpectedQueue::Peek(const RecvSpec& spec) {
  for (size_t i = 0; i < q_.size(); ++i) {
    const UnexpectedMsg& m = q_.at(i);
    if (Matches(spec, m.peer, m.header.tag)) return &m;
  }
  return nullptr;
}

std::vector<UnexpectedMsg> UnexpectedQueue::TakeAll() {
  std::vector<UnexpectedMsg> all;
  while (!q_.empty()) all.push_back(q_.take(0));
  bytes_ = 0;
  return all;
}

}  // namespace braid::libfabric

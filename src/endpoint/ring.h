// A growable FIFO ring of movable values, for the send queues and the
// completion queue. Unlike std::deque it keeps its storage: once it has grown
// to the largest depth the traffic needs, pushing and popping allocate
// nothing (a deque allocates and frees a block every few hundred bytes of
// elements passing through).
#ifndef BRAID_ENDPOINT_RING_H_
#define BRAID_ENDPOINT_RING_H_

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace braid::endpoint {

template <typename T>
class Ring {
 public:
  Ring() = default;
  // Reserves room for `n` elements up front (rounded up to a power of two).
  explicit Ring(size_t n) { Grow(n); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Elements it can hold before it allocates again.
  size_t capacity() const { return buf_.size(); }

  // i-th element from the front; i < size().
  T& operator[](size_t i) {
    assert(i < size_);
    return buf_[(head_ + i) & mask_];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return buf_[(head_ + i) & mask_];
  }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  // Appends `v` at the back (allocates only when full: doubles).
  void push_back(T&& v) {
    if (size_ == buf_.size()) Grow(size_ + 1);
    buf_[(head_ + size_) & mask_] = std::move(v);
    ++size_;
  }
  // Inserts `v` at the front (allocates only when full: doubles).
  void push_front(T&& v) {
    if (size_ == buf_.size()) Grow(size_ + 1);
    head_ = (head_ + buf_.size() - 1) & mask_;
    buf_[head_] = std::move(v);
    ++size_;
  }
  // Removes the front element; its slot is reset to T{} so whatever it owned
  // is released now, not when the slot is reused.
  void pop_front() {
    assert(size_ > 0);
    buf_[head_] = T{};
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  // Removes every element; keeps the storage.
  void clear() {
    while (size_ > 0) pop_front();
    head_ = 0;
  }

 private:
  void Grow(size_t need) {
    size_t cap = buf_.empty() ? 8 : buf_.size();
    while (cap < need) cap *= 2;
    std::vector<T> nb(cap);
    for (size_t i = 0; i < size_; ++i) nb[i] = std::move((*this)[i]);
    buf_ = std::move(nb);
    head_ = 0;
    mask_ = cap - 1;
  }

  std::vector<T> buf_;
  size_t head_ = 0;
  size_t size_ = 0;
  size_t mask_ = 0;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_RING_H_

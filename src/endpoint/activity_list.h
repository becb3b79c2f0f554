// ActivityList: the awake peers, least recently active first, as an
// intrusive doubly linked list (every operation O(1), no allocation). An
// element type T has members `T* act_prev`, `T* act_next`, `bool
// act_linked` (all initially null/false) and is on at most one list.
// EndpointCore moves a peer to the back at each of its events and looks
// at the front to put peers that stayed idle long enough to sleep.
#ifndef BRAID_ENDPOINT_ACTIVITY_LIST_H_
#define BRAID_ENDPOINT_ACTIVITY_LIST_H_

#include <cstddef>

namespace braid::endpoint {

template <typename T>
class ActivityList {
 public:
  ActivityList() = default;
  ActivityList(const ActivityList&) = delete;
  ActivityList& operator=(const ActivityList&) = delete;

  // The least recently moved element; null if empty.
  T* front() const { return head_; }
  size_t size() const { return size_; }

  // Appends `x`, or moves it to the back if it is on the list.
  void MoveToBack(T* x) {
    if (x == tail_) return;
    if (x->act_linked) Unlink(x);
    x->act_prev = tail_;
    x->act_next = nullptr;
    if (tail_ != nullptr) {
      tail_->act_next = x;
    } else {
      head_ = x;
    }
    tail_ = x;
    x->act_linked = true;
    ++size_;
  }
  // Takes `x` off the list; nothing if it is not on it.
  void Remove(T* x) {
    if (x->act_linked) Unlink(x);
  }

 private:
  void Unlink(T* x) {
    (x->act_prev != nullptr ? x->act_prev->act_next : head_) = x->act_next;
    (x->act_next != nullptr ? x->act_next->act_prev : tail_) = x->act_prev;
    x->act_prev = x->act_next = nullptr;
    x->act_linked = false;
    --size_;
  }

  T* head_ = nullptr;
  T* tail_ = nullptr;
  size_t size_ = 0;
};

}  // namespace braid::endpoint

#endif  // BRAID_ENDPOINT_ACTIVITY_LIST_H_

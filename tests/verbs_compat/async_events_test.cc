// AsyncEvents: the event queue behind a braid0 context's async_fd, counted
// on the eventfd as libibverbs counts kernel events.
#include "verbs_compat/async_events.h"

#include <poll.h>

#include "gtest/gtest.h"

namespace braid::verbs_compat {
namespace {

bool Readable(int fd) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  return poll(&p, 1, 0) == 1;
}

ibv_async_event QpEvent(ibv_qp* qp, ibv_event_type type) {
  ibv_async_event ev{};
  ev.element.qp = qp;
  ev.event_type = type;
  return ev;
}

TEST(AsyncEventsTest, RaisedEventsAreTakenInOrderAndCountedOnTheFd) {
  AsyncEvents events;
  ASSERT_GE(events.fd(), 0);
  EXPECT_FALSE(Readable(events.fd()));
  ibv_qp a{}, b{};
  events.Raise(QpEvent(&a, IBV_EVENT_QP_FATAL));
  events.Raise(QpEvent(&b, IBV_EVENT_QP_ACCESS_ERR));
  EXPECT_TRUE(Readable(events.fd()));
  ibv_async_event ev;
  ASSERT_TRUE(events.Take(&ev));
  EXPECT_EQ(ev.element.qp, &a);
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
  EXPECT_TRUE(Readable(events.fd()));  // one more counted
  ASSERT_TRUE(events.Take(&ev));
  EXPECT_EQ(ev.element.qp, &b);
  EXPECT_FALSE(Readable(events.fd()));
  EXPECT_FALSE(events.Take(&ev));
}

TEST(AsyncEventsTest, ForgetDropsQueuedEventsAndReturnsHowManyWereTaken) {
  AsyncEvents events;
  ibv_qp a{}, b{};
  events.Raise(QpEvent(&a, IBV_EVENT_QP_FATAL));
  ibv_async_event ev;
  ASSERT_TRUE(events.Take(&ev));  // reported for `a`, awaiting its ack
  events.Raise(QpEvent(&a, IBV_EVENT_QP_LAST_WQE_REACHED));
  events.Raise(QpEvent(&b, IBV_EVENT_QP_FATAL));
  EXPECT_EQ(events.Forget(&a), 1u);
  // Only b's event is left, with its count.
  ASSERT_TRUE(events.Take(&ev));
  EXPECT_EQ(ev.element.qp, &b);
  EXPECT_FALSE(Readable(events.fd()));
  EXPECT_EQ(events.Forget(&a), 0u);
}

TEST(AsyncEventsTest, AckCountsOnTheEventsObject) {
  ibv_cq cq{};
  pthread_mutex_init(&cq.mutex, nullptr);
  pthread_cond_init(&cq.cond, nullptr);
  ibv_async_event ev{};
  ev.element.cq = &cq;
  ev.event_type = IBV_EVENT_CQ_ERR;
  AckAsyncEvent(ev);
  EXPECT_EQ(cq.async_events_completed, 1u);
  WaitAsyncAcks(&cq.mutex, &cq.cond, &cq.async_events_completed, 1);
  pthread_cond_destroy(&cq.cond);
  pthread_mutex_destroy(&cq.mutex);
}

}  // namespace
}  // namespace braid::verbs_compat

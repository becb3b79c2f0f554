#include "cc/no_congestion_control.h"

#include "gtest/gtest.h"

namespace braid::cc {
namespace {

TEST(NoCongestionControlTest, WindowIsAlwaysMax) {
  CcOptions o;
  o.max_cwnd_bytes = 1 << 20;
  NoCongestionControl cc(o);
  EXPECT_EQ(cc.cwnd_bytes(), 1u << 20);
  AckEvent a;
  a.now = TimeNs(1000);
  a.bytes_acked = 4096;
  a.packets_acked = 1;
  a.rtt = DurationNs::Millis(50);
  a.ce_packets = 1;
  cc.OnAck(a);
  LossEvent l;
  l.now = TimeNs(2000);
  l.packets_lost = 100;
  l.bytes_lost = 409600;
  cc.OnLoss(l);
  l.rto = true;
  cc.OnLoss(l);
  cc.OnLoss(l);
  EXPECT_EQ(cc.cwnd_bytes(), 1u << 20);
  EXPECT_EQ(cc.name(), "none");
  EXPECT_EQ(cc.stats().ack_events, 1u);
  EXPECT_EQ(cc.stats().loss_events, 3u);
  EXPECT_EQ(cc.stats().rto_events, 2u);
}

}  // namespace
}  // namespace braid::cc

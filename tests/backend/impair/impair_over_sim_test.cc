// The test impairment wrapper over a backend other than UDP: the simulator's,
// on the simulator's virtual clock.
#include <memory>
#include <string>
#include <vector>

#include "backend/impair/impair_backend.h"
#include "backend/sim/sim_backend.h"
#include "gtest/gtest.h"
#include "sim/leaf_spine.h"
#include "sim/sim_clock.h"
#include "sim/simulator.h"

namespace braid::backend {
namespace {

class ImpairOverSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto net = sim::LeafSpine::Create(&sim_, sim::LeafSpineOptions{});
    ASSERT_TRUE(net.ok());
    net_ = std::move(*net);
    b_ = std::make_unique<SimBackend>(&net_->host(4));
  }
  void Wrap(const TestImpairments& imp) {
    a_ = std::make_unique<ImpairBackend>(
        std::make_unique<SimBackend>(&net_->host(0)), imp,
        DurationNs::Micros(50), &clock_);
  }
  // Sends `n` one-byte datagrams (their index) from host 0 to host 4.
  void Send(int n) {
    std::vector<uint8_t> bytes(n);
    std::vector<TxPacket> pkts(n);
    for (int i = 0; i < n; ++i) {
      bytes[i] = static_cast<uint8_t>(i);
      pkts[i].dst = b_->LocalAddress();
      pkts[i].entropy = static_cast<wire::Entropy>(i % 16);
      pkts[i].data = &bytes[i];
      pkts[i].len = 1;
    }
    ASSERT_EQ(a_->TxBurst(pkts), static_cast<size_t>(n));
  }
  // Datagrams host 4 has received by now.
  std::vector<uint8_t> Received() {
    std::vector<uint8_t> got;
    RxPacket rx[64];
    while (size_t n = b_->RxBurst(absl::MakeSpan(rx))) {
      for (size_t i = 0; i < n; ++i) got.push_back(rx[i].data[0]);
    }
    return got;
  }

  sim::Simulator sim_;
  sim::SimClock clock_{&sim_};
  std::unique_ptr<sim::LeafSpine> net_;
  std::unique_ptr<ImpairBackend> a_;
  std::unique_ptr<SimBackend> b_;
};

TEST_F(ImpairOverSimTest, DropsAreCountedAndTheRestArrives) {
  Wrap({.drop = 0.3, .seed = 7});
  Send(200);
  sim_.RunUntilIdle();
  const size_t got = Received().size();
  const BackendCounters c = a_->counters();
  EXPECT_EQ(got + c.impair_dropped, 200u);
  EXPECT_GT(c.impair_dropped, 30u);
  EXPECT_LT(c.impair_dropped, 100u);
}

TEST_F(ImpairOverSimTest, AHeldDatagramIsReleasedAfterMaxHoldInVirtualTime) {
  Wrap({.reorder = 1.0, .seed = 5});  // every datagram is held
  Send(1);
  sim_.RunUntilIdle();
  EXPECT_TRUE(Received().empty());
  // The deadline is on the simulator's clock, not the host's.
  EXPECT_EQ(a_->NextDeadline(), sim_.now() + DurationNs::Micros(50));
  sim_.RunFor(DurationNs::Micros(49));
  RxPacket rx[4];
  a_->RxBurst(absl::MakeSpan(rx));  // not yet due
  sim_.RunUntilIdle();
  EXPECT_TRUE(Received().empty());
  sim_.RunFor(DurationNs::Micros(1));
  a_->RxBurst(absl::MakeSpan(rx));  // due: released
  sim_.RunUntilIdle();
  EXPECT_EQ(Received(), std::vector<uint8_t>{0});
}

}  // namespace
}  // namespace braid::backend

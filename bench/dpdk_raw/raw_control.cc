#include "bench/dpdk_raw/raw_control.h"

#include <rte_ethdev.h>

namespace braid::dpdkraw {

bool SendControl(const Port& port, const Endpoint& src, const Endpoint& dst,
                 const BenchHeader& h) {
  rte_mbuf* m = rte_pktmbuf_alloc(port.rx_pool);
  if (m == nullptr) return false;
  constexpr uint32_t kBytes = kHeadersBytes + sizeof(BenchHeader);
  auto* frame = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kBytes));
  if (frame == nullptr) {
    rte_pktmbuf_free(m);
    return false;
  }
  WriteFrame(frame, src, dst, h, sizeof(BenchHeader), 0);
  const uint64_t deadline = Tsc() + TscTicks(0.01);
  while (rte_eth_tx_burst(port.id, 0, &m, 1) == 0) {
    if (Tsc() >= deadline) {
      rte_pktmbuf_free(m);
      return false;
    }
  }
  return true;
}

bool AwaitControl(const Port& port, uint8_t type, uint32_t run, double seconds,
                  RxFrame* out) {
  const uint64_t deadline = Tsc() + TscTicks(seconds);
  rte_mbuf* burst[32];
  bool found = false;
  while (!found && Tsc() < deadline && !Stopping()) {
    const uint16_t n = rte_eth_rx_burst(port.id, 0, burst, 32);
    for (uint16_t i = 0; i < n; ++i) {
      RxFrame f;
      if (!found && ParseFrame(burst[i], &f) == Drop::kNone &&
          f.h.type == type && f.h.run == run) {
        *out = f;
        found = true;
      }
    }
    rte_pktmbuf_free_bulk(burst, n);
  }
  return found;
}

bool Exchange(const Port& port, const Endpoint& src, const Endpoint& dst,
              const BenchHeader& h, uint8_t reply_type, double interval,
              double seconds, RxFrame* reply) {
  const uint64_t deadline = Tsc() + TscTicks(seconds);
  while (Tsc() < deadline && !Stopping()) {
    (void)SendControl(port, src, dst, h);
    if (AwaitControl(port, reply_type, h.run, interval, reply)) return true;
  }
  return false;
}

}  // namespace braid::dpdkraw

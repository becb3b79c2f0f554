// The DPDK backend's datapath on a ring wire (ring_wire.h): what a hostile
// or broken network puts on the wire is dropped and counted by reason before
// the protocol sees it, and only well-formed datagrams for this endpoint get
// through, in place and byte-exact.
#include "backend/dpdk/dpdk_backend.h"

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/backend/dpdk/ring_wire.h"

namespace braid::backend::dpdk {
namespace {

constexpr MacAddr kMacA = {2, 0, 0, 0, 0, 0xa};
constexpr MacAddr kMacB = {2, 0, 0, 0, 0, 0xb};

DpdkOptions OptionsFor(const std::string& port, const char* ip,
                       const MacAddr& mac, const MacAddr& peer) {
  DpdkOptions o;
  o.port.name = port;
  o.port.mbufs = 2047;
  o.bind = *NetAddr::Parse(ip);
  o.local_mac = mac;
  o.next_hop_mac = peer;
  return o;
}

// A valid datagram from B (10.8.0.11:5000) to A (10.8.0.10:7000).
std::vector<uint8_t> ValidFrame(const std::vector<uint8_t>& payload) {
  FrameHeaderSpec s;
  s.src_mac = kMacB;
  s.dst_mac = kMacA;
  s.src = *NetAddr::Parse("10.8.0.11:5000");
  s.dst = *NetAddr::Parse("10.8.0.10:7000");
  s.payload_len = static_cast<uint32_t>(payload.size());
  std::vector<uint8_t> f(FrameHeaderLen(s.src.family) + payload.size());
  WriteFrameHeader(s, false, absl::MakeSpan(f));
  std::memcpy(f.data() + FrameHeaderLen(s.src.family), payload.data(),
              payload.size());
  const absl::Span<const uint8_t> pieces[] = {absl::MakeConstSpan(payload)};
  FinishUdpChecksum(absl::MakeSpan(f.data(), FrameHeaderLen(s.src.family)),
                    pieces);
  return f;
}

// Recomputes the IPv4 header checksum of frame `f` after an edit.
void FixIpChecksum(std::vector<uint8_t>* f) {
  if (f->size() < 34) return;
  std::vector<uint8_t>& v = *f;
  const size_t ihl = (v[14] & 0x0f) * 4u;
  if (ihl < 20 || 14 + ihl > v.size()) return;
  v[24] = v[25] = 0;
  uint32_t sum = 0;
  for (size_t i = 14; i < 14 + ihl; i += 2) sum += (v[i] << 8) | v[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  v[24] = static_cast<uint8_t>(~sum >> 8);
  v[25] = static_cast<uint8_t>(~sum);
}

void Inject(uint16_t port, rte_mempool* pool, const std::vector<uint8_t>& f) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  ASSERT_NE(m, nullptr);
  char* d = rte_pktmbuf_append(m, static_cast<uint16_t>(f.size()));
  ASSERT_NE(d, nullptr);
  std::memcpy(d, f.data(), f.size());
  ASSERT_EQ(rte_eth_tx_burst(port, 0, &m, 1), 1);
}

TEST(DpdkBackendTest, MalformedAndForeignFramesAreDroppedAndCountedByReason) {
  const testing::RingWire w = testing::MakeRingWire("bad");
  auto a = DpdkBackend::Open(OptionsFor(w.a, "10.8.0.10:7000", kMacA, kMacB));
  auto b = DpdkBackend::Open(OptionsFor(w.b, "10.8.0.11:7001", kMacB, kMacA));
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  const uint16_t port_b = (*b)->port().id();
  rte_mempool* pool_b = (*b)->port().pool();
  const std::vector<uint8_t> payload(300, 0x5a);
  const std::vector<uint8_t> good = ValidFrame(payload);

  struct Case {
    const char* what;
    std::function<void(std::vector<uint8_t>*)> edit;
    uint64_t FrameStats::*counter;
    bool fix_ip_checksum = true;  // so only the edited field is wrong
  };
  const Case cases[] = {
      {"truncated IP header", [](auto* f) { f->resize(30); },
       &FrameStats::rx_short},
      {"VLAN tag", [](auto* f) { (*f)[12] = 0x81, (*f)[13] = 0x00; },
       &FrameStats::rx_ether_type},
      {"another MAC", [](auto* f) { (*f)[5] = 0x77; },
       &FrameStats::rx_wrong_mac},
      {"IP version 5", [](auto* f) { (*f)[14] = 0x55; },
       &FrameStats::rx_bad_ip_header},
      {"IP options", [](auto* f) { (*f)[14] = 0x46; },
       &FrameStats::rx_ip_options},
      {"fragment", [](auto* f) { (*f)[20] |= 0x20; }, &FrameStats::rx_fragment},
      {"another IP", [](auto* f) { (*f)[33] ^= 1; }, &FrameStats::rx_wrong_ip},
      {"TCP", [](auto* f) { (*f)[23] = 6; }, &FrameStats::rx_not_udp},
      {"UDP length past the frame", [](auto* f) { (*f)[38] = 0x7f; },
       &FrameStats::rx_bad_length},
      {"IP checksum", [](auto* f) { (*f)[25] ^= 0xff; },
       &FrameStats::rx_bad_ip_checksum, false},
      {"payload bit flip", [](auto* f) { (*f)[100] ^= 4; },
       &FrameStats::rx_bad_udp_checksum},
      {"another port", [](auto* f) { (*f)[37] ^= 1; },
       &FrameStats::rx_wrong_port},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> f = good;
    c.edit(&f);
    if (c.fix_ip_checksum) FixIpChecksum(&f);
    Inject(port_b, pool_b, f);
  }
  Inject(port_b, pool_b, good);
  std::vector<RxPacket> rx(DpdkBackend::kBurst);
  std::vector<RxPacket> got;
  for (int i = 0; i < 100 && got.empty(); ++i) {
    const size_t n = (*a)->RxBurst(absl::MakeSpan(rx));
    got.insert(got.end(), rx.begin(), rx.begin() + n);
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].src.ToString(), "10.8.0.11:5000");
  ASSERT_EQ(got[0].len, payload.size());
  EXPECT_EQ(std::memcmp(got[0].data, payload.data(), payload.size()), 0);
  const BackendCounters k = (*a)->counters();
  for (const Case& c : cases) {
    EXPECT_EQ(k.frames.*(c.counter), 1u) << c.what;
  }
  EXPECT_EQ(k.frames.rx_drops(), std::size(cases));
  EXPECT_EQ(k.rx_dropped, std::size(cases));
  EXPECT_EQ(k.rx_packets, 1u);
}

TEST(DpdkBackendTest, SendsAreFramedAsTheKernelWouldAndSprayedOverSourcePorts) {
  const testing::RingWire w = testing::MakeRingWire("spray");
  DpdkOptions oa = OptionsFor(w.a, "10.8.0.10:7000", kMacA, kMacB);
  oa.src_port_base = 40000;
  oa.num_entropies = 4;
  auto a = DpdkBackend::Open(oa);
  auto b = DpdkBackend::Open(OptionsFor(w.b, "10.8.0.11:7001", kMacB, kMacA));
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ((*a)->EntropyCount(), 4u);
  EXPECT_EQ((*a)->MaxDatagram(), 1472u);  // MTU 1500 - IPv4 - UDP
  const std::vector<uint8_t> head(20, 1), tail(1000, 2);
  std::vector<TxPacket> tx(4);
  for (uint32_t e = 0; e < 4; ++e) {
    tx[e].dst = (*b)->LocalAddress();
    tx[e].entropy = e;
    tx[e].ect = true;
    tx[e].data = head.data();
    tx[e].len = static_cast<uint32_t>(head.size());
    tx[e].tail = tail.data();
    tx[e].tail_len = static_cast<uint32_t>(tail.size());
  }
  ASSERT_EQ((*a)->TxBurst(tx), 4u);
  std::vector<RxPacket> rx(DpdkBackend::kBurst);
  size_t n = 0;
  for (int i = 0; i < 100 && n == 0; ++i) n = (*b)->RxBurst(absl::MakeSpan(rx));
  ASSERT_EQ(n, 4u);
  for (uint32_t e = 0; e < 4; ++e) {
    EXPECT_EQ(rx[e].src.ToString(), "10.8.0.10:" + std::to_string(40000 + e));
    ASSERT_EQ(rx[e].len, head.size() + tail.size());
    EXPECT_EQ(std::memcmp(rx[e].data, head.data(), head.size()), 0);
    EXPECT_EQ(std::memcmp(rx[e].data + head.size(), tail.data(), tail.size()),
              0);
    EXPECT_FALSE(rx[e].ce);
  }
  EXPECT_EQ((*b)->counters().rx_dropped, 0u);
}

TEST(DpdkBackendTest, CongestionExperiencedIsReadBackFromTheTos) {
  const testing::RingWire w = testing::MakeRingWire("ce");
  auto a = DpdkBackend::Open(OptionsFor(w.a, "10.8.0.10:7000", kMacA, kMacB));
  auto b = DpdkBackend::Open(OptionsFor(w.b, "10.8.0.11:7001", kMacB, kMacA));
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<uint8_t> f = ValidFrame(std::vector<uint8_t>(64, 3));
  // A switch marks CE (ECN bits 11) and fixes the IPv4 header checksum.
  f[15] |= 0x03;
  FixIpChecksum(&f);
  Inject((*b)->port().id(), (*b)->port().pool(), f);
  std::vector<RxPacket> rx(DpdkBackend::kBurst);
  size_t n = 0;
  for (int i = 0; i < 100 && n == 0; ++i) n = (*a)->RxBurst(absl::MakeSpan(rx));
  ASSERT_EQ(n, 1u);
  EXPECT_TRUE(rx[0].ce);
}

}  // namespace
}  // namespace braid::backend::dpdk

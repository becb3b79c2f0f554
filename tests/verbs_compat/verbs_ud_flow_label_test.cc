// A UD address handle's GRH flow label picks the UDP source port of
// braid0's datagrams, as a RoCE v2 NIC derives the source port from it:
// two AHs to one destination with different flow labels leave from
// different source ports, the same flow label from one. Seen on the wire:
// the AHs name a relay (a plain UDP socket of this test) that records the
// source port of every datagram and forwards it to the receiving braid0
// context, whose acks go straight back to the sender (the reply port is in
// braid's preamble), so the traffic is ordinary, loss-free braid.
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/verbs_compat/verbs_test_util.h"
#include "wire/frames.h"

namespace braid::verbs_compat::testing {
namespace {

// The IPv4 address and UDP port a braid0 GID encodes (docs/verbs.md).
sockaddr_in AddrOfGid(const ibv_gid& gid) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  std::memcpy(&a.sin_port, gid.raw + 8, 2);
  std::memcpy(&a.sin_addr.s_addr, gid.raw + 12, 4);
  return a;
}

ibv_gid GidOf(const sockaddr_in& a) {
  ibv_gid g{};
  std::memcpy(g.raw + 8, &a.sin_port, 2);
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  std::memcpy(g.raw + 12, &a.sin_addr.s_addr, 4);
  return g;
}

// A UDP socket on `ip` that forwards every datagram to `to` and records
// its source port and bytes.
class Relay {
 public:
  Relay(in_addr ip, const sockaddr_in& to) : to_(to) {
    fd_ = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr = ip;
    socklen_t len = sizeof(a);
    timeval tv{0, 10000};  // the loop checks stop_ every 10 ms
    ok_ = fd_ >= 0 &&
          bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
          getsockname(fd_, reinterpret_cast<sockaddr*>(&addr_), &len) == 0 &&
          setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0;
    if (ok_) thread_ = std::thread([this] { Loop(); });
  }
  ~Relay() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return ok_; }
  const sockaddr_in& addr() const { return addr_; }

  struct Datagram {
    uint16_t src_port = 0;
    std::vector<uint8_t> bytes;
  };
  std::vector<Datagram> Log() {
    std::lock_guard<std::mutex> lk(mu_);
    return log_;
  }

 private:
  void Loop() {
    std::vector<uint8_t> buf(65536);
    while (!stop_) {
      sockaddr_in from{};
      socklen_t len = sizeof(from);
      const ssize_t n = recvfrom(fd_, buf.data(), buf.size(), 0,
                                 reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0) continue;
      sendto(fd_, buf.data(), static_cast<size_t>(n), 0,
             reinterpret_cast<const sockaddr*>(&to_), sizeof(to_));
      std::lock_guard<std::mutex> lk(mu_);
      log_.push_back({ntohs(from.sin_port),
                      std::vector<uint8_t>(buf.begin(), buf.begin() + n)});
    }
  }

  sockaddr_in to_;
  sockaddr_in addr_{};
  int fd_ = -1;
  bool ok_ = false;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Datagram> log_;
  std::thread thread_;  // last: starts once the members above exist
};

constexpr uint32_t kMsgBytes = 64;
constexpr int kPerAh = 4;
constexpr size_t kSlot = 128;  // receive slot: 40-byte GRH + message

TEST(UdFlowLabelTest, EachFlowLabelLeavesFromItsOwnSourcePort) {
  Watchdog dog(std::chrono::seconds(60), "UD flow label test hung");
  PairOptions o;
  o.type = IBV_QPT_UD;
  Pair p(o);
  ASSERT_TRUE(p.ok());
  const sockaddr_in b_addr = AddrOfGid(p.b.gid);
  Relay relay(b_addr.sin_addr, b_addr);
  ASSERT_TRUE(relay.ok());

  // AH i (1..16) has flow label i; AH 17 is a second AH with flow label 1;
  // AH 18 has no GRH flow label (0: sprayed). All reach B via the relay.
  constexpr int kAhs = 18;
  std::vector<ibv_ah*> ahs(kAhs + 1, nullptr);
  for (int i = 1; i <= kAhs; ++i) {
    ibv_ah_attr aa{};
    aa.is_global = 1;
    aa.grh.dgid = GidOf(relay.addr());
    aa.grh.flow_label = i <= 16 ? i : (i == 17 ? 1 : 0);
    aa.port_num = 1;
    ahs[i] = ibv_create_ah(p.a.pd, &aa);
    ASSERT_NE(ahs[i], nullptr);
  }
  const int total = kAhs * kPerAh;
  for (int k = 0; k < total; ++k) {
    ASSERT_EQ(PostRecv(p.b, k, k * kSlot, kSlot), 0);
  }
  // Message j of AH i: every byte is i. Posted round-robin over the AHs in
  // one list, so flows meet in the endpoint's send queue.
  for (int i = 1; i <= kAhs; ++i) {
    std::memset(&p.a.buf[i * kSlot], i, kMsgBytes);
  }
  std::vector<ibv_sge> sges(total);
  std::vector<ibv_send_wr> wrs(total);
  for (int k = 0; k < total; ++k) {
    const int i = 1 + k % kAhs;
    sges[k] = p.a.Sge(i * kSlot, kMsgBytes);
    ibv_send_wr& wr = wrs[k];
    wr = {};
    wr.wr_id = k;
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &sges[k];
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ahs[i];
    wr.wr.ud.remote_qpn = p.b.qp->qp_num;
    wr.wr.ud.remote_qkey = o.qkey;
    wr.next = k + 1 < total ? &wrs[k + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(p.a.qp, &wrs[0], &bad), 0);

  // Every message arrives, once, intact.
  const std::vector<ibv_wc> recvd = PollMany(p.b.rcq, total);
  ASSERT_EQ(static_cast<int>(recvd.size()), total);
  std::map<int, int> per_ah;
  for (const ibv_wc& wc : recvd) {
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS);
    ASSERT_EQ(wc.byte_len, 40 + kMsgBytes);
    const uint8_t* m = &p.b.buf[wc.wr_id * kSlot + 40];
    for (uint32_t x = 1; x < kMsgBytes; ++x) ASSERT_EQ(m[x], m[0]);
    ++per_ah[m[0]];
  }
  for (int i = 1; i <= kAhs; ++i) EXPECT_EQ(per_ah[i], kPerAh) << "AH " << i;
  EXPECT_EQ(static_cast<int>(PollMany(p.a.scq, total).size()), total);

  // The source port of every first transmission, by AH (its messages'
  // bytes; the payload of a data frame ends with its message's bytes).
  std::map<int, std::set<uint16_t>> ports;
  std::map<int, int> frames;
  for (const Relay::Datagram& d : relay.Log()) {
    wire::ParseError e;
    if (wire::ParsePreamble(d.bytes, &e) == 0) continue;
    wire::FrameReader r(
        absl::MakeConstSpan(d.bytes).subspan(wire::kPreambleSize));
    wire::Frame f;
    while (r.Next(&f)) {
      if (f.type != wire::FrameType::kData || f.data.payload_len == 0 ||
          (f.data.flags & wire::kDataFlagRetransmit)) {
        continue;
      }
      const int ah = f.payload[f.data.payload_len - 1];
      ports[ah].insert(d.src_port);
      ++frames[ah];
    }
  }
  std::set<uint16_t> labelled;
  for (int i = 1; i <= 17; ++i) {
    EXPECT_EQ(frames[i], kPerAh) << "AH " << i;
    ASSERT_EQ(ports[i].size(), 1u) << "AH " << i << " left from several ports";
    if (i <= 16) labelled.insert(*ports[i].begin());
  }
  // Sixteen flow labels, sixteen source ports (braid0's 16 paths).
  EXPECT_EQ(labelled.size(), 16u);
  // Another AH with the same flow label: the same port.
  EXPECT_EQ(*ports[17].begin(), *ports[1].begin());
  EXPECT_EQ(frames[18], kPerAh);

  for (int i = 1; i <= kAhs; ++i) ibv_destroy_ah(ahs[i]);
}

}  // namespace
}  // namespace braid::verbs_compat::testing

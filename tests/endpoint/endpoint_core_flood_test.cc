// Bounded state under a flood of forged source addresses: every forged
// peer opens partial messages (a SYNC and a fragment of a 64 MiB message)
// that it never finishes. Reassembly memory stays under its cap, an
// established transfer completes exactly once, and Send to a new address
// still gets through.
#include <cstring>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "endpoint/endpoint_core.h"
#include "gtest/gtest.h"
#include "wire/frames.h"

namespace braid::endpoint {
namespace {

constexpr uint16_t kPort = 7000;
constexpr uint32_t kHugeMessage = 64u << 20;

// A forged first datagram from a stranger: a SYNC that opens a session and
// a fragment of a `msg_len`-byte message at `offset`.
// Its reply port (the preamble's) is the stranger's choice: one host can
// pose as many peers.
uint16_t ReplyPort(uint32_t i) {
  return static_cast<uint16_t>(20000 + (i & 15));
}

std::vector<uint8_t> ForgedDatagram(uint32_t i, uint32_t msg, uint32_t offset,
                                    uint32_t psn_offset,
                                    uint32_t msg_len = kHugeMessage) {
  const uint64_t inc = 0x900000 + i;
  std::vector<uint8_t> out(1472);
  auto span = absl::MakeSpan(out);
  size_t n = wire::WritePreamble(ReplyPort(i), span);
  wire::CtrlFrame sync;
  sync.type = wire::CtrlType::kSync;
  sync.src_incarnation = inc;
  sync.dst_incarnation = 0;
  sync.session = 77;
  sync.value = 1000;
  n += wire::WriteCtrl(sync, span.subspan(n));
  wire::DataHeader h;
  h.src_incarnation = inc;
  h.dst_incarnation = 0;
  h.psn = wire::Psn(1000 + psn_offset);
  h.path_seq = wire::PathSeq(psn_offset);
  h.msg_seq = wire::MsgSeq(msg);
  h.msg_len = msg_len;
  h.frag_offset = offset;
  std::vector<uint8_t> payload(1000, 0xab);
  h.payload_len = static_cast<uint16_t>(payload.size());
  n += wire::WriteData(h, payload, span.subspan(n));
  out.resize(n);
  return out;
}

NetAddr Forged(uint32_t i) {
  return NetAddr::Ipv4(0x0b000000 + (i >> 4), 40000);  // source port: any
}

// Cores joined by a perfect wire; datagrams to other addresses vanish.
class Net {
 public:
  EndpointCore* Add(const NetAddr& addr, const ProtocolOptions& o,
                    uint64_t inc) {
    CoreConfig c;
    c.proto = o;
    c.local_port = kPort;
    c.incarnation = inc;
    c.seed = inc;
    cores_[addr] = std::make_unique<EndpointCore>(c);
    return cores_[addr].get();
  }
  void Step() {
    for (auto& [addr, core] : cores_) {
      for (;;) {
        batch_.clear();
        if (core->PollTx(now, &batch_) == 0) break;
        for (const auto& p : batch_.packets()) {
          auto it = cores_.find(p.dst);
          if (it == cores_.end()) continue;
          std::vector<uint8_t> bytes(p.data, p.data + p.len);
          if (p.tail_len > 0)
            bytes.insert(bytes.end(), p.tail, p.tail + p.tail_len);
          it->second->OnDatagram(now, addr, bytes, false);
        }
      }
    }
    now += DurationNs::Micros(5);
    for (auto& [addr, core] : cores_) core->OnTimer(now);
  }
  TimeNs now = TimeNs(1000000);

 private:
  absl::flat_hash_map<NetAddr, std::unique_ptr<EndpointCore>> cores_;
  TxBatch batch_{64, 1472};
};

std::vector<Completion> Drain(EndpointCore* c) {
  std::vector<Completion> v;
  c->PollCompletions(&v, SIZE_MAX);
  return v;
}

OutMessage Msg(const std::vector<uint8_t>& m) {
  return OutMessage::Copy(m.data(), m.size());
}

TEST(EndpointCoreFloodTest,
     ThousandForgedPeersWithTwoPacketsEachStayUnderTheCap) {
  ProtocolOptions o;  // max_peers 1024, max_reassembly_bytes 512 MiB
  Net net;
  const NetAddr a_addr = NetAddr::Ipv4(0x0a000001, kPort);
  EndpointCore* a = net.Add(a_addr, o, 0x1111);
  for (uint32_t i = 0; i < 1024; ++i) {
    // Two messages, each a fragment far into 64 MiB: before, each reserved
    // the whole message and zero-filled up to the fragment (128 GiB in all).
    a->OnDatagram(net.now, Forged(i),
                  ForgedDatagram(i, 1, kHugeMessage - 4096, 0), false);
    a->OnDatagram(net.now, Forged(i), ForgedDatagram(i, 2, kHugeMessage / 2, 1),
                  false);
  }
  const EndpointStats s = a->stats();
  // Three quarters of the table take strangers in; after that a first
  // contact is challenged instead of given state.
  EXPECT_EQ(s.peers, 768u);
  EXPECT_EQ(s.drops.first_contact_challenged, 2u * 1024 - 2u * 768);
  EXPECT_EQ(s.drops.reassembly_full, 0u);
  // One 64 KiB chunk per fragment, plus bookkeeping.
  EXPECT_LE(s.reassembly_bytes, 2048u * ((64u << 10) + 1024));
  EXPECT_LE(s.reassembly_peak_bytes, o.max_reassembly_bytes / 2);
}

// `pure_sender`: A has never sent B anything, so B has proven nothing by
// acking A's data; under the flood's pressure A challenges it, and B's
// answer keeps it from being evicted as a stranger.
class EndpointCoreFloodServiceTest : public ::testing::TestWithParam<bool> {};

// A first contact the receiver refuses under pressure (it challenges it
// instead of taking it in) is re-sent as soon as the challenge arrives,
// right behind the answer: the new peer's message is through in a few round
// trips, not after a tail probe or an RTO (>= min_rto = 1 ms).
TEST(EndpointCoreFloodTest, ARefusedFirstContactIsResentAtOnce) {
  ProtocolOptions o;
  o.max_peers = 64;
  Net net;
  const NetAddr a_addr = NetAddr::Ipv4(0x0a000001, kPort);
  const NetAddr d_addr = NetAddr::Ipv4(0x0a000004, kPort);
  EndpointCore* a = net.Add(a_addr, o, 0x1111);
  EndpointCore* d = net.Add(d_addr, o, 0x4444);
  // Strangers take three quarters of A's table; later first contacts are
  // challenged.
  for (uint32_t i = 0; i < 64; ++i) {
    a->OnDatagram(net.now, Forged(i), ForgedDatagram(i, 1, 0, 0, 4000), false);
  }
  ASSERT_GT(a->stats().drops.first_contact_challenged, 0u);

  std::vector<uint8_t> from_d(7000, 9);  // a few datagrams
  ASSERT_TRUE(d->Send(net.now, a_addr, Msg(from_d)).ok());
  const TimeNs start = net.now;
  std::vector<Completion> at_a, at_d;
  for (int i = 0; i < 400 && at_d.empty(); ++i) {
    net.Step();
    auto v = Drain(a);
    at_a.insert(at_a.end(), v.begin(), v.end());
    v = Drain(d);
    at_d.insert(at_d.end(), v.begin(), v.end());
  }
  ASSERT_EQ(at_d.size(), 1u);
  EXPECT_EQ(at_d[0].type, CompletionType::kSendDone);
  EXPECT_LT(net.now - start, DurationNs::Micros(50));
  size_t received = 0;
  for (const Completion& x : at_a) {
    if (x.type == CompletionType::kRecv && x.peer == d_addr) {
      ++received;
      EXPECT_TRUE(x.data == from_d);
    }
  }
  EXPECT_EQ(received, 1u);
  const EndpointStats s = d->stats();
  EXPECT_GE(s.challenges_answered, 1u);
  // Each data frame sent before the challenge, re-sent once.
  const std::vector<PeerStats> ps = d->peer_stats(false);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_GT(s.reliability.retransmits_refused, 1u);
  EXPECT_EQ(s.reliability.retransmits_refused,
            ps[0].packets_sent - s.reliability.retransmits);
  EXPECT_EQ(s.reliability.rtos, 0u);
  EXPECT_EQ(s.reliability.retransmits_tail_probe, 0u);
  EXPECT_EQ(s.reliability.retransmits, s.reliability.retransmits_refused);
}

INSTANTIATE_TEST_SUITE_P(Peers, EndpointCoreFloodServiceTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "PureSender" : "BothWays";
                         });

TEST_P(EndpointCoreFloodServiceTest,
       FloodOfForgedSourcesLeavesEstablishedTransferAndNewPeersTheirService) {
  const bool pure_sender = GetParam();
  ProtocolOptions o;
  o.max_peers = 256;
  o.max_reassembly_bytes = 16u << 20;
  o.max_message_bytes = 8u << 20;  // as CheckProtocolOptions asks
  Net net;
  const NetAddr a_addr = NetAddr::Ipv4(0x0a000001, kPort);
  const NetAddr b_addr = NetAddr::Ipv4(0x0a000002, kPort);
  const NetAddr c_addr = NetAddr::Ipv4(0x0a000003, kPort);
  EndpointCore* a = net.Add(a_addr, o, 0x1111);
  EndpointCore* b = net.Add(b_addr, o, 0x2222);
  EndpointCore* c = net.Add(c_addr, o, 0x3333);
  // D contacts A first, in the middle of the flood.
  const NetAddr d_addr = NetAddr::Ipv4(0x0a000004, kPort);
  EndpointCore* d = net.Add(d_addr, o, 0x4444);

  // A and B have exchanged messages: each has proven itself to the other.
  // Or only B has sent: A knows B but B has proven nothing to A.
  std::vector<uint8_t> hello(3000, 1);
  if (!pure_sender) {
    ASSERT_TRUE(a->Send(net.now, b_addr, Msg(hello)).ok());
  }
  ASSERT_TRUE(b->Send(net.now, a_addr, Msg(hello)).ok());
  for (int i = 0; i < 50; ++i) net.Step();
  ASSERT_EQ(Drain(a).size(), pure_sender ? 1u : 2u);
  ASSERT_EQ(Drain(b).size(), pure_sender ? 1u : 2u);
  ASSERT_EQ(a->peer_stats(false)[0].proven, !pure_sender);

  // B starts a 4 MiB transfer to A.
  std::vector<uint8_t> big(4u << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(b->Send(net.now, a_addr, Msg(big)).ok());
  for (int i = 0; i < 3; ++i) net.Step();

  std::vector<Completion> at_a, at_b, at_c;
  bool sent_to_c = false;
  std::vector<uint8_t> to_c(20000, 5), from_d(7000, 9);
  std::vector<Completion> at_d;
  constexpr uint32_t kForged = 100000;
  for (uint32_t i = 0; i < kForged; ++i) {
    a->OnDatagram(net.now, Forged(i),
                  ForgedDatagram(i, 1, (i % 1000) * 4096, 0, 8u << 20), false);
    if (i % 500 == 499) {
      net.Step();
      ASSERT_LE(a->stats().reassembly_bytes, o.max_reassembly_bytes);
      auto v = Drain(a);
      at_a.insert(at_a.end(), v.begin(), v.end());
    }
    if (i == kForged / 2) {
      // Strangers fill the table or reassembly memory until first contacts
      // are challenged instead: a Send to a new address still works.
      ASSERT_GT(a->stats().drops.first_contact_challenged, 0u);
      absl::Status st = a->Send(net.now, c_addr, Msg(to_c));
      ASSERT_TRUE(st.ok()) << st;
      ASSERT_TRUE(d->Send(net.now, a_addr, Msg(from_d)).ok());
      sent_to_c = true;
    }
  }
  ASSERT_TRUE(sent_to_c);
  for (int i = 0; i < 20000; ++i) {
    net.Step();
    auto v = Drain(a);
    at_a.insert(at_a.end(), v.begin(), v.end());
    v = Drain(b);
    at_b.insert(at_b.end(), v.begin(), v.end());
    v = Drain(c);
    at_c.insert(at_c.end(), v.begin(), v.end());
    v = Drain(d);
    at_d.insert(at_d.end(), v.begin(), v.end());
    if (!at_b.empty() && at_c.size() == 1 && at_d.size() == 1) break;
  }
  // The established transfer: delivered once, byte for byte, and done.
  size_t big_received = 0;
  size_t c_done = 0, d_received = 0;
  for (const Completion& x : at_a) {
    if (x.type == CompletionType::kRecv && x.peer == b_addr) {
      ++big_received;
      EXPECT_TRUE(x.data == big);
    }
    if (x.type == CompletionType::kSendDone && x.peer == c_addr) ++c_done;
    if (x.type == CompletionType::kRecv && x.peer == d_addr) {
      ++d_received;
      EXPECT_TRUE(x.data == from_d);
    }
  }
  EXPECT_EQ(big_received, 1u);
  ASSERT_EQ(at_b.size(), 1u);
  EXPECT_EQ(at_b[0].type, CompletionType::kSendDone);
  // The new peer got its message.
  ASSERT_EQ(at_c.size(), 1u);
  EXPECT_EQ(at_c[0].type, CompletionType::kRecv);
  EXPECT_TRUE(at_c[0].data == to_c);
  EXPECT_EQ(c_done, 1u);
  // The new peer that spoke first was challenged, answered, got through.
  EXPECT_EQ(d_received, 1u);
  ASSERT_EQ(at_d.size(), 1u);
  EXPECT_EQ(at_d[0].type, CompletionType::kSendDone);
  EXPECT_GE(d->stats().challenges_answered, 1u);

  const EndpointStats s = a->stats();
  EXPECT_LE(s.reassembly_peak_bytes, o.max_reassembly_bytes);
  // What is still committed is the strangers' (the transfers are done),
  // within their half.
  EXPECT_LE(s.reassembly_bytes, o.max_reassembly_bytes / 2);
  // Once strangers crowded it, the rest of the flood got no state at all.
  EXPECT_GT(s.drops.first_contact_challenged, kForged / 2);
  for (const PeerStats& ps : a->peer_stats(false)) {
    if (ps.addr == b_addr) {
      EXPECT_TRUE(ps.proven) << "B was never proven";
    }
  }
  // B proved itself by naming the incarnation A shows it (learnt from A's
  // acks); the strangers never did.
  EXPECT_GT(s.drops.first_contact_challenged, 0u);
}

}  // namespace
}  // namespace braid::endpoint

namespace braid::endpoint {
namespace {

// A full table: a stranger holding a partial message gives its slot to a
// Send before a proven peer does, and is then not heard again (its sender
// would otherwise resend, in a new session, what the evicted context had
// delivered).
TEST(EndpointCorePeerTableTest,
     SendEvictsUnprovenHolderNotProvenPeerAndSilencesIt) {
  ProtocolOptions o;
  o.max_peers = 2;
  Net net;
  const NetAddr a_addr = NetAddr::Ipv4(0x0a000001, kPort);
  const NetAddr b_addr = NetAddr::Ipv4(0x0a000002, kPort);
  const NetAddr c_addr = NetAddr::Ipv4(0x0a000003, kPort);
  EndpointCore* a = net.Add(a_addr, o, 0x1111);
  net.Add(b_addr, o, 0x2222);
  EndpointCore* c = net.Add(c_addr, o, 0x3333);
  std::vector<uint8_t> m(3000, 1);
  ASSERT_TRUE(a->Send(net.now, b_addr, Msg(m)).ok());
  for (int i = 0; i < 50; ++i) net.Step();
  ASSERT_EQ(Drain(a).size(), 1u);  // B acked: proven, idle, recent
  a->OnDatagram(net.now, Forged(1), ForgedDatagram(1, 1, 0, 0), false);
  ASSERT_EQ(a->stats().peers, 2u);
  ASSERT_TRUE(a->Send(net.now, c_addr, Msg(m)).ok());
  EndpointStats s = a->stats();
  EXPECT_EQ(s.peers_evicted_unproven, 1u);
  EXPECT_EQ(s.peers_evicted_idle, 0u);
  EXPECT_EQ(s.reassembly_bytes, 0u);  // its partial message went with it
  // The evicted stranger's next frame creates nothing.
  a->OnDatagram(net.now, Forged(1), ForgedDatagram(1, 1, 4096, 1), false);
  s = a->stats();
  EXPECT_EQ(s.drops.evicted_peer, 1u);
  EXPECT_EQ(s.peers, 2u);
  for (int i = 0; i < 50; ++i) net.Step();
  ASSERT_EQ(Drain(c).size(), 1u);
  // B (proven, busy with nothing but recently active) and C (our send just
  // completed, proven) hold the table; a Send elsewhere is refused.
  const auto done = Drain(a);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].type, CompletionType::kSendDone);
  absl::Status st = a->Send(net.now, NetAddr::Ipv4(0x0a000004, kPort), Msg(m));
  EXPECT_TRUE(absl::IsResourceExhausted(st)) << st;
  // Once the silence is over, the stranger's address may speak again.
  net.now += o.peer_timeout + o.peer_timeout;
  a->OnDatagram(net.now, Forged(1), ForgedDatagram(1, 2, 0, 0), false);
  EXPECT_EQ(a->stats().drops.evicted_peer, 1u);
}

}  // namespace
}  // namespace braid::endpoint

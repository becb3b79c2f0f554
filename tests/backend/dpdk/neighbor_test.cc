#include "backend/dpdk/neighbor.h"

#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "tests/backend/dpdk/frame_test_util.h"

namespace braid::backend::dpdk {
namespace {

using testing::Addr;
using testing::Bytes;
using testing::kMacA;
using testing::kMacB;
using testing::NaiveSum;

constexpr MacAddr kMacC = {0x02, 0, 0, 0, 0, 0x03};

LocalIdentity A4() { return {kMacA, Addr("10.0.0.1:7000")}; }
LocalIdentity B4() { return {kMacB, Addr("10.0.0.2:7000")}; }
LocalIdentity A6() { return {kMacA, Addr("[fd00::1]:7000")}; }
LocalIdentity B6() { return {kMacB, Addr("[fd00::2]:7000")}; }

TimeNs Ms(int64_t ms) { return TimeNs(ms * 1000000); }

// One host: identity, table, and the last reply it wrote.
struct Host {
  LocalIdentity me;
  NeighborTable table;
  Bytes reply;

  // Classifies then handles `f` (in an exactly sized heap copy).
  NeighborAction Receive(const Bytes& f, TimeNs now) {
    std::unique_ptr<uint8_t[]> buf(new uint8_t[f.size()]);
    if (!f.empty()) std::memcpy(buf.get(), f.data(), f.size());
    const absl::Span<const uint8_t> frame(buf.get(), f.size());
    ParsedUdp udp;
    RxDrop why;
    const FrameKind k = ClassifyFrame(frame, me, HwChecksum::kUnknown,
                                      HwChecksum::kUnknown, &udp, &why);
    EXPECT_TRUE(k == FrameKind::kArp || k == FrameKind::kNeighborDiscovery)
        << RxDropName(why);
    return Handle(frame, now);
  }
  NeighborAction Handle(absl::Span<const uint8_t> frame, TimeNs now) {
    reply.assign(kMaxNeighborFrameLen, 0);
    size_t len = 99;
    const NeighborAction a = HandleNeighborFrame(frame, me, now, &table,
                                                 absl::MakeSpan(reply), &len);
    reply.resize(len);
    return a;
  }
};

Bytes ArpRequest(const LocalIdentity& from, const NetAddr& target) {
  Bytes f(kArpFrameLen);
  EXPECT_EQ(WriteArpRequest(from.mac, from.addr, target, absl::MakeSpan(f)),
            kArpFrameLen);
  return f;
}

Bytes Solicitation(const LocalIdentity& from, const NetAddr& target) {
  Bytes f(kNdFrameLen);
  EXPECT_EQ(
      WriteNeighborSolicitation(from.mac, from.addr, target, absl::MakeSpan(f)),
      kNdFrameLen);
  return f;
}

// Recomputes the ICMPv6 checksum of an ND frame a test edited.
void FixIcmpv6Checksum(Bytes* f) {
  (*f)[56] = (*f)[57] = 0;
  const uint32_t len = LoadBe16(f->data() + 18);
  Bytes sum(f->begin() + 22, f->begin() + 54);  // addresses
  sum.insert(sum.end(), {0, 0, static_cast<uint8_t>(len >> 8),
                         static_cast<uint8_t>(len), 0, 0, 0, kIpProtoIcmpv6});
  sum.insert(sum.end(), f->begin() + 54, f->begin() + 54 + len);
  StoreBe16(f->data() + 56, static_cast<uint16_t>(~NaiveSum(sum)));
}

TEST(ArpTest, RequestHasTheLinuxLayout) {
  const Bytes f = ArpRequest(A4(), B4().addr);
  const Bytes want = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1,
                      0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1,  // Ethernet/IPv4,
                                                              // request
                      2, 0, 0, 0, 0, 1, 10, 0, 0, 1,          // sender
                      0, 0, 0, 0, 0, 0, 10, 0, 0, 2};         // target
  ASSERT_EQ(f.size(), 60u);
  EXPECT_EQ(Bytes(f.begin(), f.begin() + 42), want);
  EXPECT_EQ(Bytes(f.begin() + 42, f.end()), Bytes(18, 0));  // padding
}

TEST(ArpTest, RequestReplyRoundTripTeachesBothTables) {
  Host a{A4(), NeighborTable(), {}};
  Host b{B4(), NeighborTable(), {}};
  ASSERT_TRUE(a.table.ShouldRequest(b.me.addr, Ms(0)));
  EXPECT_EQ(b.Receive(ArpRequest(a.me, b.me.addr), Ms(1)),
            NeighborAction::kReply);
  EXPECT_EQ(b.table.Lookup(a.me.addr), kMacA);  // asker learnt
  ASSERT_EQ(b.reply.size(), kArpFrameLen);
  ArpMessage m;
  ASSERT_TRUE(ParseArp(b.reply, &m));
  EXPECT_EQ(m.op, kArpOpReply);
  EXPECT_EQ(std::memcmp(b.reply.data(), kMacA.data(), 6), 0);  // unicast

  EXPECT_EQ(a.Receive(b.reply, Ms(2)), NeighborAction::kLearnt);
  EXPECT_EQ(a.table.Lookup(b.me.addr), kMacB);
  EXPECT_EQ(a.table.Lookup(Addr("10.0.0.2:1")), kMacB);  // port ignored
  EXPECT_EQ(a.table.counters().learnt, 1u);
  EXPECT_EQ(b.table.counters().replies_sent, 1u);
}

TEST(ArpTest, GratuitousReplyNobodyAskedForIsNotLearnt) {
  Host a{A4(), NeighborTable(), {}};
  Bytes reply(kArpFrameLen);
  ASSERT_GT(
      WriteArpReply(kMacB, B4().addr, kMacA, a.me.addr, absl::MakeSpan(reply)),
      0u);
  EXPECT_EQ(a.Receive(reply, Ms(0)), NeighborAction::kIgnored);
  EXPECT_FALSE(a.table.Lookup(B4().addr).has_value());
  EXPECT_EQ(a.table.counters().unsolicited_ignored, 1u);
  // Asked, but the answer comes after the reply window: still ignored.
  ASSERT_TRUE(a.table.ShouldRequest(B4().addr, Ms(0)));
  const TimeNs late = Ms(0) + NeighborTable::kReplyWindow + DurationNs(1);
  EXPECT_EQ(a.Receive(reply, late), NeighborAction::kIgnored);
  EXPECT_FALSE(a.table.Lookup(B4().addr).has_value());
  // A broadcast gratuitous ARP request (sender = target) teaches nothing.
  Host c{{kMacC, Addr("10.0.0.3:7000")}, NeighborTable(), {}};
  EXPECT_EQ(c.Receive(ArpRequest(B4(), B4().addr), Ms(0)),
            NeighborAction::kNone);
  EXPECT_FALSE(c.table.Lookup(B4().addr).has_value());
}

TEST(ArpTest, RequestForAnotherAddressIsNeitherAnsweredNorLearnt) {
  Host b{B4(), NeighborTable(), {}};
  EXPECT_EQ(b.Receive(ArpRequest(A4(), Addr("10.0.0.9:0")), Ms(0)),
            NeighborAction::kNone);
  EXPECT_TRUE(b.reply.empty());
  EXPECT_FALSE(b.table.Lookup(A4().addr).has_value());
}

TEST(ArpTest, ProbeFromZeroAddressIsAnsweredButNotLearnt) {
  Host b{B4(), NeighborTable(), {}};
  const LocalIdentity prober{kMacC, Addr("0.0.0.0:0")};
  EXPECT_EQ(b.Receive(ArpRequest(prober, b.me.addr), Ms(0)),
            NeighborAction::kReply);
  EXPECT_EQ(b.table.size(), 0u);
  EXPECT_EQ(std::memcmp(b.reply.data(), kMacC.data(), 6), 0);
}

TEST(ArpTest, RequestFromAMulticastSenderIsMalformed) {
  Host b{B4(), NeighborTable(), {}};
  const LocalIdentity bogus{kMacC, Addr("224.0.0.1:0")};
  EXPECT_EQ(b.Receive(ArpRequest(bogus, b.me.addr), Ms(0)),
            NeighborAction::kMalformed);
  EXPECT_EQ(b.table.size(), 0u);
  EXPECT_TRUE(b.reply.empty());
}

TEST(ArpTest, ArpIsIgnoredByAnIpv6Identity) {
  Host b{B6(), NeighborTable(), {}};
  const Bytes f = ArpRequest(A4(), B4().addr);
  EXPECT_EQ(b.Handle(f, Ms(0)), NeighborAction::kNone);
}

TEST(NdTest, SolicitationGoesToTheSolicitedNodeGroup) {
  const Bytes f = Solicitation(A6(), Addr("[fd00::12:3456]:0"));
  EXPECT_EQ(Bytes(f.begin(), f.begin() + 6),
            (Bytes{0x33, 0x33, 0xff, 0x12, 0x34, 0x56}));
  const Bytes group = {0xff, 2, 0, 0, 0,    0,    0,    0,
                       0,    0, 0, 1, 0xff, 0x12, 0x34, 0x56};
  EXPECT_EQ(Bytes(f.begin() + 38, f.begin() + 54), group);
  EXPECT_EQ(f[20], kIpProtoIcmpv6);
  EXPECT_EQ(f[21], 255);  // hop limit
  EXPECT_EQ(f[54], kNdSolicitation);
  // ICMPv6 checksum against the naive loop over pseudo-header + message.
  Bytes sum(f.begin() + 22, f.begin() + 54);
  sum.insert(sum.end(), {0, 0, 0, 32, 0, 0, 0, kIpProtoIcmpv6});
  sum.insert(sum.end(), f.begin() + 54, f.end());
  EXPECT_EQ(NaiveSum(sum), 0xffff);
  // Source link-layer address option carries our MAC.
  EXPECT_EQ(f[78], 1);
  EXPECT_EQ(f[79], 1);
  EXPECT_EQ(Bytes(f.begin() + 80, f.end()), Bytes(kMacA.begin(), kMacA.end()));
}

TEST(NdTest, SolicitationAdvertisementRoundTripTeachesBothTables) {
  Host a{A6(), NeighborTable(), {}};
  Host b{B6(), NeighborTable(), {}};
  ASSERT_TRUE(a.table.ShouldRequest(b.me.addr, Ms(0)));
  EXPECT_EQ(b.Receive(Solicitation(a.me, b.me.addr), Ms(1)),
            NeighborAction::kReply);
  EXPECT_EQ(b.table.Lookup(a.me.addr), kMacA);
  ASSERT_EQ(b.reply.size(), kNdFrameLen);
  NdMessage m;
  ASSERT_TRUE(ParseNd(b.reply, &m));
  EXPECT_EQ(m.type, kNdAdvertisement);
  EXPECT_TRUE(m.solicited);
  EXPECT_TRUE(m.override_flag);
  EXPECT_EQ(m.dst_ip.ip, a.me.addr.ip);
  EXPECT_TRUE(m.has_link_addr);
  EXPECT_EQ(m.link_addr, kMacB);

  EXPECT_EQ(a.Receive(b.reply, Ms(2)), NeighborAction::kLearnt);
  EXPECT_EQ(a.table.Lookup(b.me.addr), kMacB);
}

TEST(NdTest, UnsolicitedAdvertisementIsNotLearnt) {
  Host a{A6(), NeighborTable(), {}};
  Bytes na(kNdFrameLen);
  ASSERT_GT(WriteNeighborAdvertisement(kMacB, B6().addr, kMacA, a.me.addr, true,
                                       absl::MakeSpan(na)),
            0u);
  EXPECT_EQ(a.Receive(na, Ms(0)), NeighborAction::kIgnored);
  EXPECT_FALSE(a.table.Lookup(B6().addr).has_value());
  EXPECT_EQ(a.table.counters().unsolicited_ignored, 1u);
}

TEST(NdTest, DuplicateAddressDetectionIsAnsweredToAllNodes) {
  Host b{B6(), NeighborTable(), {}};
  Bytes ns = Solicitation(A6(), b.me.addr);
  std::memset(ns.data() + 22, 0, 16);  // source ::
  ns.resize(ns.size() - 8);            // and no source link-layer option
  StoreBe16(ns.data() + 18, 24);
  FixIcmpv6Checksum(&ns);
  EXPECT_EQ(b.Receive(ns, Ms(0)), NeighborAction::kReply);
  EXPECT_EQ(b.table.size(), 0u);
  NdMessage m;
  ASSERT_TRUE(ParseNd(b.reply, &m));
  EXPECT_FALSE(m.solicited);
  EXPECT_EQ(m.dst_ip.ip[0], 0xff);
  EXPECT_EQ(m.dst_ip.ip[15], 1);
  EXPECT_EQ(Bytes(b.reply.begin(), b.reply.begin() + 6),
            (Bytes{0x33, 0x33, 0, 0, 0, 1}));
}

TEST(NdTest, InvalidSolicitationsAreMalformed) {
  const Bytes good = Solicitation(A6(), B6().addr);
  struct Case {
    const char* name;
    void (*edit)(Bytes*);
  };
  const Case cases[] = {
      {"hop limit 64",
       [](Bytes* f) {
         (*f)[21] = 64;
         FixIcmpv6Checksum(f);
       }},
      {"bad checksum", [](Bytes* f) { (*f)[57] ^= 1; }},
      {"code 1",
       [](Bytes* f) {
         (*f)[55] = 1;
         FixIcmpv6Checksum(f);
       }},
      {"option length 0",
       [](Bytes* f) {
         (*f)[79] = 0;
         FixIcmpv6Checksum(f);
       }},
      {"option past message",
       [](Bytes* f) {
         (*f)[79] = 2;
         FixIcmpv6Checksum(f);
       }},
      {"multicast target",
       [](Bytes* f) {
         (*f)[62] = 0xff;
         FixIcmpv6Checksum(f);
       }},
      {"multicast source",
       [](Bytes* f) {
         (*f)[22] = 0xff;
         FixIcmpv6Checksum(f);
       }},
      {"payload past frame", [](Bytes* f) { StoreBe16(f->data() + 18, 33); }},
      {"message below 24 bytes",
       [](Bytes* f) {
         StoreBe16(f->data() + 18, 23);
         FixIcmpv6Checksum(f);
       }},
  };
  for (const Case& c : cases) {
    Host b{B6(), NeighborTable(), {}};
    Bytes f = good;
    c.edit(&f);
    EXPECT_EQ(b.Handle(f, Ms(0)), NeighborAction::kMalformed) << c.name;
    EXPECT_TRUE(b.reply.empty()) << c.name;
    EXPECT_EQ(b.table.size(), 0u) << c.name;
  }
}

TEST(NeighborFrameTest, EveryTruncationStaysInBounds) {
  Host b4{B4(), NeighborTable(), {}};
  const Bytes arp = ArpRequest(A4(), B4().addr);
  for (size_t len = 0; len < arp.size(); ++len) {
    const Bytes cut(arp.begin(), arp.begin() + len);
    // 42 bytes hold the whole ARP message; the rest is padding.
    EXPECT_EQ(b4.Handle(cut, Ms(0)),
              len < 42 ? NeighborAction::kMalformed : NeighborAction::kReply)
        << len;
  }
  Host b6{B6(), NeighborTable(), {}};
  const Bytes ns = Solicitation(A6(), B6().addr);
  for (size_t len = 0; len < ns.size(); ++len) {
    const Bytes cut(ns.begin(), ns.begin() + len);
    EXPECT_EQ(b6.Handle(cut, Ms(0)), NeighborAction::kMalformed) << len;
  }
  EXPECT_EQ(b6.Handle(ns, Ms(0)), NeighborAction::kReply);
}

TEST(NeighborFrameTest, TooSmallReplyBufferWritesNothing) {
  NeighborTable t;
  Bytes out(kArpFrameLen - 1);
  size_t len = 7;
  const Bytes f = ArpRequest(A4(), B4().addr);
  EXPECT_EQ(HandleNeighborFrame(f, B4(), Ms(0), &t, absl::MakeSpan(out), &len),
            NeighborAction::kNone);
  EXPECT_EQ(len, 0u);
}

TEST(NeighborTableTest, RequestsAreRateLimitedPerTarget) {
  NeighborTable t;
  const NetAddr x = Addr("10.0.0.5:1");
  EXPECT_TRUE(t.ShouldRequest(x, Ms(0)));
  EXPECT_FALSE(t.ShouldRequest(x, Ms(50)));
  EXPECT_FALSE(t.ShouldRequest(Addr("10.0.0.5:2"), Ms(99)));  // same IP
  EXPECT_TRUE(t.ShouldRequest(Addr("10.0.0.6:1"), Ms(50)));   // other IP
  EXPECT_TRUE(t.ShouldRequest(x, Ms(100)));
  EXPECT_FALSE(t.ShouldRequest(x, Ms(199)));
  EXPECT_TRUE(t.ShouldRequest(x, Ms(200)));
  EXPECT_EQ(t.counters().requests_allowed, 4u);
  EXPECT_EQ(t.counters().requests_limited, 3u);
}

TEST(NeighborTableTest, OutstandingRequestsAreBounded) {
  NeighborTable t(2);
  EXPECT_TRUE(t.ShouldRequest(Addr("10.0.0.5:0"), Ms(0)));
  EXPECT_TRUE(t.ShouldRequest(Addr("10.0.0.6:0"), Ms(0)));
  EXPECT_FALSE(t.ShouldRequest(Addr("10.0.0.7:0"), Ms(1)));
  // Once the old ones are past the reply window there is room again.
  EXPECT_TRUE(t.ShouldRequest(Addr("10.0.0.7:0"), Ms(4000)));
}

TEST(NeighborTableTest, FullTableEvictsTheOldestLearntEntry) {
  NeighborTable t(3);
  ASSERT_TRUE(t.AddStatic(Addr("10.0.0.100:0"), kMacC));
  ASSERT_TRUE(t.Learn(Addr("10.0.0.1:0"), kMacA, Ms(0)));
  ASSERT_TRUE(t.Learn(Addr("10.0.0.2:0"), kMacB, Ms(1)));
  ASSERT_TRUE(t.Learn(Addr("10.0.0.1:0"), kMacA, Ms(2)));  // refresh only
  ASSERT_TRUE(t.Learn(Addr("10.0.0.3:0"), kMacB, Ms(3)));
  EXPECT_EQ(t.size(), 3u);
  EXPECT_FALSE(t.Lookup(Addr("10.0.0.1:0")).has_value());  // oldest learnt
  EXPECT_EQ(t.Lookup(Addr("10.0.0.2:0")), kMacB);
  EXPECT_EQ(t.Lookup(Addr("10.0.0.100:0")), kMacC);  // static stays
  EXPECT_EQ(t.counters().evicted, 1u);
}

TEST(NeighborTableTest, StaticEntriesWinOverLearning) {
  NeighborTable t;
  ASSERT_TRUE(t.Learn(Addr("10.0.0.1:0"), kMacA, Ms(0)));
  ASSERT_TRUE(t.AddStatic(Addr("10.0.0.1:5"), kMacC));
  EXPECT_FALSE(t.Learn(Addr("10.0.0.1:0"), kMacB, Ms(1)));
  EXPECT_EQ(t.Lookup(Addr("10.0.0.1:0")), kMacC);
  EXPECT_FALSE(t.IsStale(Addr("10.0.0.1:0"), Ms(1000000)));
  EXPECT_FALSE(t.Learn(Addr("10.0.0.2:0"), kBroadcastMac, Ms(1)));
  EXPECT_FALSE(t.AddStatic(NetAddr{}, kMacA));
}

TEST(NeighborTableTest, LearntEntriesGoStaleAfterTheReachableTime) {
  NeighborTable t;
  const NetAddr x = Addr("[fd00::9]:0");
  ASSERT_TRUE(t.Learn(x, kMacA, Ms(0)));
  EXPECT_FALSE(t.IsStale(x, Ms(0) + NeighborTable::kReachableTime));
  EXPECT_TRUE(t.IsStale(x, Ms(1) + NeighborTable::kReachableTime));
  ASSERT_TRUE(t.Learn(x, kMacA, Ms(30000)));
  EXPECT_FALSE(t.IsStale(x, Ms(30000) + NeighborTable::kReachableTime));
}

TEST(NextHopTest, OnLinkDestinationsGoDirectOthersToTheGateway) {
  const NetAddr local = Addr("10.1.16.5:7000");
  const NetAddr gw = Addr("10.1.16.1:0");
  EXPECT_EQ(NextHop(Addr("10.1.31.9:9"), local, 20, gw), Addr("10.1.31.9:9"));
  EXPECT_EQ(NextHop(Addr("10.1.32.9:9"), local, 20, gw), gw);
  EXPECT_EQ(NextHop(Addr("10.2.0.1:9"), local, 16, gw), gw);
  EXPECT_EQ(NextHop(Addr("10.2.0.1:9"), local, 0, gw), Addr("10.2.0.1:9"));
  EXPECT_EQ(NextHop(Addr("10.1.16.6:9"), local, 32, gw), gw);
  EXPECT_EQ(NextHop(Addr("10.1.16.5:9"), local, 99, gw), Addr("10.1.16.5:9"));
  EXPECT_EQ(NextHop(Addr("10.2.0.1:9"), local, 24, NetAddr{}),
            Addr("10.2.0.1:9"));
  const NetAddr local6 = Addr("[fd00:1::5]:7000");
  const NetAddr gw6 = Addr("[fd00:1::1]:0");
  EXPECT_EQ(NextHop(Addr("[fd00:1::77]:1"), local6, 64, gw6),
            Addr("[fd00:1::77]:1"));
  EXPECT_EQ(NextHop(Addr("[fd00:2::77]:1"), local6, 64, gw6), gw6);
}

TEST(NeighborActionNameTest, NamesAreDistinct) {
  EXPECT_STREQ(NeighborActionName(NeighborAction::kReply), "reply");
  EXPECT_STREQ(NeighborActionName(NeighborAction::kIgnored), "ignored");
  EXPECT_STRNE(NeighborActionName(NeighborAction::kNone),
               NeighborActionName(NeighborAction::kLearnt));
  EXPECT_STREQ(NeighborActionName(NeighborAction::kMalformed), "malformed");
}

}  // namespace
}  // namespace braid::backend::dpdk

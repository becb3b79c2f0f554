#include "backend/dpdk/frame.h"

#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "backend/dpdk/checksum.h"
#include "base/rng.h"
#include "gtest/gtest.h"
#include "tests/backend/dpdk/frame_test_util.h"

namespace braid::backend::dpdk {
namespace {

using testing::Addr;
using testing::BuildFrame;
using testing::Bytes;
using testing::IdentityOf;
using testing::kMacA;
using testing::kMacB;
using testing::NaiveChecksum;
using testing::NaiveSum;
using testing::PseudoHeader;
using testing::Spec;

constexpr char kA4[] = "10.0.0.1:40000";
constexpr char kB4[] = "10.0.0.2:9000";
constexpr char kA6[] = "[fd00::1]:40000";
constexpr char kB6[] = "[fd00::2]:9000";

Bytes Hello() { return Bytes{'h', 'e', 'l', 'l', 'o'}; }

std::string Hex(absl::Span<const uint8_t> b) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

// Recomputes the IPv4 header checksum of a frame after a test edited it.
void FixIpv4Checksum(Bytes* f) {
  (*f)[24] = (*f)[25] = 0;
  const Bytes ip(f->begin() + 14, f->begin() + 34);
  StoreBe16(f->data() + 24, NaiveChecksum(ip));
}

// Recomputes the UDP checksum (over the UDP length the header claims).
void FixUdpChecksum(Bytes* f) {
  const uint32_t hdr = FrameHeaderLen(
      (*f)[12] == 0x08 ? NetAddr::Family::kIpv4 : NetAddr::Family::kIpv6);
  const uint32_t ulen = LoadBe16(f->data() + hdr - 4);
  const absl::Span<const uint8_t> piece(f->data() + hdr, ulen - 8);
  FinishUdpChecksum(absl::MakeSpan(f->data(), hdr), {piece});
}

struct Classified {
  FrameKind kind;
  RxDrop why;
  ParsedUdp udp;
};

// Classifies a copy of `f` in an exactly sized heap buffer (so ASan catches
// any read past its end).
Classified Classify(const Bytes& f, const LocalIdentity& me,
                    HwChecksum ip = HwChecksum::kUnknown,
                    HwChecksum l4 = HwChecksum::kUnknown) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[f.size()]);
  if (!f.empty()) std::memcpy(buf.get(), f.data(), f.size());
  Classified c{FrameKind::kDrop, RxDrop::kCount, {}};
  c.kind = ClassifyFrame(absl::MakeConstSpan(buf.get(), f.size()), me, ip, l4,
                         &c.udp, &c.why);
  return c;
}

TEST(MacTest, ParseAndFormatRoundTrip) {
  const absl::StatusOr<MacAddr> mac = ParseMac("aA:bb:0c:dd:ee:F0");
  ASSERT_TRUE(mac.ok()) << mac.status();
  EXPECT_EQ(*mac, (MacAddr{0xaa, 0xbb, 0x0c, 0xdd, 0xee, 0xf0}));
  EXPECT_EQ(FormatMac(*mac), "aa:bb:0c:dd:ee:f0");
}

TEST(MacTest, MalformedTextIsInvalidArgument) {
  for (const char* bad :
       {"", "aa:bb:cc:dd:ee", "aa:bb:cc:dd:ee:ff:00", "aa-bb-cc-dd-ee-ff",
        "ga:bb:cc:dd:ee:ff", "aa:bb:cc:dd:ee:f", "aabb:cc:dd:ee:ff:"}) {
    const absl::StatusOr<MacAddr> mac = ParseMac(bad);
    EXPECT_EQ(mac.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(FrameHeaderTest, LengthsAreEthernetPlusIpPlusUdp) {
  EXPECT_EQ(FrameHeaderLen(NetAddr::Family::kIpv4), 42u);
  EXPECT_EQ(FrameHeaderLen(NetAddr::Family::kIpv6), 62u);
  EXPECT_EQ(FrameHeaderLen(NetAddr::Family::kNone), 0u);
}

TEST(FrameHeaderTest, Ipv4FrameMatchesGoldenBytes) {
  const Bytes f = BuildFrame(Spec(kA4, kB4), Hello());
  // dst MAC, src MAC, 0800 | 45 02(ECT0) len=33 id=0 DF ttl=64 udp csum
  // 10.0.0.1 10.0.0.2 | 40000 9000 len=13 csum | "hello"
  EXPECT_EQ(Hex(absl::MakeConstSpan(f).first(42)),
            "020000000002020000000001"
            "0800"
            "4502002100004000401126c80a0000010a000002"
            "9c402328000de896");
  EXPECT_EQ(Hex(absl::MakeConstSpan(f).subspan(42)), "68656c6c6f");
  // The checksums against the naive reference.
  const Bytes ip(f.begin() + 14, f.begin() + 34);
  EXPECT_EQ(NaiveSum(ip), 0xffff);
  Bytes all = PseudoHeader(f);
  all.insert(all.end(), f.begin() + 34, f.end());
  EXPECT_EQ(NaiveSum(all), 0xffff);
}

TEST(FrameHeaderTest, Ipv6FrameMatchesGoldenBytes) {
  const Bytes f = BuildFrame(Spec(kA6, kB6), Hello());
  EXPECT_EQ(Hex(absl::MakeConstSpan(f).first(62)),
            "020000000002020000000001"
            "86dd"
            "60200000000d1140"  // tclass ECT(0), flow 0, plen 13, UDP, hop 64
            "fd000000000000000000000000000001"
            "fd000000000000000000000000000002"
            "9c402328000d0295");
  Bytes all = PseudoHeader(f);
  all.insert(all.end(), f.begin() + 54, f.end());
  EXPECT_EQ(NaiveSum(all), 0xffff);
}

TEST(FrameHeaderTest, WithoutEctTheEcnFieldIsZero) {
  const Bytes f4 = BuildFrame(Spec(kA4, kB4, /*ect=*/false), Hello());
  EXPECT_EQ(f4[15], 0);
  const Bytes f6 = BuildFrame(Spec(kA6, kB6, /*ect=*/false), Hello());
  EXPECT_EQ(f6[14], 0x60);
  EXPECT_EQ(f6[15], 0x00);
}

TEST(FrameHeaderTest, Ipv6FlowLabelSharesItsBytesWithTheTrafficClass) {
  FrameHeaderSpec s = Spec(kA6, kB6);
  s.flow_label = 0xfabcde;  // 20 bits kept: 0xabcde
  const Bytes f = BuildFrame(s, Hello());
  EXPECT_EQ(Hex(absl::MakeConstSpan(f).subspan(14, 4)), "602abcde");
  const Classified c = Classify(f, IdentityOf(kB6));
  EXPECT_EQ(c.kind, FrameKind::kUdp);
  EXPECT_FALSE(c.udp.ce);
}

TEST(FrameHeaderTest, Ipv4ChecksumOffloadLeavesHeaderChecksumZero) {
  FrameHeaderSpec s = Spec(kA4, kB4);
  s.payload_len = 5;
  Bytes f(42);
  ASSERT_EQ(
      WriteFrameHeader(s, /*ipv4_checksum_offload=*/true, absl::MakeSpan(f)),
      42u);
  EXPECT_EQ(LoadBe16(f.data() + 24), 0);
  EXPECT_EQ(LoadBe16(f.data() + 40), 0);  // UDP checksum not yet set
}

TEST(FrameHeaderTest, RefusesShortBufferMixedFamiliesAndOversizePayload) {
  Bytes f(100, 0xaa);
  FrameHeaderSpec s = Spec(kA4, kB4);
  EXPECT_EQ(WriteFrameHeader(s, false, absl::MakeSpan(f).first(41)), 0u);
  FrameHeaderSpec mixed = Spec(kA4, kB6);
  EXPECT_EQ(WriteFrameHeader(mixed, false, absl::MakeSpan(f)), 0u);
  FrameHeaderSpec none = s;
  none.src.family = none.dst.family = NetAddr::Family::kNone;
  EXPECT_EQ(WriteFrameHeader(none, false, absl::MakeSpan(f)), 0u);
  s.payload_len = 65535 - 28 + 1;
  EXPECT_EQ(WriteFrameHeader(s, false, absl::MakeSpan(f)), 0u);
  s.payload_len = 65535 - 28;
  EXPECT_EQ(WriteFrameHeader(s, false, absl::MakeSpan(f)), 42u);
  FrameHeaderSpec s6 = Spec(kA6, kB6);
  s6.payload_len = 65535 - 8 + 1;
  EXPECT_EQ(WriteFrameHeader(s6, false, absl::MakeSpan(f)), 0u);
  s6.payload_len = 65535 - 8;
  EXPECT_EQ(WriteFrameHeader(s6, false, absl::MakeSpan(f)), 62u);
  EXPECT_EQ(f[99], 0xaa);  // nothing past the header written
}

TEST(ChecksumTest, MatchesNaiveLoopForEveryLengthAndSplit) {
  Rng rng(7);
  for (size_t len = 0; len < 600; ++len) {
    Bytes b(len);
    for (auto& x : b) x = static_cast<uint8_t>(rng.Next());
    if (len % 7 == 0) std::fill(b.begin(), b.end(), 0xff);
    InternetChecksum whole;
    whole.Add(b);
    ASSERT_EQ(whole.Sum(), NaiveSum(b)) << "len=" << len;
    // The same bytes as random pieces, odd lengths and empty ones included.
    InternetChecksum pieces;
    for (size_t at = 0; at < len;) {
      const size_t n = std::min<size_t>(len - at, rng.Uniform(20));
      pieces.Add(absl::MakeConstSpan(b).subspan(at, n));
      at += n;
    }
    ASSERT_EQ(pieces.Sum(), NaiveSum(b)) << "len=" << len;
    ASSERT_EQ(pieces.length(), len);
  }
}

TEST(ChecksumTest, LargeBuffersOfOnesDoNotLoseCarries) {
  Bytes b(65536 + 3, 0xff);
  InternetChecksum c;
  c.Add(b);
  EXPECT_EQ(c.Sum(), NaiveSum(b));
  EXPECT_EQ(c.Checksum(), NaiveChecksum(b));
}

TEST(UdpChecksumTest, OddLengthPiecesGiveTheSameChecksumAsOnePiece) {
  Bytes payload(1473);
  for (size_t i = 0; i < payload.size(); ++i) {
    payload[i] = static_cast<uint8_t>(i * 37 + 11);
  }
  for (const auto& [a, b] : {std::pair{kA4, kB4}, std::pair{kA6, kB6}}) {
    const Bytes whole = BuildFrame(Spec(a, b), payload);
    FrameHeaderSpec s = Spec(a, b);
    s.payload_len = static_cast<uint32_t>(payload.size());
    Bytes hdr(FrameHeaderLen(s.src.family));
    ASSERT_EQ(WriteFrameHeader(s, false, absl::MakeSpan(hdr)), hdr.size());
    const absl::Span<const uint8_t> p(payload);
    const absl::Span<const uint8_t> pieces[] = {
        p.subspan(0, 1), p.subspan(1, 0), p.subspan(1, 333), p.subspan(334, 2),
        p.subspan(336)};
    FinishUdpChecksum(absl::MakeSpan(hdr), pieces);
    EXPECT_EQ(Hex(hdr), Hex(absl::MakeConstSpan(whole).first(hdr.size())));
    Bytes all = PseudoHeader(whole);
    all.insert(all.end(), whole.begin() + hdr.size() - 8, whole.end());
    EXPECT_EQ(NaiveSum(all), 0xffff) << a;
  }
}

TEST(UdpChecksumTest, ComputedZeroIsSentAsAllOnes) {
  for (const auto& [a, b] : {std::pair{kA4, kB4}, std::pair{kA6, kB6}}) {
    // Choose the 2-byte payload that makes the sum 0xffff (checksum 0).
    Bytes f = BuildFrame(Spec(a, b), Bytes{0, 0});
    const size_t hdr = f.size() - 2;
    f[hdr - 2] = f[hdr - 1] = 0;
    Bytes all = PseudoHeader(f);
    all.insert(all.end(), f.begin() + hdr - 8, f.end());
    const uint16_t w = static_cast<uint16_t>(0xffff - NaiveSum(all));
    const Bytes payload = {static_cast<uint8_t>(w >> 8),
                           static_cast<uint8_t>(w)};
    f = BuildFrame(Spec(a, b), payload);
    EXPECT_EQ(LoadBe16(f.data() + hdr - 2), 0xffff) << a;
    const Classified c = Classify(f, IdentityOf(b));
    EXPECT_EQ(c.kind, FrameKind::kUdp) << a << " " << RxDropName(c.why);
  }
}

TEST(UdpChecksumTest, PseudoHeaderSumIsWhatTheNicCompletes) {
  const Bytes payload = {1, 2, 3, 4, 5, 6, 7};
  for (const auto& [a, b] : {std::pair{kA4, kB4}, std::pair{kA6, kB6}}) {
    const Bytes sw = BuildFrame(Spec(a, b), payload);
    const size_t hdr = sw.size() - payload.size();
    Bytes f = sw;
    f[hdr - 2] = f[hdr - 1] = 0xee;
    SetUdpPseudoHeaderChecksum(absl::MakeSpan(f.data(), hdr));
    // Non-complemented sum of the pseudo-header alone.
    EXPECT_EQ(LoadBe16(f.data() + hdr - 2), NaiveSum(PseudoHeader(f))) << a;
    // What an offloading NIC then does: checksum the UDP header (field
    // holding the pseudo sum) and payload, complement, store.
    const Bytes l4(f.begin() + hdr - 8, f.end());
    uint16_t nic = NaiveChecksum(l4);
    if (nic == 0) nic = 0xffff;
    EXPECT_EQ(nic, LoadBe16(sw.data() + hdr - 2)) << a;
    // And the mode switch picks the same two paths.
    Bytes g = sw;
    const absl::Span<const uint8_t> pieces[] = {payload};
    FinishUdpChecksum(L4Checksum::kOffload, absl::MakeSpan(g.data(), hdr),
                      pieces);
    EXPECT_EQ(g, f);
    FinishUdpChecksum(L4Checksum::kSoftware, absl::MakeSpan(g.data(), hdr),
                      pieces);
    EXPECT_EQ(g, sw);
  }
}

TEST(ClassifyFrameTest, Ipv4DatagramRoundTrips) {
  const Bytes f = BuildFrame(Spec(kA4, kB4), Hello());
  const Classified c = Classify(f, IdentityOf(kB4));
  ASSERT_EQ(c.kind, FrameKind::kUdp) << RxDropName(c.why);
  EXPECT_EQ(c.udp.src, Addr(kA4));
  EXPECT_EQ(c.udp.src_mac, kMacA);
  EXPECT_FALSE(c.udp.ce);
  EXPECT_EQ(c.udp.payload_offset, 42u);
  EXPECT_EQ(c.udp.payload_len, 5u);
}

TEST(ClassifyFrameTest, Ipv6DatagramRoundTrips) {
  const Bytes f = BuildFrame(Spec(kA6, kB6), Hello());
  const Classified c = Classify(f, IdentityOf(kB6));
  ASSERT_EQ(c.kind, FrameKind::kUdp) << RxDropName(c.why);
  EXPECT_EQ(c.udp.src, Addr(kA6));
  EXPECT_EQ(c.udp.src_mac, kMacA);
  EXPECT_FALSE(c.udp.ce);
  EXPECT_EQ(c.udp.payload_offset, 62u);
  EXPECT_EQ(c.udp.payload_len, 5u);
}

TEST(ClassifyFrameTest, EmptyPayloadIsAValidDatagram) {
  const Classified c =
      Classify(BuildFrame(Spec(kA6, kB6), {}), IdentityOf(kB6));
  ASSERT_EQ(c.kind, FrameKind::kUdp);
  EXPECT_EQ(c.udp.payload_len, 0u);
}

TEST(ClassifyFrameTest, CeMarkIsReadBack) {
  Bytes f4 = BuildFrame(Spec(kA4, kB4), Hello());
  f4[15] |= kEcnCe;  // a router marked it
  FixIpv4Checksum(&f4);
  Classified c = Classify(f4, IdentityOf(kB4));
  ASSERT_EQ(c.kind, FrameKind::kUdp) << RxDropName(c.why);
  EXPECT_TRUE(c.udp.ce);

  Bytes f6 = BuildFrame(Spec(kA6, kB6), Hello());
  f6[15] |= kEcnCe << 4;  // the traffic class straddles bytes 0 and 1
  c = Classify(f6, IdentityOf(kB6));
  ASSERT_EQ(c.kind, FrameKind::kUdp) << RxDropName(c.why);
  EXPECT_TRUE(c.udp.ce);
}

TEST(ClassifyFrameTest, EthernetPaddingPastTheIpLengthIsIgnored) {
  Bytes f = BuildFrame(Spec(kA4, kB4), Hello());
  ASSERT_LT(f.size(), kMinEthFrameLen);
  f.resize(kMinEthFrameLen, 0x5a);
  const Classified c = Classify(f, IdentityOf(kB4));
  ASSERT_EQ(c.kind, FrameKind::kUdp) << RxDropName(c.why);
  EXPECT_EQ(c.udp.payload_len, 5u);
}

TEST(ClassifyFrameTest, UdpLengthShorterThanIpPayloadTrimsIt) {
  Bytes f = BuildFrame(Spec(kA4, kB4), Hello());
  StoreBe16(f.data() + 38, 8 + 3);  // UDP says 3 payload bytes, IP says 5
  FixUdpChecksum(&f);
  const Classified c = Classify(f, IdentityOf(kB4));
  ASSERT_EQ(c.kind, FrameKind::kUdp) << RxDropName(c.why);
  EXPECT_EQ(c.udp.payload_len, 3u);
}

TEST(ClassifyFrameTest, HardwareVerdictsReplaceSoftwareChecks) {
  Bytes f = BuildFrame(Spec(kA4, kB4), Hello());
  f[24] ^= 1;  // IP header checksum
  f[41] ^= 1;  // UDP checksum
  const LocalIdentity me = IdentityOf(kB4);
  EXPECT_EQ(Classify(f, me).why, RxDrop::kBadIpChecksum);
  EXPECT_EQ(Classify(f, me, HwChecksum::kGood).why, RxDrop::kBadUdpChecksum);
  EXPECT_EQ(Classify(f, me, HwChecksum::kGood, HwChecksum::kGood).kind,
            FrameKind::kUdp);
  const Bytes good = BuildFrame(Spec(kA4, kB4), Hello());
  EXPECT_EQ(Classify(good, me, HwChecksum::kBad).why, RxDrop::kBadIpChecksum);
  EXPECT_EQ(Classify(good, me, HwChecksum::kGood, HwChecksum::kBad).why,
            RxDrop::kBadUdpChecksum);
}

TEST(ClassifyFrameTest, ZeroUdpChecksumMeansNoneOnIpv4AndIsDroppedOnIpv6) {
  Bytes f4 = BuildFrame(Spec(kA4, kB4), Hello());
  f4[40] = f4[41] = 0;
  EXPECT_EQ(Classify(f4, IdentityOf(kB4)).kind, FrameKind::kUdp);
  Bytes f6 = BuildFrame(Spec(kA6, kB6), Hello());
  f6[60] = f6[61] = 0;
  EXPECT_EQ(Classify(f6, IdentityOf(kB6)).why, RxDrop::kBadUdpChecksum);
  EXPECT_EQ(
      Classify(f6, IdentityOf(kB6), HwChecksum::kUnknown, HwChecksum::kGood)
          .why,
      RxDrop::kBadUdpChecksum);
}

// One crafted frame per drop reason.
struct DropCase {
  const char* name;
  bool v6;
  RxDrop want;
  void (*edit)(Bytes*);
};

const DropCase kDropCases[] = {
    {"runt", false, RxDrop::kShort, [](Bytes* f) { f->resize(13); }},
    {"ipv4 header cut", false, RxDrop::kShort, [](Bytes* f) { f->resize(33); }},
    {"ipv6 header cut", true, RxDrop::kShort, [](Bytes* f) { f->resize(53); }},
    {"vlan tag", false, RxDrop::kEtherType,
     [](Bytes* f) { StoreBe16(f->data() + 12, kEtherTypeVlan); }},
    {"ipx", false, RxDrop::kEtherType,
     [](Bytes* f) { StoreBe16(f->data() + 12, 0x8137); }},
    {"other mac", false, RxDrop::kWrongMac, [](Bytes* f) { (*f)[5] = 9; }},
    {"broadcast udp", false, RxDrop::kWrongMac,
     [](Bytes* f) { std::memset(f->data(), 0xff, 6); }},
    {"multicast udp", true, RxDrop::kWrongMac,
     [](Bytes* f) { (*f)[0] = (*f)[1] = 0x33; }},
    {"ipv4 version", false, RxDrop::kBadIpHeader,
     [](Bytes* f) {
       (*f)[14] = 0x65;
       FixIpv4Checksum(f);
     }},
    {"ihl 4", false, RxDrop::kBadIpHeader,
     [](Bytes* f) {
       (*f)[14] = 0x44;
       FixIpv4Checksum(f);
     }},
    {"ipv6 version", true, RxDrop::kBadIpHeader,
     [](Bytes* f) { (*f)[14] = 0x40; }},
    {"ip options", false, RxDrop::kIpOptions,
     [](Bytes* f) {
       (*f)[14] = 0x46;
       FixIpv4Checksum(f);
     }},
    {"more fragments", false, RxDrop::kFragment,
     [](Bytes* f) {
       (*f)[20] = 0x20;
       FixIpv4Checksum(f);
     }},
    {"fragment offset", false, RxDrop::kFragment,
     [](Bytes* f) {
       (*f)[21] = 0x01;
       FixIpv4Checksum(f);
     }},
    {"other ipv4", false, RxDrop::kWrongIp,
     [](Bytes* f) {
       (*f)[33] = 3;
       FixIpv4Checksum(f);
     }},
    {"other ipv6", true, RxDrop::kWrongIp, [](Bytes* f) { (*f)[53] = 3; }},
    {"tcp", false, RxDrop::kNotUdp,
     [](Bytes* f) {
       (*f)[23] = 6;
       FixIpv4Checksum(f);
     }},
    {"ipv6 extension header", true, RxDrop::kNotUdp,
     [](Bytes* f) { (*f)[20] = 0; }},
    {"icmpv6 echo", true, RxDrop::kNotUdp,
     [](Bytes* f) {
       (*f)[20] = kIpProtoIcmpv6;
       (*f)[54] = 128;
     }},
    {"ipv4 total past frame", false, RxDrop::kBadLength,
     [](Bytes* f) {
       StoreBe16(f->data() + 16, static_cast<uint16_t>(f->size() - 14 + 1));
       FixIpv4Checksum(f);
     }},
    {"ipv4 total below header", false, RxDrop::kBadLength,
     [](Bytes* f) {
       StoreBe16(f->data() + 16, 19);
       FixIpv4Checksum(f);
     }},
    {"ipv4 no room for udp", false, RxDrop::kBadLength,
     [](Bytes* f) {
       StoreBe16(f->data() + 16, 27);
       FixIpv4Checksum(f);
     }},
    {"ipv6 payload past frame", true, RxDrop::kBadLength,
     [](Bytes* f) {
       StoreBe16(f->data() + 18, static_cast<uint16_t>(f->size() - 54 + 1));
     }},
    {"udp length past ip", false, RxDrop::kBadLength,
     [](Bytes* f) { StoreBe16(f->data() + 38, 14); }},
    {"udp length below header", true, RxDrop::kBadLength,
     [](Bytes* f) { StoreBe16(f->data() + 58, 7); }},
    {"ip checksum", false, RxDrop::kBadIpChecksum,
     [](Bytes* f) { (*f)[25] ^= 0x10; }},
    {"udp checksum v4", false, RxDrop::kBadUdpChecksum,
     [](Bytes* f) { (*f)[44] ^= 0x01; }},
    {"udp checksum v6", true, RxDrop::kBadUdpChecksum,
     [](Bytes* f) { (*f)[62] ^= 0x80; }},
    {"other port", false, RxDrop::kWrongPort,
     [](Bytes* f) {
       (*f)[37] ^= 1;
       FixUdpChecksum(f);
     }},
};

TEST(ClassifyFrameTest, EveryDropReasonHasACraftedFrame) {
  std::set<RxDrop> seen;
  for (const DropCase& d : kDropCases) {
    Bytes f = d.v6 ? BuildFrame(Spec(kA6, kB6), Hello())
                   : BuildFrame(Spec(kA4, kB4), Hello());
    d.edit(&f);
    const Classified c = Classify(f, IdentityOf(d.v6 ? kB6 : kB4));
    EXPECT_EQ(c.kind, FrameKind::kDrop) << d.name;
    EXPECT_EQ(c.why, d.want) << d.name << ": got " << RxDropName(c.why);
    seen.insert(c.why);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(RxDrop::kCount));
}

TEST(ClassifyFrameTest, OnlyTheIdentitysFamilyIsAccepted) {
  const Bytes f6 = BuildFrame(Spec(kA6, kB6), Hello());
  EXPECT_EQ(Classify(f6, IdentityOf(kB4)).why, RxDrop::kEtherType);
  const Bytes f4 = BuildFrame(Spec(kA4, kB4), Hello());
  EXPECT_EQ(Classify(f4, IdentityOf(kB6)).why, RxDrop::kEtherType);
}

TEST(ClassifyFrameTest, ArpGoesToNeighborHandlingWhenBroadcastOrOurs) {
  Bytes arp(60, 0);
  std::memset(arp.data(), 0xff, 6);
  StoreBe16(arp.data() + 12, kEtherTypeArp);
  const LocalIdentity me = IdentityOf(kB4);
  EXPECT_EQ(Classify(arp, me).kind, FrameKind::kArp);
  std::memcpy(arp.data(), kMacB.data(), 6);
  EXPECT_EQ(Classify(arp, me).kind, FrameKind::kArp);
  arp[5] = 0x77;
  EXPECT_EQ(Classify(arp, me).why, RxDrop::kWrongMac);
  std::memset(arp.data(), 0xff, 6);
  arp.resize(41);
  EXPECT_EQ(Classify(arp, me).why, RxDrop::kShort);
  arp.resize(60);
  EXPECT_EQ(Classify(arp, IdentityOf(kB6)).why, RxDrop::kEtherType);
}

TEST(ClassifyFrameTest, NeighborDiscoveryIsAcceptedOnMulticastMac) {
  Bytes f = BuildFrame(Spec(kA6, kB6), Bytes(24, 0));
  f[0] = f[1] = 0x33;
  f[20] = kIpProtoIcmpv6;
  for (uint8_t type : {135, 136}) {
    f[54] = type;
    EXPECT_EQ(Classify(f, IdentityOf(kB6)).kind, FrameKind::kNeighborDiscovery);
  }
  f[54] = 134;  // router advertisement: not ours to handle
  EXPECT_EQ(Classify(f, IdentityOf(kB6)).why, RxDrop::kWrongMac);
}

TEST(ClassifyFrameTest, EveryTruncationIsDroppedWithinBounds) {
  Bytes payload(301);
  for (size_t i = 0; i < payload.size(); ++i) {
    payload[i] = static_cast<uint8_t>(i);
  }
  for (const auto& [a, b] : {std::pair{kA4, kB4}, std::pair{kA6, kB6}}) {
    const Bytes f = BuildFrame(Spec(a, b), payload);
    for (size_t len = 0; len < f.size(); ++len) {
      const Classified c =
          Classify(Bytes(f.begin(), f.begin() + len), IdentityOf(b));
      ASSERT_EQ(c.kind, FrameKind::kDrop) << a << " len=" << len;
      EXPECT_TRUE(c.why == RxDrop::kShort || c.why == RxDrop::kBadLength)
          << a << " len=" << len << " " << RxDropName(c.why);
    }
    EXPECT_EQ(Classify(f, IdentityOf(b)).kind, FrameKind::kUdp);
  }
}

TEST(RxDropNameTest, EveryReasonHasADistinctSnakeCaseName) {
  std::set<std::string> names;
  for (int i = 0; i < static_cast<int>(RxDrop::kCount); ++i) {
    const std::string n = RxDropName(static_cast<RxDrop>(i));
    EXPECT_NE(n, "unknown");
    EXPECT_EQ(n.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"),
              std::string::npos)
        << n;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(RxDrop::kCount));
  EXPECT_STREQ(RxDropName(RxDrop::kCount), "unknown");
}

}  // namespace
}  // namespace braid::backend::dpdk

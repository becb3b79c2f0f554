// Tests for braid::NetAddr: parsing, printing and hashing.
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "base/rng.h"
#include "braid/address.h"
#include "gtest/gtest.h"

namespace braid {
namespace {

TEST(NetAddrTest, DefaultIsInvalidAndPrintsAsNone) {
  NetAddr a;
  EXPECT_FALSE(a.valid());
  EXPECT_EQ(a.ToString(), "(none)");
}

TEST(NetAddrTest, WildcardIsTheAnyAddressOfEitherFamily) {
  EXPECT_TRUE(NetAddr::Parse("0.0.0.0:0", true)->IsWildcard());
  EXPECT_TRUE(NetAddr::Parse("[::]:7", true)->IsWildcard());
  EXPECT_FALSE(NetAddr::Parse("127.0.0.1:7")->IsWildcard());
  EXPECT_FALSE(NetAddr::Parse("[::1]:7")->IsWildcard());
  EXPECT_FALSE(NetAddr::Parse("[::ffff:0.0.0.0]:7")->IsWildcard());
}

TEST(NetAddrTest, ParsesIpv4WithPort) {
  absl::StatusOr<NetAddr> a = NetAddr::Parse("10.1.2.3:4791");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->valid());
  EXPECT_EQ(a->family, NetAddr::Family::kIpv4);
  EXPECT_EQ(a->port, 4791);
  EXPECT_EQ(a->ipv4(), 0x0a010203u);
  EXPECT_EQ(a->ip[0], 10);
  EXPECT_EQ(a->ip[3], 3);
  for (size_t i = 4; i < a->ip.size(); ++i) EXPECT_EQ(a->ip[i], 0) << i;
  EXPECT_EQ(*a, NetAddr::Ipv4(0x0a010203, 4791));
}

TEST(NetAddrTest, ParsesPortBounds) {
  absl::StatusOr<NetAddr> low = NetAddr::Parse("0.0.0.0:1");
  ASSERT_TRUE(low.ok()) << low.status();
  EXPECT_EQ(low->port, 1);
  absl::StatusOr<NetAddr> high = NetAddr::Parse("255.255.255.255:65535");
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_EQ(high->port, 65535);
  EXPECT_EQ(high->ipv4(), 0xffffffffu);
}

TEST(NetAddrTest, ParsesBracketedIpv6WithPort) {
  absl::StatusOr<NetAddr> a = NetAddr::Parse("[::1]:80");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->family, NetAddr::Family::kIpv6);
  EXPECT_EQ(a->port, 80);
  for (size_t i = 0; i < 15; ++i) EXPECT_EQ(a->ip[i], 0) << i;
  EXPECT_EQ(a->ip[15], 1);

  absl::StatusOr<NetAddr> b = NetAddr::Parse("[2001:db8::a:b]:65535");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->ip[0], 0x20);
  EXPECT_EQ(b->ip[1], 0x01);
  EXPECT_EQ(b->ip[2], 0x0d);
  EXPECT_EQ(b->ip[3], 0xb8);
  EXPECT_EQ(b->ip[13], 0x0a);
  EXPECT_EQ(b->ip[15], 0x0b);
  EXPECT_EQ(b->port, 65535);
}

TEST(NetAddrTest, ParsesIpv4MappedIpv6AsIpv6) {
  absl::StatusOr<NetAddr> a = NetAddr::Parse("[::ffff:10.0.0.1]:9");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->family, NetAddr::Family::kIpv6);
  EXPECT_NE(*a, NetAddr::Ipv4(0x0a000001, 9));
}

// Each malformed text is rejected with InvalidArgument and a message that
// quotes the input.
void ExpectRejected(const std::string& text) {
  absl::StatusOr<NetAddr> a = NetAddr::Parse(text);
  ASSERT_FALSE(a.ok()) << "accepted '" << text << "' as " << a->ToString();
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << text;
  EXPECT_NE(a.status().message().find("bad address"), absl::string_view::npos)
      << a.status();
}

TEST(NetAddrTest, RejectsMissingPort) {
  for (const char* t : {"10.0.0.1", "[::1]", "[::1]80",
                        "[::1]:", "10.0.0.1:", "", "[", "[::1"}) {
    ExpectRejected(t);
  }
}

TEST(NetAddrTest, RejectsPortZero) {
  ExpectRejected("10.0.0.1:0");
  ExpectRejected("[::1]:0");
}

TEST(NetAddrTest, RejectsPortAbove65535) {
  for (const char* t :
       {"10.0.0.1:65536", "[::1]:65536", "10.0.0.1:99999",
        "10.0.0.1:4294967296", "10.0.0.1:18446744073709551616"}) {
    ExpectRejected(t);
  }
}

TEST(NetAddrTest, RejectsJunkInThePort) {
  for (const char* t : {"10.0.0.1:abc", "10.0.0.1:80x", "10.0.0.1:0x50",
                        "10.0.0.1:-1", "10.0.0.1:8.0", "10.0.0.1:80:80"}) {
    ExpectRejected(t);
  }
}

TEST(NetAddrTest, RejectsSignsAndWhitespaceInThePort) {
  for (const char* t : {"10.0.0.1:+80", "10.0.0.1: 80", "10.0.0.1:80 ",
                        "10.0.0.1:80\n", "[::1]:\t80"}) {
    ExpectRejected(t);
  }
}

TEST(NetAddrTest, RejectsJunkInTheAddress) {
  for (const char* t :
       {"host:80", "10.0.0.256:80", "10.0.0:80", "10.0.0.1.5:80", ":80",
        "[]:80", "::1:80" /* unbracketed v6 */, "[10.0.0.1]:80", "[::1::2]:80",
        "[fe80::1%lo]:80", " 10.0.0.1:80", "[::1] :80", "[[::1]]:80"}) {
    ExpectRejected(t);
  }
}

TEST(NetAddrTest, RejectsEmbeddedNul) {
  ExpectRejected(std::string("10.0.0.1\0junk:80", 16));
  ExpectRejected(std::string("[::1\0junk]:80", 13));
  ExpectRejected(std::string("10.0.0.1:80\0", 12));
}

TEST(NetAddrTest, ToStringPrintsCanonicalForms) {
  EXPECT_EQ(NetAddr::Ipv4(0x7f000001, 4791).ToString(), "127.0.0.1:4791");
  EXPECT_EQ(NetAddr::Parse("[2001:0db8:0:0:0:0:0:1]:80")->ToString(),
            "[2001:db8::1]:80");
  EXPECT_EQ(NetAddr::Parse("[::]:1")->ToString(), "[::]:1");
}

TEST(NetAddrTest, ToStringRoundTripsThroughParse) {
  Rng rng(77);
  for (int i = 0; i < 2000; ++i) {
    NetAddr a;
    if (rng.Bernoulli(0.5)) {
      a = NetAddr::Ipv4(static_cast<uint32_t>(rng.Next()),
                        static_cast<uint16_t>(1 + rng.Uniform(65535)));
    } else {
      a.family = NetAddr::Family::kIpv6;
      a.port = static_cast<uint16_t>(1 + rng.Uniform(65535));
      for (auto& b : a.ip) {
        // Many zero bytes so that "::" compression is exercised.
        b = rng.Bernoulli(0.4) ? 0 : static_cast<uint8_t>(rng.Next());
      }
    }
    const std::string text = a.ToString();
    absl::StatusOr<NetAddr> back = NetAddr::Parse(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    ASSERT_EQ(*back, a) << text;
    ASSERT_EQ(back->ToString(), text);
  }
}

TEST(NetAddrTest, EqualAddressesHashEqual) {
  const NetAddr a = *NetAddr::Parse("[2001:db8::1]:80");
  const NetAddr b = *NetAddr::Parse("[2001:0db8::0:1]:80");
  ASSERT_EQ(a, b);
  EXPECT_EQ(NetAddrHash()(a), NetAddrHash()(b));
  EXPECT_EQ(absl::Hash<NetAddr>()(a), absl::Hash<NetAddr>()(b));
  const NetAddr c = *NetAddr::Parse("10.0.0.1:80");
  EXPECT_EQ(NetAddrHash()(c), NetAddrHash()(NetAddr::Ipv4(0x0a000001, 80)));
}

TEST(NetAddrTest, AddressesDifferingInOneFieldAreDistinctKeys) {
  const NetAddr base = NetAddr::Ipv4(0x0a000001, 80);
  NetAddr other_port = base;
  other_port.port = 81;
  NetAddr other_ip = base;
  other_ip.ip[3] = 2;
  NetAddr other_family = base;  // same bytes, other family
  other_family.family = NetAddr::Family::kIpv6;
  EXPECT_NE(base, other_port);
  EXPECT_NE(base, other_ip);
  EXPECT_NE(base, other_family);

  absl::flat_hash_set<NetAddr, NetAddrHash> set;
  for (const NetAddr& a : {base, other_port, other_ip, other_family, base}) {
    set.insert(a);
  }
  EXPECT_EQ(set.size(), 4u);
  EXPECT_TRUE(set.contains(*NetAddr::Parse("10.0.0.1:80")));
  EXPECT_FALSE(set.contains(*NetAddr::Parse("10.0.0.1:82")));
}

TEST(NetAddrTest, CanonicalTurnsIpv4MappedIntoIpv4) {
  const NetAddr mapped = *NetAddr::Parse("[::ffff:127.0.0.1]:7000");
  EXPECT_EQ(mapped.family, NetAddr::Family::kIpv6);
  EXPECT_EQ(mapped.Canonical(), *NetAddr::Parse("127.0.0.1:7000"));
  for (const char* same : {"[::1]:7000", "[::fffe:127.0.0.1]:7000",
                           "[1::ffff:127.0.0.1]:7000", "10.0.0.1:7000"}) {
    const NetAddr a = *NetAddr::Parse(same);
    EXPECT_EQ(a.Canonical(), a) << same;
  }
}

TEST(NetAddrTest, MulticastAndBroadcastAreRecognised) {
  for (const char* yes : {"224.0.0.1:1", "239.255.255.255:1",
                          "255.255.255.255:1", "[ff02::1]:1"}) {
    EXPECT_TRUE(NetAddr::Parse(yes)->IsMulticastOrBroadcast()) << yes;
  }
  for (const char* no : {"223.255.255.255:1", "240.0.0.1:1", "10.0.0.255:1",
                         "[fe80::1]:1", "[::1]:1"}) {
    EXPECT_FALSE(NetAddr::Parse(no)->IsMulticastOrBroadcast()) << no;
  }
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

TEST(NetAddrUdTest, ParsesGidSlashQpnInDecimalAndHex) {
  auto a = NetAddr::Parse("[fe80::1]/0x1234ab");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->family, NetAddr::Family::kIbUd);
  EXPECT_EQ(a->qpn(), 0x1234abu);
  EXPECT_EQ(a->ip[0], 0xfe);
  EXPECT_EQ(a->ip[15], 1);
  auto d = NetAddr::Parse("[::ffff:10.0.0.1]/256");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->qpn(), 256u);
  EXPECT_EQ(d->ToString(), "[::ffff:10.0.0.1]/0x000100");
  EXPECT_EQ(*NetAddr::Parse(d->ToString()), *d);
  // Not turned into IPv4 by Canonical: it names a queue pair, not a socket.
  EXPECT_EQ(d->Canonical(), *d);
}

TEST(NetAddrUdTest, RejectsQpnZeroTooLargeOrJunk) {
  for (const char* bad :
       {"[fe80::1]/0", "[fe80::1]/0x1000000", "[fe80::1]/16777216",
        "[fe80::1]/", "[fe80::1]/0x", "[fe80::1]/12a", "[fe80::1]/-1",
        "[fe80::1]/0x123456789", "[not-a-gid]/5", "[1.2.3.4]/5"}) {
    auto a = NetAddr::Parse(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(a.status())) << bad;
  }
}

TEST(NetAddrUdTest, QpnsDifferingOnlyInTheHighByteAreDistinct) {
  uint8_t gid[16] = {0xfe, 0x80};
  const NetAddr a = NetAddr::IbUd(gid, 0x010005);
  const NetAddr b = NetAddr::IbUd(gid, 0x020005);
  EXPECT_EQ(a.port, b.port);
  EXPECT_NE(a, b);
  EXPECT_NE(absl::Hash<NetAddr>()(a), absl::Hash<NetAddr>()(b));
  EXPECT_EQ(a, NetAddr::IbUd(gid, 0x010005));
}

}  // namespace
}  // namespace braid

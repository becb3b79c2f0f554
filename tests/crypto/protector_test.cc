// Tests for Seal and Open: round trips in both modes, every single-bit
// flip rejected, wrong and mismatched keys rejected, the encrypt mode hiding
// the frames, and the refusals of malformed input.
#include "crypto/protector.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "wire/frames.h"

namespace braid::crypto {
namespace {

using Bytes = std::vector<uint8_t>;

const std::string kDomainKey(32, 'd');
constexpr uint64_t kA = 0xa1a2a3a4a5a6a7a8;
constexpr uint64_t kB = 0xb1b2b3b4b5b6b7b8;
constexpr SecurityMode kSecureModes[] = {SecurityMode::kAuth,
                                         SecurityMode::kEncrypt};

// A datagram with preamble, header `h` and `frames_len` pattern bytes of
// frames, with room for the tag; *len is set to its length before sealing.
Bytes Build(const SecurityHeader& h, size_t frames_len, size_t* len) {
  Bytes d(kProtectedFramesOffset + frames_len + kTagSize, 0);
  EXPECT_EQ(wire::WritePreamble(4791, absl::MakeSpan(d)), wire::kPreambleSize);
  EXPECT_EQ(WriteSecurityHeader(h, absl::MakeSpan(d)), kProtectedFramesOffset);
  for (size_t i = 0; i < frames_len; ++i) {
    d[kProtectedFramesOffset + i] = static_cast<uint8_t>(i * 7 + 1);
  }
  *len = kProtectedFramesOffset + frames_len;
  return d;
}

Bytes Frames(const Bytes& d, size_t frames_len) {
  return Bytes(d.begin() + kProtectedFramesOffset,
               d.begin() + kProtectedFramesOffset + frames_len);
}

class ProtectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PeerKeys> a = MakePeerKeys(AsBytes(kDomainKey), kA, kB);
    absl::StatusOr<PeerKeys> b = MakePeerKeys(AsBytes(kDomainKey), kB, kA);
    absl::StatusOr<InitialKeys> i = MakeInitialKeys(AsBytes(kDomainKey));
    ASSERT_TRUE(a.ok() && b.ok() && i.ok());
    a_ = *std::move(a);
    b_ = *std::move(b);
    initial_ = *std::move(i);
  }

  PeerKeys a_;           // endpoint A's keys for B
  PeerKeys b_;           // endpoint B's keys for A
  InitialKeys initial_;  // the same for every endpoint of the domain
};

TEST_F(ProtectorTest, PairKeyRoundTripsInBothModesAndSizes) {
  for (SecurityMode mode : kSecureModes) {
    for (size_t frames : {size_t{0}, size_t{1}, size_t{32}, size_t{1404}}) {
      size_t len;
      Bytes d = Build({kA, kB, 1000 + frames}, frames, &len);
      const Bytes sent = Frames(d, frames);
      ASSERT_EQ(Seal(mode, a_.tx, absl::MakeSpan(d), len), len + kTagSize);
      size_t got = 999999;
      ASSERT_TRUE(Open(mode, b_.rx, absl::MakeSpan(d), &got))
          << SecurityModeName(mode) << " " << frames;
      EXPECT_EQ(got, frames);
      EXPECT_EQ(Frames(d, frames), sent);
    }
  }
}

TEST_F(ProtectorTest, InitialKeyRoundTripsBetweenAnyTwoEndpoints) {
  absl::StatusOr<InitialKeys> other = MakeInitialKeys(AsBytes(kDomainKey));
  ASSERT_TRUE(other.ok());
  for (SecurityMode mode : kSecureModes) {
    size_t len;
    Bytes d = Build({kA, 0, 3}, 100, &len);
    const Bytes sent = Frames(d, 100);
    ASSERT_EQ(Seal(mode, initial_.seal, absl::MakeSpan(d), len),
              len + kTagSize);
    size_t got = 0;
    ASSERT_TRUE(Open(mode, other->open, absl::MakeSpan(d), &got));
    EXPECT_EQ(Frames(d, got), sent);
  }
}

TEST_F(ProtectorTest, AuthLeavesFramesInClearAndEncryptHidesThem) {
  size_t len;
  Bytes d = Build({kA, kB, 5}, 200, &len);
  const Bytes clear = d;
  ASSERT_NE(Seal(SecurityMode::kAuth, a_.tx, absl::MakeSpan(d), len), 0u);
  EXPECT_TRUE(std::equal(clear.begin(), clear.begin() + len, d.begin()));
  d = clear;
  ASSERT_NE(Seal(SecurityMode::kEncrypt, a_.tx, absl::MakeSpan(d), len), 0u);
  // Preamble and header stay in clear; the frames do not.
  EXPECT_TRUE(std::equal(clear.begin(), clear.begin() + kProtectedFramesOffset,
                         d.begin()));
  size_t same = 0;
  for (size_t i = kProtectedFramesOffset; i < len; ++i)
    same += d[i] == clear[i];
  EXPECT_LT(same, 10u);  // ~200/256 expected by chance
}

TEST_F(ProtectorTest, EverySingleBitFlipFailsOpenInBothModes) {
  for (SecurityMode mode : kSecureModes) {
    for (bool initial : {false, true}) {
      size_t len;
      Bytes d = Build({kA, initial ? 0 : kB, 42}, 96, &len);
      PacketKey& seal_key = initial ? initial_.seal : a_.tx;
      PacketKey& open_key = initial ? initial_.open : b_.rx;
      const size_t sealed = Seal(mode, seal_key, absl::MakeSpan(d), len);
      ASSERT_EQ(sealed, len + kTagSize);
      for (size_t bit = 0; bit < 8 * sealed; ++bit) {
        Bytes c = d;
        c[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        size_t got = 12345;
        EXPECT_FALSE(Open(mode, open_key, absl::MakeSpan(c), &got))
            << SecurityModeName(mode) << " initial=" << initial << " bit "
            << bit;
        EXPECT_EQ(got, 12345u);
      }
      // And the unflipped datagram still opens: the failures were the flips.
      size_t got = 0;
      EXPECT_TRUE(Open(mode, open_key, absl::MakeSpan(d), &got));
    }
  }
}

TEST_F(ProtectorTest, WrongKeysFailOpen) {
  absl::StatusOr<PeerKeys> other_domain =
      MakePeerKeys(AsBytes(std::string(32, 'x')), kB, kA);
  absl::StatusOr<PeerKeys> b_restarted =
      MakePeerKeys(AsBytes(kDomainKey), kB + 1, kA);
  ASSERT_TRUE(other_domain.ok() && b_restarted.ok());
  for (SecurityMode mode : kSecureModes) {
    size_t len;
    const Bytes clear = Build({kA, kB, 9}, 64, &len);
    Bytes d = clear;
    ASSERT_NE(Seal(mode, a_.tx, absl::MakeSpan(d), len), 0u);
    size_t got;
    // a_.tx holds the right key but is made for sealing.
    for (PacketKey* k :
         {&a_.tx, &a_.rx, &b_.tx, &other_domain->rx, &b_restarted->rx}) {
      Bytes c = d;
      EXPECT_FALSE(Open(mode, *k, absl::MakeSpan(c), &got));
    }
    // The other mode's check fails too.
    const SecurityMode other = mode == SecurityMode::kAuth
                                   ? SecurityMode::kEncrypt
                                   : SecurityMode::kAuth;
    Bytes c = d;
    EXPECT_FALSE(Open(other, b_.rx, absl::MakeSpan(c), &got));
    EXPECT_TRUE(Open(mode, b_.rx, absl::MakeSpan(d), &got));
  }
}

TEST_F(ProtectorTest, InitialAndPairKeysAreNeverInterchangeable) {
  for (SecurityMode mode : kSecureModes) {
    size_t len;
    // Sealing refuses a header that names the other kind of key.
    Bytes d = Build({kA, 0, 1}, 10, &len);
    EXPECT_EQ(Seal(mode, a_.tx, absl::MakeSpan(d), len), 0u);
    d = Build({kA, kB, 1}, 10, &len);
    EXPECT_EQ(Seal(mode, initial_.seal, absl::MakeSpan(d), len), 0u);
    // Opening refuses it too, before any crypto.
    d = Build({kA, 0, 1}, 10, &len);
    ASSERT_NE(Seal(mode, initial_.seal, absl::MakeSpan(d), len), 0u);
    size_t got;
    Bytes c = d;
    EXPECT_FALSE(Open(mode, b_.rx, absl::MakeSpan(c), &got));
    d = Build({kA, kB, 1}, 10, &len);
    ASSERT_NE(Seal(mode, a_.tx, absl::MakeSpan(d), len), 0u);
    c = d;
    EXPECT_FALSE(Open(mode, initial_.open, absl::MakeSpan(c), &got));
  }
}

TEST_F(ProtectorTest, DifferentPacketNumbersGiveDifferentTagsForSameFrames) {
  for (SecurityMode mode : kSecureModes) {
    size_t len;
    Bytes d1 = Build({kA, kB, 1}, 50, &len);
    Bytes d2 = Build({kA, kB, 2}, 50, &len);
    ASSERT_NE(Seal(mode, a_.tx, absl::MakeSpan(d1), len), 0u);
    ASSERT_NE(Seal(mode, a_.tx, absl::MakeSpan(d2), len), 0u);
    EXPECT_FALSE(
        std::equal(d1.end() - kTagSize, d1.end(), d2.end() - kTagSize));
    if (mode == SecurityMode::kEncrypt) {
      EXPECT_FALSE(std::equal(d1.begin() + kProtectedFramesOffset,
                              d1.begin() + len,
                              d2.begin() + kProtectedFramesOffset));
    }
  }
}

TEST_F(ProtectorTest, SealRefusesNoneModeMissingRoomAndBadHeaders) {
  size_t len;
  Bytes d = Build({kA, kB, 1}, 10, &len);
  EXPECT_EQ(Seal(SecurityMode::kNone, a_.tx, absl::MakeSpan(d), len), 0u);
  // No room for the tag.
  EXPECT_EQ(Seal(SecurityMode::kAuth, a_.tx,
                 absl::MakeSpan(d).first(len + kTagSize - 1), len),
            0u);
  // Shorter than preamble + header.
  EXPECT_EQ(Seal(SecurityMode::kAuth, a_.tx, absl::MakeSpan(d), 27), 0u);
  PacketKey empty;
  EXPECT_EQ(Seal(SecurityMode::kAuth, empty, absl::MakeSpan(d), len), 0u);
  // A key made for opening does not seal.
  EXPECT_EQ(Seal(SecurityMode::kAuth, b_.rx, absl::MakeSpan(d), len), 0u);
  d = Build({0, kB, 1}, 10, &len);  // zero source
  EXPECT_EQ(Seal(SecurityMode::kAuth, a_.tx, absl::MakeSpan(d), len), 0u);
  d = Build({kA, 0, kInitialPacketNumberLimit}, 10, &len);
  EXPECT_EQ(Seal(SecurityMode::kAuth, initial_.seal, absl::MakeSpan(d), len),
            0u);
}

TEST_F(ProtectorTest, OpenRefusesShortDatagramsAndNoneMode) {
  size_t len;
  Bytes d = Build({kA, kB, 1}, 0, &len);
  ASSERT_EQ(Seal(SecurityMode::kAuth, a_.tx, absl::MakeSpan(d), len),
            kMinProtectedDatagram);
  size_t got;
  Bytes c = d;
  EXPECT_FALSE(Open(SecurityMode::kNone, b_.rx, absl::MakeSpan(c), &got));
  for (size_t n = 0; n < kMinProtectedDatagram; ++n) {
    c = d;
    EXPECT_FALSE(
        Open(SecurityMode::kAuth, b_.rx, absl::MakeSpan(c).first(n), &got))
        << n;
  }
  PacketKey empty;
  EXPECT_FALSE(Open(SecurityMode::kAuth, empty, absl::MakeSpan(d), &got));
  EXPECT_TRUE(Open(SecurityMode::kAuth, b_.rx, absl::MakeSpan(d), &got));
  EXPECT_EQ(got, 0u);
}

TEST_F(ProtectorTest, TruncatedOrExtendedDatagramFailsOpen) {
  for (SecurityMode mode : kSecureModes) {
    size_t len;
    Bytes d = Build({kA, kB, 1}, 64, &len);
    const size_t sealed = Seal(mode, a_.tx, absl::MakeSpan(d), len);
    ASSERT_NE(sealed, 0u);
    size_t got;
    Bytes c = d;
    EXPECT_FALSE(Open(mode, b_.rx, absl::MakeSpan(c).first(sealed - 1), &got));
    c = d;
    c.push_back(0);
    EXPECT_FALSE(Open(mode, b_.rx, absl::MakeSpan(c), &got));
  }
}

TEST_F(ProtectorTest, KeysAreReusableAcrossManyDatagramsAndAfterFailures) {
  for (SecurityMode mode : kSecureModes) {
    for (uint64_t pn = 0; pn < 100; ++pn) {
      size_t len;
      Bytes d = Build({kA, kB, pn}, pn * 13 % 1400, &len);
      const Bytes sent = Frames(d, len - kProtectedFramesOffset);
      ASSERT_NE(Seal(mode, a_.tx, absl::MakeSpan(d), len), 0u);
      if (pn % 3 == 0) {  // a forged copy in between changes nothing
        Bytes c = d;
        c[c.size() - 1] ^= 1;
        size_t got;
        EXPECT_FALSE(Open(mode, b_.rx, absl::MakeSpan(c), &got));
      }
      size_t got = 0;
      ASSERT_TRUE(Open(mode, b_.rx, absl::MakeSpan(d), &got)) << pn;
      EXPECT_EQ(Frames(d, got), sent);
    }
  }
}

}  // namespace
}  // namespace braid::crypto

#include "tools/braid_perf/payload.h"

#include <vector>

#include "gtest/gtest.h"

namespace braid::perf {
namespace {

std::vector<uint8_t> Make(const Pattern& p, uint32_t size, uint32_t run,
                          uint64_t id) {
  std::vector<uint8_t> m(size);
  p.FillAll(absl::MakeSpan(m), Header{Kind::kData, run, id});
  return m;
}

TEST(PayloadTest, FilledMessagesOfEverySizeVerify) {
  const Pattern p(70000);
  for (uint32_t size :
       {16u, 17u, 23u, 24u, 64u, 527u, 528u, 1500u, 65536u, 70000u}) {
    std::vector<uint8_t> m = Make(p, size, 9, 1234);
    Header h;
    EXPECT_EQ(p.Verify(m, size, Kind::kData, true, &h), Verdict::kOk) << size;
    EXPECT_EQ(h.id, 1234u);
    EXPECT_EQ(h.run, 9u);
    EXPECT_EQ(h.kind, Kind::kData);
  }
}

TEST(PayloadTest, RestampOfAReusedBufferGivesTheSameBytesAsAFreshFill) {
  const Pattern p(5000);
  std::vector<uint8_t> m = Make(p, 5000, 3, 1);
  Pattern::Restamp(absl::MakeSpan(m), Header{Kind::kData, 3, 77});
  EXPECT_EQ(m, Make(p, 5000, 3, 77));
}

// Block b's stamp sits at 16 + 512 b, little-endian, cut off by the end
// of the message: checked byte by byte against Stamp(), for sizes that end
// inside, right after and right before a stamp.
TEST(PayloadTest, StampsSitAtEveryBlockStartAndAreCutOffByTheEnd) {
  for (uint32_t size : {16u, 17u, 20u, 23u, 24u, 25u, 527u, 528u, 531u, 536u,
                        1040u, 1047u, 1048u, 65536u}) {
    std::vector<uint8_t> m(size, 0xee);
    Pattern::Restamp(absl::MakeSpan(m), Header{Kind::kData, 5, 99});
    std::vector<uint8_t> want = m;
    for (uint32_t off = kHeaderBytes, b = 0; off < size; off += kBlockBytes) {
      const uint64_t st = Stamp(5, 99, b++);
      for (uint32_t k = 0; k < 8 && off + k < size; ++k) {
        want[off + k] = static_cast<uint8_t>(st >> (8 * k));
      }
    }
    EXPECT_EQ(m, want) << size;
    for (uint32_t i = kHeaderBytes; i < size; ++i) {
      if ((i - kHeaderBytes) % kBlockBytes >= 8) {
        ASSERT_EQ(m[i], 0xee) << i;
      }
    }
  }
}

TEST(PayloadTest, EveryFlippedByteIsDetected) {
  const Pattern p(2000);
  const std::vector<uint8_t> good = Make(p, 2000, 5, 42);
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> m = good;
    m[i] ^= 0x10;
    Header h;
    EXPECT_NE(p.Verify(m, 2000, Kind::kData, true, &h), Verdict::kOk)
        << "byte " << i;
  }
}

TEST(PayloadTest, AFragmentFromAnotherMessageIsDetected) {
  const Pattern p(65536);
  std::vector<uint8_t> a = Make(p, 65536, 5, 1);
  const std::vector<uint8_t> b = Make(p, 65536, 5, 2);
  // Splice a 1400-byte "fragment" of b into a at the same offset.
  std::copy(b.begin() + 2800, b.begin() + 4200, a.begin() + 2800);
  Header h;
  EXPECT_EQ(p.Verify(a, 65536, Kind::kData, true, &h), Verdict::kBadStamp);
}

TEST(PayloadTest, AFragmentAtTheWrongOffsetIsDetectedEvenWithoutPatternCheck) {
  const Pattern p(65536);
  std::vector<uint8_t> a = Make(p, 65536, 5, 1);
  const std::vector<uint8_t> copy = a;
  std::copy(copy.begin() + 2800, copy.begin() + 4200, a.begin() + 5600);
  Header h;
  EXPECT_EQ(p.Verify(a, 65536, Kind::kData, false, &h), Verdict::kBadStamp);
}

TEST(PayloadTest, WrongSizeAndBadMagicAndShortMessagesAreNamed) {
  const Pattern p(100);
  std::vector<uint8_t> m = Make(p, 100, 1, 1);
  Header h;
  EXPECT_EQ(p.Verify(m, 64, Kind::kData, true, &h), Verdict::kWrongSize);
  EXPECT_EQ(p.Verify(absl::MakeConstSpan(m).subspan(0, 10), 100, Kind::kData,
                     true, &h),
            Verdict::kTooShort);
  m[0] ^= 1;
  EXPECT_EQ(p.Verify(m, 100, Kind::kData, true, &h), Verdict::kBadMagic);
}

TEST(PayloadTest, AnUnexpectedKindIsNamed) {
  const Pattern p(100);
  std::vector<uint8_t> m = Make(p, 100, 1, 1);
  Header h;
  EXPECT_EQ(p.Verify(m, 100, Kind::kPong, true, &h), Verdict::kBadKind);
}

// The progress hook runs after each kProgressBytes checked, so a program
// checking a large message can give its endpoint a turn; a mismatch found
// after it still fails the message.
TEST(PayloadTest, VerifyCallsProgressPerMiBChecked) {
  constexpr uint32_t kSize = 4 * Pattern::kProgressBytes + kHeaderBytes;
  const Pattern p(kSize);
  std::vector<uint8_t> m = Make(p, kSize, 3, 7);
  Header h;
  int calls = 0;
  EXPECT_EQ(p.Verify(m, kSize, Kind::kData, true, &h, [&] { ++calls; }),
            Verdict::kOk);
  // Blocks start at kHeaderBytes: four MiB of them, a turn between each.
  EXPECT_EQ(calls, 3);

  calls = 0;
  m[kSize - 100] ^= 1;
  EXPECT_EQ(p.Verify(m, kSize, Kind::kData, true, &h, [&] { ++calls; }),
            Verdict::kBadPattern);
  EXPECT_EQ(calls, 3);

  calls = 0;
  std::vector<uint8_t> small = Make(p, 65536, 3, 8);
  EXPECT_EQ(p.Verify(small, 65536, Kind::kData, true, &h, [&] { ++calls; }),
            Verdict::kOk);
  EXPECT_EQ(calls, 0);
}

TEST(PayloadTest, StampsDifferAcrossRunsIdsAndBlocks) {
  EXPECT_NE(Stamp(1, 2, 3), Stamp(2, 2, 3));
  EXPECT_NE(Stamp(1, 2, 3), Stamp(1, 3, 3));
  EXPECT_NE(Stamp(1, 2, 3), Stamp(1, 2, 4));
}

}  // namespace
}  // namespace braid::perf

#include "tools/fabric/probe_packet.h"

#include <vector>

#include "gtest/gtest.h"

namespace braid::fabric {
namespace {

ProbeHeader SampleHeader() {
  ProbeHeader h;
  h.run_id = 0xdeadbeef;
  h.port_index = 7;
  h.seq = 123456;
  h.send_time = TimeNs(987654321012345);
  return h;
}

TEST(ProbePacketTest, EncodedDatagramDecodesToTheSameHeader) {
  std::vector<uint8_t> buf(1000);
  ASSERT_TRUE(EncodeProbe(SampleHeader(), absl::MakeSpan(buf)));
  ProbeHeader out;
  ASSERT_EQ(DecodeProbe(buf, &out), ProbeVerdict::kOk);
  EXPECT_EQ(out.run_id, 0xdeadbeefu);
  EXPECT_EQ(out.port_index, 7);
  EXPECT_EQ(out.seq, 123456u);
  EXPECT_EQ(out.send_time, TimeNs(987654321012345));
}

TEST(ProbePacketTest, HeaderOnlyDatagramIsValid) {
  std::vector<uint8_t> buf(kProbeHeaderSize);
  ASSERT_TRUE(EncodeProbe(SampleHeader(), absl::MakeSpan(buf)));
  ProbeHeader out;
  EXPECT_EQ(DecodeProbe(buf, &out), ProbeVerdict::kOk);
}

TEST(ProbePacketTest, EncodeRefusesBuffersSmallerThanTheHeader) {
  std::vector<uint8_t> buf(kProbeHeaderSize - 1);
  EXPECT_FALSE(EncodeProbe(SampleHeader(), absl::MakeSpan(buf)));
}

TEST(ProbePacketTest, EveryFlippedBitIsDetected) {
  std::vector<uint8_t> good(200);
  ASSERT_TRUE(EncodeProbe(SampleHeader(), absl::MakeSpan(good)));
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= static_cast<uint8_t>(1 << bit);
      ProbeHeader out;
      EXPECT_NE(DecodeProbe(bad, &out), ProbeVerdict::kOk)
          << "byte " << i << " bit " << bit;
    }
  }
}

TEST(ProbePacketTest, TruncatedDatagramIsRejectedByLength) {
  std::vector<uint8_t> buf(500);
  ASSERT_TRUE(EncodeProbe(SampleHeader(), absl::MakeSpan(buf)));
  ProbeHeader out;
  EXPECT_EQ(DecodeProbe(absl::MakeConstSpan(buf.data(), 499), &out),
            ProbeVerdict::kBadLength);
  EXPECT_EQ(DecodeProbe(absl::MakeConstSpan(buf.data(), 10), &out),
            ProbeVerdict::kTooShort);
}

TEST(ProbePacketTest, ForeignDatagramIsRejectedByMagic) {
  std::vector<uint8_t> buf(100, 0x41);
  ProbeHeader out;
  EXPECT_EQ(DecodeProbe(buf, &out), ProbeVerdict::kBadMagic);
}

}  // namespace
}  // namespace braid::fabric

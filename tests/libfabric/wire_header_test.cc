#include "libfabric/wire_header.h"

#include <vector>

#include "gtest/gtest.h"

namespace braid::libfabric {
namespace {

MsgHeader Header(MsgKind kind, uint64_t tag = 0) {
  MsgHeader h;
  h.kind = kind;
  h.tag = tag;
  return h;
}

std::vector<uint8_t> Bytes(const MsgHeader& h) {
  auto a = EncodeHeader(h);
  return std::vector<uint8_t>(a.begin(), a.end());
}

TEST(WireHeaderTest, TaggedHeaderWithDataRoundTrips) {
  MsgHeader in{.kind = MsgKind::kTagged,
               .has_data = true,
               .tag = 0x0102030405060708ull,
               .data = 0xdeadbeefcafef00dull};
  std::vector<uint8_t> b = Bytes(in);
  b.push_back(42);  // payload after the header is not the header's concern
  MsgHeader out;
  ASSERT_EQ(DecodeHeader(b, &out), HeaderError::kNone);
  EXPECT_EQ(out.kind, MsgKind::kTagged);
  EXPECT_TRUE(out.has_data);
  EXPECT_EQ(out.tag, in.tag);
  EXPECT_EQ(out.data, in.data);
}

TEST(WireHeaderTest, TagIsLittleEndianAtByteEight) {
  std::vector<uint8_t> b = Bytes(Header(MsgKind::kTagged, 0x11223344ull));
  EXPECT_EQ(b[0], kHeaderVersion);
  EXPECT_EQ(b[1], 2);
  EXPECT_EQ(b[8], 0x44);
  EXPECT_EQ(b[11], 0x11);
}

TEST(WireHeaderTest, ShortMessageIsRefused) {
  std::vector<uint8_t> b = Bytes({});
  b.pop_back();
  MsgHeader out;
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kShort);
  EXPECT_EQ(DecodeHeader({}, &out), HeaderError::kShort);
}

TEST(WireHeaderTest, WrongVersionIsRefused) {
  std::vector<uint8_t> b = Bytes({});
  b[0] = 9;
  MsgHeader out;
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kBadVersion);
}

TEST(WireHeaderTest, UnknownKindIsRefused) {
  std::vector<uint8_t> b = Bytes({});
  MsgHeader out;
  for (uint8_t kind : {0, 9, 255}) {
    b[1] = kind;
    EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kBadKind);
  }
}

TEST(WireHeaderTest, UnknownFlagsOrReservedBytesAreRefused) {
  MsgHeader out;
  std::vector<uint8_t> b = Bytes({});
  b[2] = 0x80;
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kBadFlags);
  b = Bytes({});
  b[5] = 1;
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kBadFlags);
}

TEST(WireHeaderTest, UntaggedMessageWithATagIsRefused) {
  std::vector<uint8_t> b = Bytes(Header(MsgKind::kMsg));
  b[8] = 1;
  MsgHeader out;
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kBadFlags);
}

TEST(WireHeaderTest, DataWithoutItsFlagIsRefused) {
  std::vector<uint8_t> b = Bytes(Header(MsgKind::kMsg));
  b[16] = 1;
  MsgHeader out;
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kBadFlags);
}

TEST(WireHeaderTest, ReadRequestRoundTripsItsKeyAddressAndLength) {
  std::vector<uint8_t> b = Bytes(Header(MsgKind::kReadReq, 77));
  auto body = EncodeReadReq({.key = 0xfeedfacecafebeefull,
                             .addr = 0x7fff00001000ull,
                             .len = 1 << 20});
  b.insert(b.end(), body.begin(), body.end());
  MsgHeader out;
  ASSERT_EQ(DecodeHeader(b, &out), HeaderError::kNone);
  EXPECT_EQ(out.kind, MsgKind::kReadReq);
  EXPECT_EQ(out.tag, 77u);
  ReadReq r = DecodeReadReq(b);
  EXPECT_EQ(r.key, 0xfeedfacecafebeefull);
  EXPECT_EQ(r.addr, 0x7fff00001000ull);
  EXPECT_EQ(r.len, 1u << 20);
}

TEST(WireHeaderTest, ReadRequestOfTheWrongLengthIsRefused) {
  std::vector<uint8_t> b = Bytes(Header(MsgKind::kReadReq, 1));
  MsgHeader out;
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kShort);
  b.resize(kReadReqBytes + 1);
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kShort);
  b.resize(kReadReqBytes);
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kNone);
}

TEST(WireHeaderTest, AtomicRequestRoundTripsAndNeedsItsFixedBody) {
  std::vector<uint8_t> b = Bytes(Header(MsgKind::kAtomicReq, 8));
  MsgHeader out;
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kShort);
  auto body = EncodeAtomicReq({.key = 0x1122334455667788ull,
                               .addr = 0x99,
                               .count = 0x01020304,
                               .datatype = 7,
                               .op = 12,
                               .kind = 3});
  b.insert(b.end(), body.begin(), body.end());
  b.push_back(42);  // an operand
  ASSERT_EQ(DecodeHeader(b, &out), HeaderError::kNone);
  AtomicReq r = DecodeAtomicReq(b);
  EXPECT_EQ(r.key, 0x1122334455667788ull);
  EXPECT_EQ(r.addr, 0x99u);
  EXPECT_EQ(r.count, 0x01020304u);
  EXPECT_EQ(r.datatype, 7);
  EXPECT_EQ(r.op, 12);
  EXPECT_EQ(r.kind, 3);
  b[kAtomicReqBytes - 1] = 1;  // the reserved byte
  EXPECT_EQ(DecodeHeader(b, &out), HeaderError::kBadFlags);
}

TEST(WireHeaderTest, RmaResponseWithoutItsStatusIsRefused) {
  MsgHeader out;
  EXPECT_EQ(DecodeHeader(Bytes(Header(MsgKind::kRmaResp, 5)), &out),
            HeaderError::kBadFlags);
  MsgHeader h{.kind = MsgKind::kRmaResp, .has_data = true, .tag = 5, .data = 2};
  ASSERT_EQ(DecodeHeader(Bytes(h), &out), HeaderError::kNone);
  EXPECT_EQ(out.data, 2u);
}

TEST(WireHeaderTest, WriteCarriesItsRequestIdAndRemoteData) {
  MsgHeader h{.kind = MsgKind::kWrite, .has_data = true, .tag = 9, .data = 3};
  MsgHeader out;
  ASSERT_EQ(DecodeHeader(Bytes(h), &out), HeaderError::kNone);
  EXPECT_EQ(out.kind, MsgKind::kWrite);
  EXPECT_EQ(out.tag, 9u);
  EXPECT_EQ(out.data, 3u);
}

}  // namespace
}  // namespace braid::libfabric

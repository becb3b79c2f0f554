// Tests for the v1 frame format: exact byte layout, round trips with extreme
// field values, one crafted input per ParseError reason, multi-frame
// datagrams and the writers' size checks. Every parse runs over an
// exactly-sized heap copy so that an ASan build catches any overread.
#include "wire/frames.h"

#include <cstring>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace braid::wire {

// Lets gtest print ParseError by name.
void PrintTo(ParseError e, std::ostream* os) { *os << ParseErrorName(e); }

namespace {

using Bytes = std::vector<uint8_t>;

// Field offsets as the format documents them (docs/wire-format.md), written
// out independently of frames.cc so a layout change fails here.
constexpr size_t kOffVersion = 0;
constexpr size_t kOffType = 1;
constexpr size_t kOffFlags = 2;  // ctrl: ctrl type
constexpr size_t kOffDataPayloadLen = 6;
constexpr size_t kOffAckSackWords = 4;
constexpr size_t kOffSrcIncarnation = 8;

void Put16(Bytes& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v >> 8);
  b[off + 1] = static_cast<uint8_t>(v);
}
void Put64(Bytes& b, size_t off, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    b[off + i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}

// The result of reading a whole datagram. Owns the exactly-sized buffer the
// frames' payload/sack pointers alias.
struct Parsed {
  std::unique_ptr<uint8_t[]> buf;
  size_t size = 0;
  std::vector<Frame> frames;
  ParseError error = ParseError::kNone;
  bool next_after_end = false;  // what one more Next() returned
};

Parsed ParseAll(const Bytes& in) {
  Parsed r;
  r.size = in.size();
  r.buf.reset(new uint8_t[in.size()]);
  if (!in.empty()) std::memcpy(r.buf.get(), in.data(), in.size());
  FrameReader reader(absl::MakeConstSpan(r.buf.get(), in.size()));
  Frame f;
  while (reader.Next(&f)) {
    r.frames.push_back(f);
    if (r.frames.size() > in.size()) break;  // would be an endless loop
  }
  r.error = reader.error();
  r.next_after_end = reader.Next(&f);
  return r;
}

ParseError ErrorOf(const Bytes& in) {
  Parsed p = ParseAll(in);
  EXPECT_TRUE(p.frames.empty());
  return p.error;
}

DataHeader SampleData() {
  DataHeader h;
  h.flags = kDataFlagAckNow;
  h.path_id = 7;
  h.stream_id = 3;
  h.src_incarnation = 0x1111222233334444ULL;
  h.dst_incarnation = 0x5555666677778888ULL;
  h.psn = Psn(100);
  h.path_seq = PathSeq(5);
  h.msg_seq = MsgSeq(9);
  h.stream_seq = 2;
  h.msg_len = 1000;
  h.frag_offset = 0;
  return h;
}

AckHeader SampleAck() {
  AckHeader h;
  h.flags = kAckFlagEchoCe;
  h.echo_path_id = 4;
  h.src_incarnation = 0x5555666677778888ULL;
  h.dst_incarnation = 0x1111222233334444ULL;
  h.cum_psn = Psn(90);
  h.echo_path_seq = PathSeq(5);
  h.ack_delay_ns = 2500;
  h.credit_psn = Psn(4090);
  h.ce_count = 3;
  h.session = 12;
  return h;
}

CtrlFrame SampleCtrl() {
  CtrlFrame c;
  c.type = CtrlType::kSync;
  c.src_incarnation = 0x0123456789abcdefULL;
  c.dst_incarnation = 0xfedcba9876543210ULL;
  c.session = 12;
  c.value = 77;
  return c;
}

Bytes Pattern(size_t n, uint8_t seed = 0) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 31);
  return b;
}

Bytes EncodeData(const DataHeader& h, const Bytes& payload) {
  Bytes out(DataHeaderBytes(h.flags) + payload.size());
  EXPECT_EQ(WriteData(h, payload, absl::MakeSpan(out)), out.size());
  return out;
}

Bytes EncodeAck(const AckHeader& h, const std::vector<uint64_t>& sack) {
  Bytes out(AckFrameSize(sack.size()));
  EXPECT_EQ(WriteAck(h, sack, absl::MakeSpan(out)), out.size());
  return out;
}

Bytes EncodeCtrl(const CtrlFrame& c) {
  Bytes out(kCtrlFrameSize);
  EXPECT_EQ(WriteCtrl(c, absl::MakeSpan(out)), out.size());
  return out;
}

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

void ExpectDataEq(const DataHeader& want, const DataHeader& got) {
  EXPECT_EQ(got.flags, want.flags);
  EXPECT_EQ(got.path_id, want.path_id);
  EXPECT_EQ(got.stream_id, want.stream_id);
  EXPECT_EQ(got.src_incarnation, want.src_incarnation);
  EXPECT_EQ(got.dst_incarnation, want.dst_incarnation);
  EXPECT_EQ(got.psn, want.psn);
  EXPECT_EQ(got.path_seq, want.path_seq);
  EXPECT_EQ(got.msg_seq, want.msg_seq);
  EXPECT_EQ(got.stream_seq, want.stream_seq);
  EXPECT_EQ(got.msg_len, want.msg_len);
  EXPECT_EQ(got.frag_offset, want.frag_offset);
  if (want.flags & kDataFlagPlaced) {
    EXPECT_EQ(got.placement.key, want.placement.key);
    EXPECT_EQ(got.placement.offset, want.placement.offset);
    EXPECT_EQ(got.placement.head_len, want.placement.head_len);
  }
}

void ExpectAckEq(const AckHeader& want, const AckHeader& got) {
  EXPECT_EQ(got.flags, want.flags);
  EXPECT_EQ(got.echo_path_id, want.echo_path_id);
  EXPECT_EQ(got.src_incarnation, want.src_incarnation);
  EXPECT_EQ(got.dst_incarnation, want.dst_incarnation);
  EXPECT_EQ(got.cum_psn, want.cum_psn);
  EXPECT_EQ(got.echo_path_seq, want.echo_path_seq);
  EXPECT_EQ(got.ack_delay_ns, want.ack_delay_ns);
  EXPECT_EQ(got.credit_psn, want.credit_psn);
  EXPECT_EQ(got.ce_count, want.ce_count);
  EXPECT_EQ(got.session, want.session);
}

// ---------------------------------------------------------------- layout

static_assert(kDataHeaderSize == 48);
static_assert(kPlacementExtSize == 24);
static_assert(kDataFlagPlaced == 0x04);
static_assert(DataHeaderBytes(0) == 48);
static_assert(DataHeaderBytes(kDataFlagPlaced) == 72);
static_assert(kAckHeaderSize == 48);
static_assert(kCtrlFrameSize == 32);
static_assert(kMaxSackWords == 64);
static_assert(AckFrameSize(0) == 48);
static_assert(AckFrameSize(kMaxSackWords) == 560);
static_assert(kVersion == 1);
static_assert(kPreambleSize == 4);
static_assert(kPreambleMagic == 0xb7);
static_assert(static_cast<uint8_t>(FrameType::kData) == 1);
static_assert(static_cast<uint8_t>(FrameType::kAck) == 2);
static_assert(static_cast<uint8_t>(FrameType::kCtrl) == 3);

TEST(FrameLayoutTest, DataFrameBytesAreBigEndianAtDocumentedOffsets) {
  DataHeader h;
  h.flags = 0x03;
  h.path_id = 0x04;
  h.stream_id = 0x0506;
  h.src_incarnation = 0x0102030405060708ULL;
  h.dst_incarnation = 0x1112131415161718ULL;
  h.psn = Psn(0x21222324);
  h.path_seq = PathSeq(0x25262728);
  h.msg_seq = MsgSeq(0x31323334);
  h.stream_seq = 0x35363738;
  h.msg_len = 0x10;
  h.frag_offset = 0x0e;
  const Bytes want = {
      0x01, 0x01, 0x03, 0x04, 0x05, 0x06, 0x00, 0x02,  // ver type flg path
      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // src incarnation
      0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,  // dst incarnation
      0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,  // psn, path seq
      0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38,  // msg seq, stream seq
      0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x0e,  // msg len, frag offset
      0xaa, 0xbb};                                     // payload
  EXPECT_EQ(EncodeData(h, {0xaa, 0xbb}), want);
}

TEST(FrameLayoutTest, PlacementExtensionFollowsTheDataHeader) {
  DataHeader h = SampleData();
  h.flags = kDataFlagPlaced;
  h.placement.key = 0x4142434445464748ULL;
  h.placement.offset = 0x5152535455565758ULL;
  h.placement.head_len = 0x0a;
  const Bytes b = EncodeData(h, {0xaa, 0xbb});
  DataHeader plain = h;
  plain.flags = 0;
  Bytes want = EncodeData(plain, {});  // the same 48-byte header
  want[kOffFlags] = kDataFlagPlaced;
  want[7] = 0x02;  // payload length (bytes 6..7): the 2 payload bytes
  const Bytes ext = {
      0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,  // placement key
      0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,  // placement offset
      0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00,  // head len, reserved
      0xaa, 0xbb};                                     // payload
  want.insert(want.end(), ext.begin(), ext.end());
  EXPECT_EQ(b, want);
  Parsed p = ParseAll(b);
  ASSERT_EQ(p.error, ParseError::kNone);
  ASSERT_EQ(p.frames.size(), 1u);
  ExpectDataEq(h, p.frames[0].data);
  EXPECT_EQ(p.frames[0].payload, p.buf.get() + 72);
}

TEST(FrameLayoutTest, UnplacedFrameCarriesNoExtensionWhateverTheStructSays) {
  DataHeader h = SampleData();
  h.placement.key = 99;
  h.placement.head_len = 5;
  const Bytes b = EncodeData(h, Pattern(3));
  EXPECT_EQ(b.size(), kDataHeaderSize + 3);
  Parsed p = ParseAll(b);
  ASSERT_EQ(p.error, ParseError::kNone);
  EXPECT_EQ(p.frames[0].data.placement, PlacementExt());
}

TEST(FrameLayoutTest, AckFrameBytesAreBigEndianAtDocumentedOffsets) {
  AckHeader h;
  h.flags = 0x03;
  h.echo_path_id = 0x09;
  h.src_incarnation = 0x0102030405060708ULL;
  h.dst_incarnation = 0x1112131415161718ULL;
  h.cum_psn = Psn(0x21222324);
  h.echo_path_seq = PathSeq(0x25262728);
  h.ack_delay_ns = 0x31323334;
  h.credit_psn = Psn(0x35363738);
  h.ce_count = 0x393a3b3c;
  h.session = 0x3d3e3f40;
  const Bytes want = {0x01, 0x02, 0x03, 0x09,
                      0x00, 0x01, 0x00, 0x00,  // ver type flg path words
                      0x01, 0x02, 0x03, 0x04,
                      0x05, 0x06, 0x07, 0x08,  // src incarnation
                      0x11, 0x12, 0x13, 0x14,
                      0x15, 0x16, 0x17, 0x18,  // dst incarnation
                      0x21, 0x22, 0x23, 0x24,
                      0x25, 0x26, 0x27, 0x28,  // cum psn, echo path seq
                      0x31, 0x32, 0x33, 0x34,
                      0x35, 0x36, 0x37, 0x38,  // ack delay, credit psn
                      0x39, 0x3a, 0x3b, 0x3c,
                      0x3d, 0x3e, 0x3f, 0x40,  // ce count, session
                      0x41, 0x42, 0x43, 0x44,
                      0x45, 0x46, 0x47, 0x48};  // sack word 0
  EXPECT_EQ(EncodeAck(h, {0x4142434445464748ULL}), want);
}

TEST(FrameLayoutTest, CtrlFrameBytesAreBigEndianAtDocumentedOffsets) {
  CtrlFrame c;
  c.type = CtrlType::kStale;
  c.src_incarnation = 0x0102030405060708ULL;
  c.dst_incarnation = 0x1112131415161718ULL;
  c.session = 0x31323334;
  c.value = 0x21222324;
  const Bytes want = {
      0x01, 0x03, 0x02, 0x00, 0x31, 0x32, 0x33, 0x34,   // ver type ctrl - sess
      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,   // src incarnation
      0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,   // dst incarnation
      0x21, 0x22, 0x23, 0x24, 0x00, 0x00, 0x00, 0x00};  // value, reserved
  EXPECT_EQ(EncodeCtrl(c), want);
}

// ------------------------------------------------------------ round trips

// A header copied and patched for the next fragment of a run is the header
// WriteDataHeader writes for that fragment (placed frames too).
TEST(FrameLayoutTest, PatchedHeaderIsTheHeaderOfTheNextFragment) {
  for (const bool placed : {false, true}) {
    DataHeader h = SampleData();
    if (placed) {
      h.flags |= kDataFlagPlaced;
      h.placement = {0x1122334455667788ull, 0x99aabbccddeeff00ull, 77};
    }
    Bytes first(DataHeaderBytes(h.flags));
    ASSERT_EQ(WriteDataHeader(h, 1400, absl::MakeSpan(first)), first.size());
    DataHeader next = h;
    next.psn = Psn(0xfffffffeu);  // the fields wrap independently
    next.path_seq = PathSeq(0x01020304u);
    next.frag_offset = 0x8000abcdu;
    Bytes want(first.size());
    ASSERT_EQ(WriteDataHeader(next, 1400, absl::MakeSpan(want)), want.size());
    Bytes patched = first;
    PatchDataHeader(patched.data(), next.psn, next.path_seq, next.frag_offset);
    EXPECT_EQ(patched, want) << (placed ? "placed" : "unplaced");
  }
}

// A flag added after the frame was written is the frame written with it:
// only the flags byte changes.
TEST(FrameLayoutTest, AddedFlagIsTheFrameWrittenWithThatFlag) {
  for (const bool placed : {false, true}) {
    DataHeader h = SampleData();
    h.flags = placed ? kDataFlagPlaced : 0;
    Bytes written(DataHeaderBytes(h.flags));
    ASSERT_EQ(WriteDataHeader(h, 700, absl::MakeSpan(written)), written.size());
    Bytes added = written;
    AddDataFlags(added.data(), kDataFlagAckNow);
    DataHeader with = h;
    with.flags |= kDataFlagAckNow;
    Bytes want(written.size());
    ASSERT_EQ(WriteDataHeader(with, 700, absl::MakeSpan(want)), want.size());
    EXPECT_EQ(added, want) << (placed ? "placed" : "unplaced");
    EXPECT_EQ(added[kOffFlags], with.flags);
    AddDataFlags(added.data(), kDataFlagAckNow);  // adding twice: no change
    EXPECT_EQ(added, want);
  }
}

// The headers of a run are, frame by frame, what WriteDataHeader writes for
// each fragment, each behind a copy of the bytes in front of the first (a
// preamble alone, or a preamble and a control frame), placed frames too.
TEST(FrameLayoutTest, RunHeadersAreTheHeadersOfEachFragmentBehindTheLead) {
  constexpr uint32_t kCount = 5;
  constexpr size_t kStride = 200;
  constexpr uint32_t kPayload = 1000;
  for (const bool placed : {false, true}) {
    for (const size_t lead : {kPreambleSize, kPreambleSize + kCtrlFrameSize}) {
      DataHeader h = SampleData();
      h.flags = placed ? kDataFlagPlaced : 0;
      h.placement = {0x1122334455667788ull, 0x99aabbccddeeff00ull, 77};
      h.psn = Psn(0xfffffffeu);  // wraps inside the run
      h.msg_len = 1u << 20;
      h.frag_offset = 3000;
      const size_t hdr = DataHeaderBytes(h.flags);
      Bytes slots(kCount * kStride, 0xee);
      for (size_t i = 0; i < lead; ++i) slots[i] = static_cast<uint8_t>(i + 1);
      ASSERT_EQ(WriteDataHeaderRun(h, kPayload, kCount,
                                   absl::MakeSpan(slots).subspan(lead, hdr),
                                   kStride, lead),
                hdr);
      for (uint32_t i = 0; i < kCount; ++i) {
        const uint8_t* slot = slots.data() + i * kStride;
        DataHeader want = h;
        want.psn = h.psn + i;
        want.path_seq = h.path_seq + i;
        want.frag_offset = h.frag_offset + i * kPayload;
        Bytes want_bytes(hdr);
        ASSERT_EQ(WriteDataHeader(want, kPayload, absl::MakeSpan(want_bytes)),
                  hdr);
        EXPECT_EQ(Bytes(slot + lead, slot + lead + hdr), want_bytes)
            << "frame " << i << (placed ? " placed" : "") << " lead " << lead;
        EXPECT_EQ(Bytes(slot, slot + lead),
                  Bytes(slots.begin(), slots.begin() + lead))
            << "frame " << i;
        EXPECT_EQ(slot[lead + hdr], 0xee) << "the payload is the caller's";
      }
    }
  }
}

// A run of one frame is WriteDataHeader alone: nothing before or after the
// header is touched, and a too-small first frame writes nothing.
TEST(FrameLayoutTest, RunOfOneIsTheHeaderAloneAndTooSmallWritesNothing) {
  const DataHeader h = SampleData();
  Bytes out(kDataHeaderSize + 8, 0xee);
  ASSERT_EQ(
      WriteDataHeaderRun(h, 10, 1,
                         absl::MakeSpan(out).subspan(4, kDataHeaderSize), 0, 4),
      kDataHeaderSize);
  Bytes want(kDataHeaderSize);
  ASSERT_EQ(WriteDataHeader(h, 10, absl::MakeSpan(want)), kDataHeaderSize);
  EXPECT_EQ(Bytes(out.begin() + 4, out.begin() + 4 + kDataHeaderSize), want);
  EXPECT_EQ(out[3], 0xee);
  EXPECT_EQ(out[4 + kDataHeaderSize], 0xee);
  Bytes small(kDataHeaderSize - 1, 0xee);
  EXPECT_EQ(WriteDataHeaderRun(h, 10, 1, absl::MakeSpan(small), 0, 0), 0u);
  EXPECT_EQ(small, Bytes(kDataHeaderSize - 1, 0xee));
}

TEST(FrameRoundTripTest, DataFrameWithMinimalFieldsRoundTrips) {
  DataHeader h;  // everything zero except the mandatory incarnation
  h.src_incarnation = 1;
  Parsed p = ParseAll(EncodeData(h, {}));
  ASSERT_EQ(p.error, ParseError::kNone);
  ASSERT_EQ(p.frames.size(), 1u);
  EXPECT_EQ(p.frames[0].type, FrameType::kData);
  ExpectDataEq(h, p.frames[0].data);
  EXPECT_EQ(p.frames[0].data.payload_len, 0);
}

TEST(FrameRoundTripTest, DataFrameWithMaximalFieldsRoundTrips) {
  DataHeader h;
  h.flags = kDataFlagsKnown;
  h.path_id = 0xff;
  h.stream_id = 0xffff;
  h.src_incarnation = ~uint64_t{0};
  h.dst_incarnation = ~uint64_t{0};
  h.psn = Psn(0xffffffff);
  h.path_seq = PathSeq(0xffffffff);
  h.msg_seq = MsgSeq(0xffffffff);
  h.stream_seq = 0xffffffff;
  h.msg_len = 0xffffffff;
  h.frag_offset = 0xffffffff - 0xffff;  // the last 65535 bytes
  const Bytes payload = Pattern(0xffff, 5);
  Parsed p = ParseAll(EncodeData(h, payload));
  ASSERT_EQ(p.error, ParseError::kNone);
  ASSERT_EQ(p.frames.size(), 1u);
  ExpectDataEq(h, p.frames[0].data);
  ASSERT_EQ(p.frames[0].data.payload_len, 0xffff);
  EXPECT_EQ(p.frames[0].payload,
            p.buf.get() + kDataHeaderSize + kPlacementExtSize);
  EXPECT_EQ(0, std::memcmp(p.frames[0].payload, payload.data(), 0xffff));
}

TEST(FrameRoundTripTest, DataFrameEveryKnownFlagCombinationRoundTrips) {
  for (uint8_t flags = 0; flags <= kDataFlagsKnown; ++flags) {
    DataHeader h = SampleData();
    h.flags = flags;
    Parsed p = ParseAll(EncodeData(h, Pattern(10)));
    ASSERT_EQ(p.error, ParseError::kNone) << int{flags};
    ASSERT_EQ(p.frames.size(), 1u);
    EXPECT_EQ(p.frames[0].data.flags, flags);
  }
}

TEST(FrameRoundTripTest, SingleByteFragmentAtTheEndOfAMessageRoundTrips) {
  DataHeader h = SampleData();
  h.msg_len = 1000;
  h.frag_offset = 999;
  Parsed p = ParseAll(EncodeData(h, {0x5a}));
  ASSERT_EQ(p.error, ParseError::kNone);
  ASSERT_EQ(p.frames.size(), 1u);
  ExpectDataEq(h, p.frames[0].data);
  EXPECT_EQ(p.frames[0].payload[0], 0x5a);
}

TEST(FrameRoundTripTest, WriteDataTakesPayloadLenFromThePayloadSpan) {
  DataHeader h = SampleData();
  h.payload_len = 999;  // ignored by the writer
  Parsed p = ParseAll(EncodeData(h, Pattern(3)));
  ASSERT_EQ(p.frames.size(), 1u);
  EXPECT_EQ(p.frames[0].data.payload_len, 3);
}

// A header written alone, with the payload appended after it (or sent as a
// separate piece), is byte for byte what WriteData produces.
TEST(FrameRoundTripTest, WriteDataHeaderPlusPayloadEqualsWriteData) {
  for (uint8_t flags : {uint8_t{0}, kDataFlagPlaced}) {
    DataHeader h = SampleData();
    h.flags = flags;
    const std::vector<uint8_t> payload = Pattern(700);
    std::vector<uint8_t> whole(DataHeaderBytes(flags) + payload.size());
    ASSERT_EQ(WriteData(h, payload, absl::MakeSpan(whole)), whole.size());
    std::vector<uint8_t> split(DataHeaderBytes(flags));
    ASSERT_EQ(WriteDataHeader(h, payload.size(), absl::MakeSpan(split)),
              split.size());
    split.insert(split.end(), payload.begin(), payload.end());
    EXPECT_EQ(split, whole) << "flags " << int{flags};
  }
  std::vector<uint8_t> small(10);
  EXPECT_EQ(WriteDataHeader(SampleData(), 5, absl::MakeSpan(small)), 0u);
  std::vector<uint8_t> room(kDataHeaderSize);
  EXPECT_EQ(WriteDataHeader(SampleData(), 0x10000, absl::MakeSpan(room)), 0u);
}

TEST(FrameRoundTripTest, AckFrameWithoutSackRoundTrips) {
  AckHeader h;
  h.src_incarnation = 1;
  Parsed p = ParseAll(EncodeAck(h, {}));
  ASSERT_EQ(p.error, ParseError::kNone);
  ASSERT_EQ(p.frames.size(), 1u);
  EXPECT_EQ(p.frames[0].type, FrameType::kAck);
  ExpectAckEq(h, p.frames[0].ack);
  EXPECT_EQ(p.frames[0].ack.sack_words, 0);
}

TEST(FrameRoundTripTest, AckFrameWithMaximalFieldsAndFullSackRoundTrips) {
  AckHeader h;
  h.flags = kAckFlagsKnown;
  h.echo_path_id = 0xff;
  h.src_incarnation = ~uint64_t{0};
  h.dst_incarnation = ~uint64_t{0};
  h.cum_psn = Psn(0xffffffff);
  h.echo_path_seq = PathSeq(0xffffffff);
  h.ack_delay_ns = 0xffffffff;
  h.credit_psn = Psn(0xffffffff);
  h.ce_count = 0xffffffff;
  h.session = 0xffffffff;
  std::vector<uint64_t> sack(kMaxSackWords);
  for (size_t i = 0; i < sack.size(); ++i) {
    sack[i] = i % 4 == 0   ? ~uint64_t{0}
              : i % 4 == 1 ? 0
              : i % 4 == 2 ? 0xaaaaaaaaaaaaaaaaULL
                           : 0x8000000000000001ULL;
  }
  Parsed p = ParseAll(EncodeAck(h, sack));
  ASSERT_EQ(p.error, ParseError::kNone);
  ASSERT_EQ(p.frames.size(), 1u);
  ExpectAckEq(h, p.frames[0].ack);
  ASSERT_EQ(p.frames[0].ack.sack_words, kMaxSackWords);
  EXPECT_EQ(p.frames[0].sack, p.buf.get() + kAckHeaderSize);
  for (size_t i = 0; i < sack.size(); ++i) {
    EXPECT_EQ(SackWord(p.frames[0].sack, i), sack[i]) << i;
  }
}

TEST(FrameRoundTripTest, AckEveryKnownFlagCombinationRoundTrips) {
  for (uint8_t flags = 0; flags <= kAckFlagsKnown; ++flags) {
    AckHeader h = SampleAck();
    h.flags = flags;
    Parsed p = ParseAll(EncodeAck(h, {1, 2}));
    ASSERT_EQ(p.error, ParseError::kNone) << int{flags};
    ASSERT_EQ(p.frames.size(), 1u);
    EXPECT_EQ(p.frames[0].ack.flags, flags);
  }
}

TEST(FrameRoundTripTest, WriteAckTakesSackWordsFromTheSackSpan) {
  AckHeader h = SampleAck();
  h.sack_words = 9;  // ignored by the writer
  Parsed p = ParseAll(EncodeAck(h, {7, 8}));
  ASSERT_EQ(p.frames.size(), 1u);
  EXPECT_EQ(p.frames[0].ack.sack_words, 2);
}

TEST(FrameRoundTripTest, SackWordDecodesBigEndianWords) {
  const uint8_t sack[16] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                            0x80, 0,    0,    0,    0,    0,    0,    0x01};
  EXPECT_EQ(SackWord(sack, 0), 0x0102030405060708ULL);
  EXPECT_EQ(SackWord(sack, 1), 0x8000000000000001ULL);
}

TEST(FrameRoundTripTest, CtrlFrameEveryTypeWithExtremeValuesRoundTrips) {
  for (CtrlType t : {CtrlType::kProbe, CtrlType::kStale, CtrlType::kSync,
                     CtrlType::kNeedSync}) {
    for (uint32_t value : {0u, 1u, 0xffffffffu}) {
      for (uint64_t dst : {uint64_t{0}, ~uint64_t{0}}) {
        CtrlFrame c;
        c.type = t;
        c.src_incarnation = ~uint64_t{0};
        c.dst_incarnation = dst;
        c.session = ~value;
        c.value = value;
        Parsed p = ParseAll(EncodeCtrl(c));
        ASSERT_EQ(p.error, ParseError::kNone);
        ASSERT_EQ(p.frames.size(), 1u);
        EXPECT_EQ(p.frames[0].type, FrameType::kCtrl);
        EXPECT_EQ(p.frames[0].ctrl.type, t);
        EXPECT_EQ(p.frames[0].ctrl.src_incarnation, ~uint64_t{0});
        EXPECT_EQ(p.frames[0].ctrl.dst_incarnation, dst);
        EXPECT_EQ(p.frames[0].ctrl.session, ~value);
        EXPECT_EQ(p.frames[0].ctrl.value, value);
      }
    }
  }
}

TEST(FrameRoundTripTest, UnknownDestinationIncarnationZeroIsAccepted) {
  DataHeader d = SampleData();
  d.dst_incarnation = 0;
  AckHeader a = SampleAck();
  a.dst_incarnation = 0;
  CtrlFrame c = SampleCtrl();
  c.dst_incarnation = 0;
  Parsed p = ParseAll(
      Concat({EncodeData(d, Pattern(4)), EncodeAck(a, {}), EncodeCtrl(c)}));
  EXPECT_EQ(p.error, ParseError::kNone);
  EXPECT_EQ(p.frames.size(), 3u);
}

// ------------------------------------------------------- datagram framing

TEST(FrameReaderTest, EmptyDatagramYieldsNoFrameAndNoError) {
  Parsed p = ParseAll({});
  EXPECT_TRUE(p.frames.empty());
  EXPECT_EQ(p.error, ParseError::kNone);
  EXPECT_FALSE(p.next_after_end);
}

TEST(FrameReaderTest, SeveralFramesInOneDatagramParseInOrder) {
  DataHeader d1 = SampleData();
  DataHeader d2 = SampleData();
  d2.psn = Psn(101);
  d2.msg_len = 0;  // an empty message: no payload at all
  d2.frag_offset = 0;
  AckHeader a = SampleAck();
  CtrlFrame c = SampleCtrl();
  const Bytes f1 = EncodeData(d1, Pattern(100, 1));
  const Bytes f2 = EncodeAck(a, {0xf0f0, 0x0f0f, 3});
  const Bytes f3 = EncodeCtrl(c);
  const Bytes f4 = EncodeData(d2, {});
  Parsed p = ParseAll(Concat({f1, f2, f3, f4}));
  ASSERT_EQ(p.error, ParseError::kNone);
  ASSERT_EQ(p.frames.size(), 4u);
  EXPECT_FALSE(p.next_after_end);

  EXPECT_EQ(p.frames[0].type, FrameType::kData);
  ExpectDataEq(d1, p.frames[0].data);
  EXPECT_EQ(p.frames[0].payload, p.buf.get() + kDataHeaderSize);
  EXPECT_EQ(0, std::memcmp(p.frames[0].payload, Pattern(100, 1).data(), 100));

  EXPECT_EQ(p.frames[1].type, FrameType::kAck);
  ExpectAckEq(a, p.frames[1].ack);
  EXPECT_EQ(p.frames[1].sack, p.buf.get() + f1.size() + kAckHeaderSize);
  EXPECT_EQ(SackWord(p.frames[1].sack, 0), 0xf0f0u);
  EXPECT_EQ(SackWord(p.frames[1].sack, 2), 3u);

  EXPECT_EQ(p.frames[2].type, FrameType::kCtrl);
  EXPECT_EQ(p.frames[2].ctrl.type, CtrlType::kSync);
  EXPECT_EQ(p.frames[2].ctrl.value, 77u);

  EXPECT_EQ(p.frames[3].type, FrameType::kData);
  ExpectDataEq(d2, p.frames[3].data);
  EXPECT_EQ(p.frames[3].data.payload_len, 0);
}

TEST(FrameReaderTest, BadFrameAfterGoodOneStopsTheReaderWithError) {
  Bytes bad_ack = EncodeAck(SampleAck(), {});
  bad_ack[kOffFlags] = 0x80;
  Parsed p = ParseAll(Concat({EncodeData(SampleData(), Pattern(8)), bad_ack,
                              EncodeCtrl(SampleCtrl())}));
  ASSERT_EQ(p.frames.size(), 1u);  // the ctrl frame after the bad one is lost
  EXPECT_EQ(p.frames[0].type, FrameType::kData);
  EXPECT_EQ(p.error, ParseError::kBadFlags);
  EXPECT_FALSE(p.next_after_end);  // the error is sticky
}

TEST(FrameReaderTest, TrailingPartialFrameIsTruncated) {
  Parsed p = ParseAll(Concat({EncodeCtrl(SampleCtrl()), {kVersion}}));
  EXPECT_EQ(p.frames.size(), 1u);
  EXPECT_EQ(p.error, ParseError::kTruncated);
}

TEST(FrameReaderTest, ZeroPaddingAfterTheLastFrameIsRejected) {
  Parsed p = ParseAll(Concat({EncodeCtrl(SampleCtrl()), Bytes(4, 0)}));
  EXPECT_EQ(p.frames.size(), 1u);
  EXPECT_EQ(p.error, ParseError::kBadVersion);
}

// ---------------------------------------------- one test per ParseError

TEST(FrameParseErrorTest, EveryTruncationOfEveryFrameTypeIsTruncated) {
  const Bytes frames[] = {EncodeData(SampleData(), Pattern(5)),
                          EncodeData(SampleData(), Pattern(300)),
                          EncodeAck(SampleAck(), {1, 2, 3}),
                          EncodeAck(SampleAck(), {}), EncodeCtrl(SampleCtrl())};
  for (const Bytes& full : frames) {
    ASSERT_EQ(ParseAll(full).error, ParseError::kNone);
    for (size_t len = 1; len < full.size(); ++len) {
      const Bytes cut(full.begin(), full.begin() + len);
      ASSERT_EQ(ErrorOf(cut), ParseError::kTruncated)
          << "type " << int{full[kOffType]} << " cut to " << len << " of "
          << full.size();
    }
  }
}

TEST(FrameParseErrorTest, DeclaredPayloadLongerThanDatagramIsTruncated) {
  Bytes b = EncodeData(SampleData(), Pattern(10));
  Put16(b, kOffDataPayloadLen, 11);
  EXPECT_EQ(ErrorOf(b), ParseError::kTruncated);
}

TEST(FrameParseErrorTest, DeclaredSackLongerThanDatagramIsTruncated) {
  Bytes b = EncodeAck(SampleAck(), {1, 2});
  Put16(b, kOffAckSackWords, 3);
  EXPECT_EQ(ErrorOf(b), ParseError::kTruncated);
}

TEST(FrameParseErrorTest, AnyOtherVersionIsBadVersion) {
  const Bytes frames[] = {EncodeData(SampleData(), Pattern(5)),
                          EncodeAck(SampleAck(), {1}),
                          EncodeCtrl(SampleCtrl())};
  for (const Bytes& good : frames) {
    for (int v : {0x00, 0x02, 0x11, 0x80, 0xff}) {
      Bytes b = good;
      b[kOffVersion] = static_cast<uint8_t>(v);
      EXPECT_EQ(ErrorOf(b), ParseError::kBadVersion) << v;
    }
  }
}

TEST(FrameParseErrorTest, UnknownFrameTypeIsBadType) {
  for (int t : {0x00, 0x04, 0x05, 0x7f, 0x80, 0xff}) {
    Bytes b = EncodeData(SampleData(), Pattern(5));
    b[kOffType] = static_cast<uint8_t>(t);
    EXPECT_EQ(ErrorOf(b), ParseError::kBadType) << t;
  }
}

TEST(FrameParseErrorTest, TypeIsJudgedFromTheFirstTwoBytesAlone) {
  EXPECT_EQ(ErrorOf({kVersion, 0x09}), ParseError::kBadType);
  EXPECT_EQ(ErrorOf({0x07, 0x01}), ParseError::kBadVersion);
  EXPECT_EQ(ErrorOf({0x07}), ParseError::kTruncated);
}

TEST(FrameParseErrorTest, UnknownDataFlagBitsAreBadFlags) {
  for (int bit = 0; bit < 8; ++bit) {
    const uint8_t flag = static_cast<uint8_t>(1u << bit);
    if (flag & kDataFlagsKnown) continue;
    Bytes b = EncodeData(SampleData(), Pattern(5));
    b[kOffFlags] = static_cast<uint8_t>(flag | kDataFlagAckNow);
    EXPECT_EQ(ErrorOf(b), ParseError::kBadFlags) << bit;
  }
}

TEST(FrameParseErrorTest, UnknownAckFlagBitsAreBadFlags) {
  for (int bit = 0; bit < 8; ++bit) {
    const uint8_t flag = static_cast<uint8_t>(1u << bit);
    if (flag & kAckFlagsKnown) continue;
    Bytes b = EncodeAck(SampleAck(), {});
    b[kOffFlags] = flag;
    EXPECT_EQ(ErrorOf(b), ParseError::kBadFlags) << bit;
  }
}

TEST(FrameParseErrorTest, EveryKnownAckFlagParses) {
  for (uint8_t flag : {kAckFlagNak, kAckFlagEchoCe, kAckFlagEchoDup}) {
    AckHeader h = SampleAck();
    h.flags = flag;
    const Bytes b = EncodeAck(h, {});
    const Parsed p = ParseAll(b);
    EXPECT_EQ(p.error, ParseError::kNone) << int{flag};
    EXPECT_EQ(p.frames.size(), 1u);
    EXPECT_EQ(b[kOffFlags], flag);
  }
}

TEST(FrameParseErrorTest, NonZeroAckReservedByteIsReservedNonZero) {
  for (size_t off : {6, 7}) {
    for (uint8_t v : {0x01, 0x80}) {
      Bytes b = EncodeAck(SampleAck(), {5});
      b[off] = v;
      EXPECT_EQ(ErrorOf(b), ParseError::kReservedNonZero) << off;
    }
  }
}

TEST(FrameParseErrorTest, NonZeroCtrlReservedByteIsReservedNonZero) {
  for (size_t off : {3, 28, 29, 30, 31}) {
    for (uint8_t v : {0x01, 0x80}) {
      Bytes b = EncodeCtrl(SampleCtrl());
      b[off] = v;
      EXPECT_EQ(ErrorOf(b), ParseError::kReservedNonZero) << off;
    }
  }
}

TEST(FrameParseErrorTest, ZeroSourceIncarnationIsRejectedInEveryFrameType) {
  DataHeader d = SampleData();
  d.src_incarnation = 0;
  AckHeader a = SampleAck();
  a.src_incarnation = 0;
  CtrlFrame c = SampleCtrl();
  c.src_incarnation = 0;
  EXPECT_EQ(ErrorOf(EncodeData(d, Pattern(5))), ParseError::kZeroIncarnation);
  EXPECT_EQ(ErrorOf(EncodeAck(a, {1})), ParseError::kZeroIncarnation);
  EXPECT_EQ(ErrorOf(EncodeCtrl(c)), ParseError::kZeroIncarnation);
}

TEST(FrameParseErrorTest, SourceIncarnationWithOnlyTheLowBitSetIsAccepted) {
  Bytes b = EncodeCtrl(SampleCtrl());
  Put64(b, kOffSrcIncarnation, 1);
  EXPECT_EQ(ParseAll(b).error, ParseError::kNone);
}

TEST(FrameParseErrorTest, FragmentEndingPastTheMessageIsFragmentBounds) {
  DataHeader h = SampleData();
  h.msg_len = 100;
  h.frag_offset = 91;  // 91 + 10 = 101
  EXPECT_EQ(ErrorOf(EncodeData(h, Pattern(10))), ParseError::kFragmentBounds);
  h.frag_offset = 100;  // starts at the end
  EXPECT_EQ(ErrorOf(EncodeData(h, Pattern(1))), ParseError::kFragmentBounds);
  h.frag_offset = 90;  // ends exactly at the end: fine
  EXPECT_EQ(ParseAll(EncodeData(h, Pattern(10))).error, ParseError::kNone);
}

TEST(FrameParseErrorTest, FragmentWhoseEndOverflows32BitsIsFragmentBounds) {
  // In 32-bit arithmetic 0xfffffff0 + 0x20 wraps to 0x10 <= msg_len.
  DataHeader h = SampleData();
  h.msg_len = 0xffffffff;
  h.frag_offset = 0xfffffff0;
  EXPECT_EQ(ErrorOf(EncodeData(h, Pattern(0x20))), ParseError::kFragmentBounds);
  h.frag_offset = 0xffffffff;
  EXPECT_EQ(ErrorOf(EncodeData(h, Pattern(1))), ParseError::kFragmentBounds);
  h.msg_len = 0x10;
  h.frag_offset = 0xffffffff;  // wraps to exactly 0x10 with 0x11 bytes
  EXPECT_EQ(ErrorOf(EncodeData(h, Pattern(0x11))), ParseError::kFragmentBounds);
}

TEST(FrameParseErrorTest, EmptyFragmentOfANonEmptyMessageIsEmptyFragment) {
  DataHeader h = SampleData();
  h.msg_len = 1;
  h.frag_offset = 0;
  EXPECT_EQ(ErrorOf(EncodeData(h, {})), ParseError::kEmptyFragment);
  h.msg_len = 0xffffffff;
  h.frag_offset = 0xffffffff;
  EXPECT_EQ(ErrorOf(EncodeData(h, {})), ParseError::kEmptyFragment);
}

TEST(FrameParseErrorTest, EmptyMessageMustHaveOffsetZero) {
  DataHeader h = SampleData();
  h.msg_len = 0;
  h.frag_offset = 0;
  EXPECT_EQ(ParseAll(EncodeData(h, {})).error, ParseError::kNone);
  h.frag_offset = 5;
  EXPECT_EQ(ErrorOf(EncodeData(h, {})), ParseError::kFragmentBounds);
}

TEST(FrameParseErrorTest, MoreThanMaxSackWordsIsSackTooLong) {
  // 17 words, all present in the datagram.
  Bytes b = EncodeAck(SampleAck(), std::vector<uint64_t>(kMaxSackWords, 1));
  b.resize(AckFrameSize(kMaxSackWords + 1), 0xff);
  Put16(b, kOffAckSackWords, kMaxSackWords + 1);
  EXPECT_EQ(ErrorOf(b), ParseError::kSackTooLong);
  // A huge count is rejected before the length is looked at.
  Bytes h = EncodeAck(SampleAck(), {});
  Put16(h, kOffAckSackWords, 0xffff);
  EXPECT_EQ(ErrorOf(h), ParseError::kSackTooLong);
}

TEST(FrameParseErrorTest, UnknownCtrlTypeIsBadCtrlType) {
  for (int t : {0x00, 0x07, 0x7f, 0xff}) {
    Bytes b = EncodeCtrl(SampleCtrl());
    b[kOffFlags] = static_cast<uint8_t>(t);
    EXPECT_EQ(ErrorOf(b), ParseError::kBadCtrlType) << t;
  }
}

TEST(FrameRoundTripTest, ChallengeFramesCarryKindAndNonce) {
  for (CtrlType t : {CtrlType::kChallenge, CtrlType::kChallengeReply}) {
    for (uint64_t nonce : {uint64_t{0}, uint64_t{1}, ~uint64_t{0},
                           uint64_t{0x0123456789abcdef}}) {
      CtrlFrame c;
      c.type = t;
      c.src_incarnation = 7;
      c.dst_incarnation = 9;
      c.kind = ChallengeKind::kIncarnation;
      c.nonce = nonce;
      Parsed p = ParseAll(EncodeCtrl(c));
      ASSERT_EQ(p.error, ParseError::kNone);
      ASSERT_EQ(p.frames.size(), 1u);
      EXPECT_EQ(p.frames[0].ctrl.type, t);
      EXPECT_EQ(p.frames[0].ctrl.kind, ChallengeKind::kIncarnation);
      EXPECT_EQ(p.frames[0].ctrl.nonce, nonce);
      EXPECT_EQ(p.frames[0].ctrl.src_incarnation, 7u);
      EXPECT_EQ(p.frames[0].ctrl.dst_incarnation, 9u);
    }
  }
}

TEST(FrameParseErrorTest, ChallengeWithUnknownKindOrSessionIsRejected) {
  CtrlFrame c;
  c.type = CtrlType::kChallenge;
  c.src_incarnation = 7;
  c.dst_incarnation = 9;
  c.nonce = 42;
  for (int kind : {0, 3, 0xff}) {
    Bytes b = EncodeCtrl(c);
    b[3] = static_cast<uint8_t>(kind);
    EXPECT_EQ(ErrorOf(b), ParseError::kBadCtrlType) << kind;
  }
  Bytes b = EncodeCtrl(c);
  b[7] = 1;  // the session field is reserved in a challenge
  EXPECT_EQ(ErrorOf(b), ParseError::kReservedNonZero);
}

DataHeader SamplePlaced() {
  DataHeader h = SampleData();
  h.flags |= kDataFlagPlaced;
  h.placement.key = 0xabcdef;
  h.placement.offset = 0x1000;
  h.placement.head_len = 40;
  return h;
}

TEST(FrameParseErrorTest, TruncatedPlacementExtensionIsBadPlacement) {
  const Bytes full = EncodeData(SamplePlaced(), Pattern(20));
  ASSERT_EQ(ParseAll(full).error, ParseError::kNone);
  for (size_t len = 1; len < full.size(); ++len) {
    const Bytes cut(full.begin(), full.begin() + len);
    const ParseError want =
        len >= kDataHeaderSize && len < kDataHeaderSize + kPlacementExtSize
            ? ParseError::kBadPlacement
            : ParseError::kTruncated;
    ASSERT_EQ(ErrorOf(cut), want) << "cut to " << len;
  }
}

TEST(FrameParseErrorTest, NonZeroPlacementReservedBytesAreBadPlacement) {
  for (size_t i = 68; i < 72; ++i) {
    Bytes b = EncodeData(SamplePlaced(), Pattern(5));
    b[i] = 1;
    EXPECT_EQ(ErrorOf(b), ParseError::kBadPlacement) << i;
  }
}

TEST(FrameParseErrorTest, HeadLongerThanTheMessageIsBadPlacement) {
  DataHeader h = SamplePlaced();
  h.placement.head_len = h.msg_len;  // the whole message as head: fine
  EXPECT_EQ(ParseAll(EncodeData(h, Pattern(5))).error, ParseError::kNone);
  h.placement.head_len = h.msg_len + 1;
  EXPECT_EQ(ErrorOf(EncodeData(h, Pattern(5))), ParseError::kBadPlacement);
}

TEST(FrameParseErrorTest, PlacementRangeThatWrapsIsBadPlacement) {
  DataHeader h = SamplePlaced();
  const uint64_t placed = h.msg_len - h.placement.head_len;
  h.placement.offset = ~uint64_t{0} - placed;  // ends at 2^64 - 1: fine
  EXPECT_EQ(ParseAll(EncodeData(h, Pattern(5))).error, ParseError::kNone);
  h.placement.offset += 1;  // ends at 2^64: wraps
  EXPECT_EQ(ErrorOf(EncodeData(h, Pattern(5))), ParseError::kBadPlacement);
}

TEST(FrameParseErrorTest, EveryReasonHasADistinctStableName) {
  const char* const want[] = {"none",
                              "truncated",
                              "bad_version",
                              "bad_type",
                              "bad_flags",
                              "reserved_nonzero",
                              "zero_incarnation",
                              "fragment_bounds",
                              "empty_fragment",
                              "sack_too_long",
                              "bad_ctrl_type",
                              "bad_preamble",
                              "bad_placement"};
  ASSERT_EQ(std::size(want), static_cast<size_t>(ParseError::kCount));
  std::set<std::string> seen;
  for (size_t i = 0; i < std::size(want); ++i) {
    const std::string name = ParseErrorName(static_cast<ParseError>(i));
    EXPECT_EQ(name, want[i]);
    EXPECT_TRUE(seen.insert(name).second) << name;
  }
  EXPECT_STREQ(ParseErrorName(ParseError::kCount), "unknown");
}

// -------------------------------------------------------------- preamble

// Parses the preamble of an exactly-sized copy of `in`.
uint16_t PreamblePort(const Bytes& in, ParseError* error) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[in.size()]);
  if (!in.empty()) std::memcpy(buf.get(), in.data(), in.size());
  *error = ParseError::kCount;  // must be overwritten
  return ParsePreamble(absl::MakeConstSpan(buf.get(), in.size()), error);
}

TEST(PreambleTest, BytesAreMagicVersionAndBigEndianPort) {
  Bytes out(kPreambleSize);
  ASSERT_EQ(WritePreamble(0x1234, absl::MakeSpan(out)), kPreambleSize);
  EXPECT_EQ(out, (Bytes{0xb7, 0x01, 0x12, 0x34}));
}

TEST(PreambleTest, EveryNonZeroPortRoundTrips) {
  for (uint32_t port = 1; port <= 0xffff; ++port) {
    Bytes out(kPreambleSize);
    ASSERT_EQ(WritePreamble(static_cast<uint16_t>(port), absl::MakeSpan(out)),
              kPreambleSize);
    ParseError e;
    ASSERT_EQ(PreamblePort(out, &e), port);
    ASSERT_EQ(e, ParseError::kNone);
  }
}

TEST(PreambleTest, FramesFollowThePreamble) {
  Bytes d(kPreambleSize);
  WritePreamble(4791, absl::MakeSpan(d));
  d = Concat({d, EncodeCtrl(SampleCtrl()), EncodeAck(SampleAck(), {1})});
  ParseError e;
  EXPECT_EQ(PreamblePort(d, &e), 4791);
  EXPECT_EQ(e, ParseError::kNone);
  Parsed p = ParseAll(Bytes(d.begin() + kPreambleSize, d.end()));
  EXPECT_EQ(p.error, ParseError::kNone);
  EXPECT_EQ(p.frames.size(), 2u);
}

TEST(PreambleTest, ShorterThanFourBytesIsTruncated) {
  const Bytes full = {0xb7, 0x01, 0x12, 0x34};
  for (size_t len = 0; len < kPreambleSize; ++len) {
    ParseError e;
    EXPECT_EQ(PreamblePort(Bytes(full.begin(), full.begin() + len), &e), 0)
        << len;
    EXPECT_EQ(e, ParseError::kTruncated) << len;
  }
}

TEST(PreambleTest, WrongMagicVersionOrPortZeroIsBadPreamble) {
  const Bytes cases[] = {
      {0xb6, 0x01, 0x12, 0x34},  // magic
      {0x00, 0x01, 0x12, 0x34},  // magic
      {0x01, 0x01, 0x12, 0x34},  // a bare frame header, no preamble
      {0xb7, 0x00, 0x12, 0x34},  // version
      {0xb7, 0x02, 0x12, 0x34},  // version
      {0xb7, 0x01, 0x00, 0x00},  // port 0
  };
  for (const Bytes& d : cases) {
    ParseError e;
    EXPECT_EQ(PreamblePort(d, &e), 0) << int{d[0]} << " " << int{d[1]};
    EXPECT_EQ(e, ParseError::kBadPreamble) << int{d[0]} << " " << int{d[1]};
  }
}

TEST(PreambleTest, WritePreambleReturnsZeroWhenBufferIsTooSmall) {
  for (size_t size = 0; size < kPreambleSize; ++size) {
    Bytes out(size, 0xee);
    EXPECT_EQ(WritePreamble(80, absl::MakeSpan(out)), 0u);
    EXPECT_EQ(out, Bytes(size, 0xee));
  }
}

// --------------------------------------------------------------- writers

// Checks that `write(out)` returns 0 and touches nothing for every buffer
// shorter than `need`, and writes exactly `need` bytes into a larger one.
template <typename WriteFn>
void ExpectWriterNeedsExactly(size_t need, WriteFn write) {
  for (size_t size = 0; size < need; ++size) {
    Bytes out(size, 0xee);
    ASSERT_EQ(write(absl::MakeSpan(out)), 0u) << "size " << size;
    ASSERT_EQ(out, Bytes(size, 0xee)) << "size " << size;
  }
  Bytes out(need + 8, 0xee);
  ASSERT_EQ(write(absl::MakeSpan(out)), need);
  EXPECT_EQ(Bytes(out.begin() + need, out.end()), Bytes(8, 0xee));
}

TEST(FrameWriterTest, WriteDataReturnsZeroWhenBufferIsTooSmall) {
  const Bytes payload = Pattern(20);
  ExpectWriterNeedsExactly(kDataHeaderSize + 20, [&](absl::Span<uint8_t> out) {
    return WriteData(SampleData(), payload, out);
  });
}

TEST(FrameWriterTest, WriteAckReturnsZeroWhenBufferIsTooSmall) {
  const std::vector<uint64_t> sack = {1, 2, 3};
  ExpectWriterNeedsExactly(AckFrameSize(3), [&](absl::Span<uint8_t> out) {
    return WriteAck(SampleAck(), sack, out);
  });
}

TEST(FrameWriterTest, WriteCtrlReturnsZeroWhenBufferIsTooSmall) {
  ExpectWriterNeedsExactly(kCtrlFrameSize, [&](absl::Span<uint8_t> out) {
    return WriteCtrl(SampleCtrl(), out);
  });
}

TEST(FrameWriterTest, WriteDataRejectsPayloadLongerThan65535) {
  const Bytes payload(0x10000, 1);
  Bytes out(kDataHeaderSize + payload.size() + 16);
  EXPECT_EQ(WriteData(SampleData(), payload, absl::MakeSpan(out)), 0u);
}

TEST(FrameWriterTest, WriteAckRejectsMoreThanSixteenSackWords) {
  const std::vector<uint64_t> sack(kMaxSackWords + 1, 1);
  Bytes out(AckFrameSize(kMaxSackWords + 1) + 16);
  EXPECT_EQ(WriteAck(SampleAck(), sack, absl::MakeSpan(out)), 0u);
}

TEST(FrameWriterTest, WritersAppendFramesBackToBack) {
  Bytes out(512);
  absl::Span<uint8_t> rest = absl::MakeSpan(out);
  size_t n = WriteData(SampleData(), Pattern(7), rest);
  ASSERT_EQ(n, kDataHeaderSize + 7);
  rest.remove_prefix(n);
  n = WriteAck(SampleAck(), std::vector<uint64_t>{9}, rest);
  ASSERT_EQ(n, AckFrameSize(1));
  rest.remove_prefix(n);
  n = WriteCtrl(SampleCtrl(), rest);
  ASSERT_EQ(n, kCtrlFrameSize);
  rest.remove_prefix(n);
  out.resize(out.size() - rest.size());
  Parsed p = ParseAll(out);
  EXPECT_EQ(p.error, ParseError::kNone);
  ASSERT_EQ(p.frames.size(), 3u);
  EXPECT_EQ(p.frames[0].type, FrameType::kData);
  EXPECT_EQ(p.frames[1].type, FrameType::kAck);
  EXPECT_EQ(p.frames[2].type, FrameType::kCtrl);
}

}  // namespace
}  // namespace braid::wire

// The sender half's one builder of new data frames (WriteNewFragments) and
// its two users. Two identical peers take the same steps but for how their
// fragments are built: one at a time or as one run (behind a preamble, or a
// preamble and a SYNC frame), BuildDatagram one datagram at a time or
// BuildFullDatagrams at once (copied and uncopied payloads, placed
// messages, MTUs 1500 and 9000). The datagrams must be the same bytes and
// the peers' state the same, which the datagrams each then builds next
// confirm.
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "endpoint/endpoint_core.h"
#include "endpoint/peer.h"
#include "gtest/gtest.h"
#include "reorder/buffer_pool.h"

namespace braid::endpoint {

// Reaches the builder and the state it changes.
struct PeerDataFramesTestAccess {
  // The builder is the sender half's.
  static PeerSender& Sender(Peer& p) { return *p.sender_; }
  static OutMessage& InProgress(Peer& p) { return Sender(p).inflight_.back(); }
  static void ConfirmSession(Peer& p) { Sender(p).session_confirmed_ = true; }
  // WriteNewFragments for the message in progress; the payloads are
  // copied behind their headers, and where they came from is returned.
  static uint32_t Write(Peer& p, wire::PathId path, uint32_t plen,
                        uint32_t count, TimeNs now, absl::Span<uint8_t> first,
                        size_t stride, size_t lead,
                        std::vector<const uint8_t*>* payloads) {
    return Sender(p).WriteNewFragmentsForTesting(
        Sender(p).inflight_.back(), path, plen, count, now, first, stride, lead,
        [&](uint32_t i, uint8_t* frame, const uint8_t* payload) {
          EXPECT_EQ(i, payloads->size() % count);
          EXPECT_EQ(frame, first.data() + i * stride);
          const size_t h = wire::DataHeaderBytes(frame[wire::kDataOffsetFlags]);
          std::memcpy(frame + h, payload, plen);
          payloads->push_back(payload);
        });
  }
  // What building fragments changes, as text (equal state, equal text).
  static std::string State(const Peer& peer) {
    const PeerSender& p = *peer.sender_;
    std::ostringstream s;
    s << "next_psn " << p.sent_.next_psn().value() << " lowest "
      << p.sent_.lowest_unacked().value() << " in_flight "
      << p.sent_.packets_in_flight() << "/" << p.sent_.bytes_in_flight()
      << " sent " << p.packets_sent_ << "/" << p.bytes_sent_ << " run "
      << int{p.run_path_} << "+" << p.run_left_ << " oldest_since "
      << p.oldest_unacked_since_.ns() << " activity "
      << peer.link_.last_activity.ns() << " urgent "
      << peer.receiver_->last_ack_urgent_ << " deferred " << p.deferred_.len
      << " cwnd " << p.cc_->cwnd_bytes() << " next_wake "
      << peer.NextWake().ns();
    if (!p.inflight_.empty()) {
      const OutMessage& m = p.inflight_.back();
      s << " msg " << m.msg_seq << " offset " << m.next_offset << " frags "
        << m.frags_sent << " last_psn " << m.last_psn.value();
    }
    for (size_t i = 0; i < p.paths_.size(); ++i) {
      const multipath::PathStats& ps =
          p.paths_.stats(static_cast<wire::PathId>(i));
      s << " path" << i << " " << ps.packets_sent << "/" << ps.bytes_sent << "/"
        << ps.in_flight;
    }
    return s.str();
  }
};

namespace {

using Bytes = std::vector<uint8_t>;
using Access = PeerDataFramesTestAccess;

class FakeHost : public PeerHost {
 public:
  void Complete(Completion&& c) override {}
  uint64_t ReceiveQueueRoom() const override { return uint64_t{1} << 30; }
  reorder::BufferPool* buffer_pool() override { return &pool_; }
  bool Place(const NetAddr& peer, uint16_t stream,
             const wire::PlacementExt& ext, uint32_t msg_len,
             absl::Span<uint8_t>* dest) override {
    return false;
  }

 private:
  reorder::BufferPool pool_;
};

constexpr uint16_t kPort = 7000;
const TimeNs kNow = TimeNs(1000000);

Bytes Pattern(size_t n) {
  Bytes v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
  }
  return v;
}

constexpr uint64_t kOurInc = 0x1111;

PeerConfig Config(uint32_t max_datagram, uint32_t min_uncopied) {
  PeerConfig c;
  c.max_datagram = max_datagram;
  c.mss = max_datagram -
          static_cast<uint32_t>(wire::kPreambleSize + wire::kDataHeaderSize +
                                wire::kCtrlFrameSize);
  c.ack_reach = wire::AckReachIn(max_datagram);
  c.min_uncopied_payload = min_uncopied;
  c.proto.spray_run = DefaultSprayRun(max_datagram);
  return c;
}

// A sender and its message: a 1 MiB borrowed body, placed or not.
struct Sender {
  Sender(const PeerConfig& cfg, const Bytes& body, bool placed)
      : max_datagram(cfg.max_datagram),
        peer(cfg, NetAddr::Ipv4(0x0a000002, kPort), /*seed=*/7,
             /*our_inc=*/kOurInc, &host, kNow) {
    OutMessage m =
        OutMessage::Borrow(body.data(), static_cast<uint32_t>(body.size()));
    m.stream = 1;
    m.placed = placed;
    m.placement.key = 77;
    peer.Enqueue(std::move(m), kNow);
  }
  // One datagram by BuildDatagram (preamble in front; the tail, if left
  // out, appended); empty if there was none.
  Bytes BuildOne(TimeNs now, bool uncopied, const uint8_t** tail_at = nullptr) {
    Bytes d(max_datagram);
    wire::WritePreamble(kPort, absl::MakeSpan(d));
    wire::Entropy e = 0;
    absl::Span<const uint8_t> tail;
    const size_t len =
        peer.BuildDatagram(now, absl::MakeSpan(d).subspan(wire::kPreambleSize),
                           &e, false, uncopied ? &tail : nullptr);
    if (len == 0) return {};
    d.resize(wire::kPreambleSize + len);
    d.insert(d.end(), tail.begin(), tail.end());
    d.push_back(static_cast<uint8_t>(e >> 8));  // the entropy, compared too
    d.push_back(static_cast<uint8_t>(e));
    if (tail_at != nullptr) *tail_at = tail.data();
    return d;
  }
  uint32_t max_datagram;
  FakeHost host;
  Peer peer;
};

// Builds what each sender still has (no acks come back) and compares it.
void ExpectSameFromHereOn(Sender& a, Sender& b, TimeNs now) {
  for (int i = 0; i < 100000; ++i) {
    const Bytes da = a.BuildOne(now, false);
    const Bytes db = b.BuildOne(now, false);
    ASSERT_EQ(da, db) << "datagram " << i << " after the build";
    if (da.empty()) break;
  }
  EXPECT_EQ(Access::State(a.peer), Access::State(b.peer));
}

struct BuilderCase {
  bool placed;
  bool sync_lead;  // a SYNC frame between the preamble and the data frame
};

class BuilderTest : public ::testing::TestWithParam<BuilderCase> {};

TEST_P(BuilderTest, FragmentsBuiltOneByOneEqualTheSameFragmentsBuiltAsARun) {
  const BuilderCase c = GetParam();
  const PeerConfig cfg = Config(1472, 8192);
  const Bytes body = Pattern(1 << 20);
  Sender a(cfg, body, c.placed), b(cfg, body, c.placed);
  // The first datagram starts the message (the general path, both alike).
  ASSERT_EQ(a.BuildOne(kNow, false), b.BuildOne(kNow, false));
  ASSERT_EQ(Access::State(a.peer), Access::State(b.peer));

  // The lead: a preamble, and a SYNC frame if asked.
  Bytes lead(wire::kPreambleSize);
  wire::WritePreamble(kPort, absl::MakeSpan(lead));
  if (c.sync_lead) {
    wire::CtrlFrame sync;
    sync.type = wire::CtrlType::kSync;
    sync.src_incarnation = kOurInc;
    sync.session = 5;
    lead.resize(lead.size() + wire::kCtrlFrameSize);
    wire::WriteCtrl(sync, absl::MakeSpan(lead).subspan(wire::kPreambleSize));
  }
  const size_t hdr =
      wire::DataHeaderBytes(c.placed ? wire::kDataFlagPlaced : 0);
  const uint32_t plen =
      static_cast<uint32_t>(cfg.max_datagram - lead.size() - hdr);
  constexpr uint32_t kCount = 9;
  constexpr size_t kStride = 1500;
  constexpr wire::PathId kPath = 1;
  const TimeNs now = kNow + DurationNs::Micros(5);
  Bytes one(kCount * kStride, 0), run(kCount * kStride, 0);

  std::vector<const uint8_t*> one_payloads, run_payloads;
  for (uint32_t i = 0; i < kCount; ++i) {
    uint8_t* slot = one.data() + i * kStride;
    std::memcpy(slot, lead.data(), lead.size());
    EXPECT_EQ(
        Access::Write(a.peer, kPath, plen, 1, now,
                      absl::MakeSpan(slot + lead.size(), kStride - lead.size()),
                      0, lead.size(), &one_payloads),
        hdr);
  }
  std::memcpy(run.data(), lead.data(), lead.size());
  EXPECT_EQ(Access::Write(
                b.peer, kPath, plen, kCount, now,
                absl::MakeSpan(run.data() + lead.size(), kStride - lead.size()),
                kStride, lead.size(), &run_payloads),
            hdr);
  // Fragment i's payload follows fragment i - 1's in the message.
  ASSERT_EQ(one_payloads.size(), kCount);
  EXPECT_EQ(run_payloads, one_payloads);
  const uint8_t* first_payload = one_payloads[0];
  for (uint32_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(one_payloads[i], first_payload + i * plen) << "fragment " << i;
  }

  // The same bytes, each datagram a valid one: the lead's frames, then
  // fragment i at PSN, path seq and offset i past the first.
  EXPECT_EQ(one, run);
  for (uint32_t i = 0; i < kCount; ++i) {
    const uint8_t* slot = run.data() + i * kStride;
    wire::FrameReader reader(
        absl::MakeConstSpan(slot + wire::kPreambleSize,
                            lead.size() - wire::kPreambleSize + hdr + plen));
    wire::Frame fr;
    if (c.sync_lead) {
      ASSERT_TRUE(reader.Next(&fr));
      EXPECT_EQ(fr.type, wire::FrameType::kCtrl);
    }
    ASSERT_TRUE(reader.Next(&fr)) << wire::ParseErrorName(reader.error());
    ASSERT_EQ(fr.type, wire::FrameType::kData);
    EXPECT_EQ(fr.data.psn, Access::InProgress(b.peer).last_psn +
                               (int64_t{i} - (kCount - 1)));
    EXPECT_EQ(fr.data.frag_offset,
              static_cast<uint32_t>(first_payload - body.data()) + i * plen);
    EXPECT_EQ(fr.data.payload_len, plen);
    EXPECT_EQ(fr.data.path_id, kPath);
    EXPECT_EQ(std::memcmp(fr.payload, body.data() + fr.data.frag_offset, plen),
              0);
    EXPECT_FALSE(reader.Next(&fr));
  }
  // The same state, and from here on the same datagrams.
  EXPECT_EQ(Access::State(a.peer), Access::State(b.peer));
  ExpectSameFromHereOn(a, b, now + DurationNs::Micros(5));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BuilderTest,
    ::testing::Values(BuilderCase{false, false}, BuilderCase{true, false},
                      BuilderCase{false, true}, BuilderCase{true, true}),
    [](const ::testing::TestParamInfo<BuilderCase>& i) {
      return std::string(i.param.placed ? "placed" : "unplaced") +
             (i.param.sync_lead ? "_sync" : "_preamble");
    });

struct PathsCase {
  uint32_t max_datagram;
  bool uncopied;
  bool placed;
};

class BuildPathsTest : public ::testing::TestWithParam<PathsCase> {};

TEST_P(BuildPathsTest, FullDatagramsEqualDatagramsBuiltOneByOne) {
  const PathsCase c = GetParam();
  // Uncopied tails from 1000 bytes on, so MTU 1500 leaves them out too.
  const PeerConfig cfg = Config(c.max_datagram, 1000);
  const Bytes body = Pattern(1 << 20);
  Sender a(cfg, body, c.placed), b(cfg, body, c.placed);
  // The first datagram starts the message and the session (SYNC); the
  // session is then taken as confirmed, as by the receiver's first ack.
  ASSERT_EQ(a.BuildOne(kNow, c.uncopied), b.BuildOne(kNow, c.uncopied));
  Access::ConfirmSession(a.peer);
  Access::ConfirmSession(b.peer);
  const TimeNs now = kNow + DurationNs::Micros(5);

  Bytes preamble(wire::kPreambleSize);
  wire::WritePreamble(kPort, absl::MakeSpan(preamble));
  TxBatch batch(64, c.max_datagram);
  const size_t k =
      b.peer.BuildFullDatagrams(now, &batch, 40, preamble, c.uncopied);
  ASSERT_GT(k, 1u);
  ASSERT_EQ(batch.size(), k);
  for (size_t i = 0; i < k; ++i) {
    const backend::TxPacket& p = batch.packets()[i];
    const uint8_t* tail_at = nullptr;
    const Bytes want = a.BuildOne(now, c.uncopied, &tail_at);
    Bytes got(p.size());
    p.CopyTo(got.data());
    got.push_back(static_cast<uint8_t>(p.entropy >> 8));
    got.push_back(static_cast<uint8_t>(p.entropy));
    ASSERT_EQ(got, want) << "datagram " << i << " of " << k;
    // The payload left out is the same piece of the message.
    EXPECT_EQ(p.tail, tail_at) << "datagram " << i;
    EXPECT_EQ(p.tail_len > 0, c.uncopied) << "datagram " << i;
    EXPECT_EQ(p.dst, a.peer.addr());
  }
  EXPECT_EQ(Access::State(a.peer), Access::State(b.peer));
  ExpectSameFromHereOn(a, b, now + DurationNs::Micros(5));
}

INSTANTIATE_TEST_SUITE_P(Cases, BuildPathsTest,
                         ::testing::Values(PathsCase{1472, false, false},
                                           PathsCase{1472, true, false},
                                           PathsCase{1472, true, true},
                                           PathsCase{8972, false, true},
                                           PathsCase{8972, true, false}),
                         [](const ::testing::TestParamInfo<PathsCase>& i) {
                           return "dgram" +
                                  std::to_string(i.param.max_datagram) +
                                  (i.param.uncopied ? "_uncopied" : "_copied") +
                                  (i.param.placed ? "_placed" : "");
                         });

}  // namespace
}  // namespace braid::endpoint

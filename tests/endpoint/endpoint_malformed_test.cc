// Malformed and stray datagrams sent at an Endpoint's port with a plain UDP
// socket (over kernel UDP on loopback): each is dropped and counted by
// reason, creates no peer, produces no completion, and a real transfer
// afterwards works as if nothing happened.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "tests/endpoint/pair_driver.h"
#include "tests/endpoint/traffic.h"
#include "wire/frames.h"

namespace braid {
namespace {

using testing::DrivePair;
using testing::FlowConfig;
using testing::FlowSender;
using testing::OpenOrDie;
using testing::ReceiveChecker;
using testing::Side;
using Clock = std::chrono::steady_clock;

void ExpectNoErrors(const std::vector<std::string>& errors, const char* who) {
  for (const std::string& e : errors) ADD_FAILURE() << who << ": " << e;
}

class RawUdpSocket {
 public:
  RawUdpSocket() : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
    socklen_t len = sizeof(sa);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
  }
  ~RawUdpSocket() { close(fd_); }
  bool ok() const { return fd_ >= 0 && port_ != 0; }
  uint16_t port() const { return port_; }
  bool SendTo(const NetAddr& to, const std::vector<uint8_t>& bytes) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(to.port);
    sa.sin_addr.s_addr = htonl(to.ipv4());
    return sendto(fd_, bytes.data(), bytes.size(), 0,
                  reinterpret_cast<sockaddr*>(&sa),
                  sizeof(sa)) == static_cast<ssize_t>(bytes.size());
  }

 private:
  int fd_;
  uint16_t port_ = 0;
};

std::vector<uint8_t> Preamble(uint16_t port,
                              uint8_t magic = wire::kPreambleMagic,
                              uint8_t version = wire::kVersion) {
  return {magic, version, static_cast<uint8_t>(port >> 8),
          static_cast<uint8_t>(port)};
}

// Preamble + a well-formed data frame, for the caller to break.
std::vector<uint8_t> DataDatagram(uint16_t port, size_t payload = 100) {
  std::vector<uint8_t> d = Preamble(port);
  wire::DataHeader h;
  h.src_incarnation = 0x1234567890abcdefULL;
  h.msg_len = static_cast<uint32_t>(payload);
  std::vector<uint8_t> body(payload, 0x77),
      frame(wire::kDataHeaderSize + payload);
  EXPECT_EQ(wire::WriteData(h, body, absl::MakeSpan(frame)), frame.size());
  d.insert(d.end(), frame.begin(), frame.end());
  return d;
}

std::vector<uint8_t> AckDatagram(uint16_t port) {
  std::vector<uint8_t> d = Preamble(port);
  wire::AckHeader h;
  h.src_incarnation = 0x42;
  h.dst_incarnation = 0x43;
  std::vector<uint8_t> frame(wire::kAckHeaderSize);
  EXPECT_EQ(wire::WriteAck(h, {}, absl::MakeSpan(frame)), frame.size());
  d.insert(d.end(), frame.begin(), frame.end());
  return d;
}

TEST(EndpointIntegrationTest, MalformedDatagramsAreCountedAndChangeNothing) {
  auto a = OpenOrDie();
  auto b = OpenOrDie();
  ASSERT_TRUE(a && b);
  RawUdpSocket raw;
  ASSERT_TRUE(raw.ok());
  const uint16_t rp = raw.port();
  const size_t p = wire::kPreambleSize;  // frame offset in a datagram

  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
  };
  std::vector<Case> cases;
  // Not braid at all.
  cases.push_back({"garbage", std::vector<uint8_t>(300, 0x42)});
  cases.push_back({"empty datagram", {}});
  cases.push_back({"3 bytes", {wire::kPreambleMagic, wire::kVersion, 0x1f}});
  cases.push_back({"wrong magic", Preamble(rp, 0xb8)});
  cases.back().bytes.resize(100, 0);
  cases.push_back(
      {"wrong preamble version", Preamble(rp, wire::kPreambleMagic, 9)});
  cases.back().bytes.resize(100, 0);
  cases.push_back({"reply port 0", DataDatagram(0)});
  // A valid preamble and a bad first frame.
  auto d = DataDatagram(rp);
  d[p + 0] = 7;  // frame version
  cases.push_back({"frame version", d});
  d = DataDatagram(rp);
  d[p + 1] = 9;  // frame type
  cases.push_back({"frame type", d});
  d = DataDatagram(rp);
  d.resize(p + 20);
  cases.push_back({"truncated header", d});
  d = DataDatagram(rp);
  d.resize(d.size() - 1);
  cases.push_back({"truncated payload", d});
  d = DataDatagram(rp);
  d[p + 2] = 0x80;  // unknown flag
  cases.push_back({"data flags", d});
  d = DataDatagram(rp);
  std::fill(d.begin() + p + 8, d.begin() + p + 16, 0);  // src incarnation
  cases.push_back({"zero incarnation", d});
  d = DataDatagram(rp);
  d[p + 40 + 3] = 50;  // msg_len 50 < payload 100
  d[p + 40 + 2] = 0;
  cases.push_back({"fragment bounds", d});
  d = AckDatagram(rp);
  d[p + 6] = 1;  // reserved
  cases.push_back({"ack reserved", d});
  d = AckDatagram(rp);
  d[p + 5] = wire::kMaxSackWords + 1;  // sack words > kMaxSackWords
  cases.push_back({"sack too long", d});
  d = Preamble(rp);
  d.resize(p + wire::kCtrlFrameSize, 0);
  d[p + 0] = wire::kVersion;
  d[p + 1] = static_cast<uint8_t>(wire::FrameType::kCtrl);
  d[p + 2] = 99;  // ctrl type
  cases.push_back({"ctrl type", d});

  for (const Case& c : cases)
    ASSERT_TRUE(raw.SendTo(b->local_address(), c.bytes)) << c.name;
  const uint64_t want = cases.size();
  std::vector<Completion> cb;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (b->stats().drops.malformed() < want && Clock::now() < deadline)
    b->Poll(&cb);

  const EndpointStats s = b->stats();
  const DropStats& dr = s.drops;
  EXPECT_EQ(dr.malformed(), want);
  EXPECT_EQ(dr.bad_preamble, 4u);  // garbage, magic, version, port 0
  EXPECT_EQ(dr.truncated, 4u);     // empty, 3 bytes, header, payload
  EXPECT_EQ(dr.bad_version, 1u);
  EXPECT_EQ(dr.bad_type, 1u);
  EXPECT_EQ(dr.bad_flags, 1u);
  EXPECT_EQ(dr.zero_incarnation, 1u);
  EXPECT_EQ(dr.fragment_bounds, 1u);
  EXPECT_EQ(dr.reserved_nonzero, 1u);
  EXPECT_EQ(dr.sack_too_long, 1u);
  EXPECT_EQ(dr.bad_ctrl_type, 1u);
  EXPECT_EQ(s.datagrams_received, want);
  // Nothing changed: no peer, no completion, nothing sent in reply.
  EXPECT_EQ(s.peers, 0u);
  EXPECT_EQ(s.peers_created, 0u);
  EXPECT_EQ(s.datagrams_sent, 0u);
  EXPECT_TRUE(cb.empty());
  EXPECT_EQ(s.messages_received, 0u);

  // A real transfer afterwards works, and adds no drops.
  constexpr uint64_t kSeed = 9;
  FlowConfig f{.flow = 1, .count = 300, .seed = kSeed};
  FlowSender send(f, a.get(), b->local_address());
  ReceiveChecker at_b(kSeed);
  at_b.ExpectFlow(1, 0, a->local_address());
  Side sa{a.get(), {&send}, nullptr, 0};
  Side sb{b.get(), {}, &at_b, f.count};
  std::vector<std::string> errors;
  EXPECT_TRUE(DrivePair(sa, sb, std::chrono::seconds(60), &errors));
  ExpectNoErrors(errors, "completions");
  ExpectNoErrors(send.errors(), "sender");
  ExpectNoErrors(at_b.errors(), "receiver");
  EXPECT_EQ(send.done(), f.count);
  EXPECT_EQ(at_b.received(), f.count);
  EXPECT_EQ(b->stats().drops.malformed(), want);
  EXPECT_EQ(b->stats().peers, 1u);
}

TEST(EndpointIntegrationTest, StaleFrameFromAStrangerCreatesNoPeer) {
  auto b = OpenOrDie();
  ASSERT_TRUE(b);
  RawUdpSocket raw;
  ASSERT_TRUE(raw.ok());
  // A well-formed data frame naming an incarnation B never had.
  std::vector<uint8_t> d = DataDatagram(raw.port());
  d[wire::kPreambleSize + 16] = 0x99;  // dst incarnation
  ASSERT_TRUE(raw.SendTo(b->local_address(), d));
  // And a well-formed ack for a peer B does not know.
  ASSERT_TRUE(raw.SendTo(b->local_address(), AckDatagram(raw.port())));
  std::vector<Completion> cb;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (b->stats().drops.stale_incarnation < 2 && Clock::now() < deadline) {
    b->Poll(&cb);
  }
  const EndpointStats s = b->stats();
  EXPECT_EQ(s.drops.stale_incarnation, 2u);
  EXPECT_EQ(s.drops.malformed(), 0u);
  EXPECT_EQ(s.peers, 0u);
  EXPECT_TRUE(cb.empty());
}

}  // namespace
}  // namespace braid

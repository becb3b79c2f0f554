// The braid provider's RMA against peers that break the protocol (a plain
// braid endpoint that forges the provider's RMA messages), selective
// completion of writes, and endpoints closed with RMA in flight. The
// protocol as a well-behaved C client sees it: rma_test.c.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_rma.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "libfabric/mr_table.h"
#include "libfabric/wire_header.h"
#include "tests/libfabric/fi_fixture.h"

namespace braid::libfabric::testing {
namespace {

using RmaForgedTest = FiTest;

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

uint64_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

NetAddr AddrOf(const Side& s) {
  sockaddr_in sa;
  std::memcpy(&sa, s.name.data(), sizeof(sa));
  return NetAddr::Ipv4(ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port));
}

// A region of the fixture's domain; closed by the destructor.
struct Region {
  Region(fid_domain* d, size_t n, uint64_t access, uint8_t seed)
      : bytes(Pattern(n, seed)) {
    EXPECT_EQ(fi_mr_reg(d, bytes.data(), n, access, 0, 0, 0, &mr, nullptr), 0);
  }
  ~Region() {
    if (mr) fi_close(&mr->fid);
  }
  uint64_t key() const { return fi_mr_key(mr); }
  std::vector<uint8_t> bytes;
  fid_mr* mr = nullptr;
};

// Inserts a plain braid endpoint's address into `s`'s AV.
fi_addr_t Insert(Side& s, const NetAddr& a) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(a.ipv4());
  sa.sin_port = htons(a.port);
  fi_addr_t out = FI_ADDR_NOTAVAIL;
  EXPECT_EQ(fi_av_insert(s.av, &sa, 1, &out, 0, nullptr), 1);
  return out;
}

// Polls `e` (alongside the fixture's sides) until it has received a
// message; returns it.
Completion ReceiveOn(Endpoint& e, const std::function<void()>& pump) {
  std::vector<Completion> done;
  Completion got;
  bool have = false;
  pump();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!have && std::chrono::steady_clock::now() < deadline) {
    e.Poll(&done);
    for (Completion& c : done) {
      if (!have && c.type == CompletionType::kRecv) {
        got = std::move(c);
        have = true;
      }
    }
    done.clear();
    pump();
  }
  return got;
}

TEST_F(RmaForgedTest, ReadResponseFromAnotherAddressLandsNowhere) {
  Open(2, {.rma = true});
  Side& a = sides_[0];
  // The read's target is a plain braid endpoint (it answers by hand); a
  // third one forges the answer first, with the read's own request id.
  auto target = Endpoint::Open(EndpointOptions()).value();
  auto forger = Endpoint::Open(EndpointOptions()).value();
  const fi_addr_t t = Insert(a, target->local_address());
  std::vector<uint8_t> dst(4096, 0);
  int ctx;
  ASSERT_EQ(fi_read(a.ep, dst.data(), dst.size(), nullptr, t, 0x1000, 77, &ctx),
            0);
  Completion req = ReceiveOn(*target, [&] { Pump(a); });
  MsgHeader h;
  ASSERT_EQ(DecodeHeader(req.data, &h), HeaderError::kNone);
  ASSERT_EQ(h.kind, MsgKind::kReadReq);
  const ReadReq r = DecodeReadReq(req.data);
  EXPECT_EQ(r.key, 77u);
  EXPECT_EQ(r.addr, 0x1000u);
  EXPECT_EQ(r.len, 4096u);
  const auto hdr = EncodeHeader({.kind = MsgKind::kReadResp, .tag = h.tag});
  SendOptions o{.stream = 1,
                .placement =
                    PlacementDescriptor{
                        .key = 0, .offset = h.tag, .head_bytes = kHeaderBytes},
                .prefix = hdr};
  std::vector<uint8_t> junk(4096, 0xee);
  ASSERT_TRUE(forger->Send(AddrOf(a), junk, o).ok());
  std::vector<Completion> done;
  ASSERT_TRUE(PumpUntil([&] {
    forger->Poll(&done);
    target->Poll(&done);
    return !done.empty();
  }));
  EXPECT_EQ(done[0].type, CompletionType::kSendDone);  // A took it in
  EXPECT_TRUE(a.got.empty());
  EXPECT_TRUE(a.errs.empty());
  EXPECT_EQ(dst, std::vector<uint8_t>(4096, 0));
  // The real target answers: its bytes land, the read completes.
  const std::vector<uint8_t> real = Pattern(4096, 3);
  ASSERT_TRUE(target->Send(AddrOf(a), real, o).ok());
  ASSERT_TRUE(PumpUntil([&] {
    target->Poll(&done);
    return !a.got.empty() || !a.errs.empty();
  }));
  ASSERT_TRUE(a.errs.empty()) << a.err_texts[0];
  ASSERT_EQ(a.got.size(), 1u);
  EXPECT_EQ(a.got[0].op_context, &ctx);
  EXPECT_EQ(a.got[0].flags, FI_RMA | FI_READ);
  EXPECT_EQ(dst, real);
}

TEST_F(RmaForgedTest, TargetThatTakesTheRequestAndFallsSilentFailsItByTimeout) {
  Open(2, {.rma = true});  // peer timeout: 1 s (CMakeLists.txt)
  Side& a = sides_[0];
  // A plain braid endpoint: braid acknowledges the requests, nobody
  // answers them.
  auto target = Endpoint::Open(EndpointOptions()).value();
  const fi_addr_t t = Insert(a, target->local_address());
  std::vector<uint8_t> buf(512, 1);
  int rctx, wctx;
  ASSERT_EQ(fi_read(a.ep, buf.data(), buf.size(), nullptr, t, 0x1000, 5, &rctx),
            0);
  ASSERT_EQ(
      fi_write(a.ep, buf.data(), buf.size(), nullptr, t, 0x1000, 5, &wctx), 0);
  std::vector<Completion> done;
  ASSERT_TRUE(PumpUntil([&] {
    target->Poll(&done);
    done.clear();
    return a.errs.size() == 2;
  }));
  EXPECT_TRUE(a.got.empty());
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.errs[i].err, FI_ETIMEDOUT);
    EXPECT_NE(a.err_texts[i].find(target->local_address().ToString()),
              std::string::npos)
        << a.err_texts[i];
    EXPECT_NE(a.err_texts[i].find("did not answer"), std::string::npos)
        << a.err_texts[i];
  }
  EXPECT_TRUE(
      (a.errs[0].op_context == &rctx && a.errs[1].op_context == &wctx) ||
      (a.errs[0].op_context == &wctx && a.errs[1].op_context == &rctx));
}

TEST_F(RmaForgedTest, WriteWithoutTargetOrWithABadKeyIsAnsweredWithTheReason) {
  Open(2, {.rma = true});
  Side& b = sides_[1];
  Region region(domain_, 256, FI_REMOTE_WRITE, 4);
  const std::vector<uint8_t> before = region.bytes;
  auto raw = Endpoint::Open(EndpointOptions()).value();
  std::vector<uint8_t> body(64, 0xee);
  // An RMA write sent as an ordinary message: no target to write to.
  auto h1 = EncodeHeader({.kind = MsgKind::kWrite, .tag = 11});
  ASSERT_TRUE(raw->Send(AddrOf(b), body, {.stream = 1, .prefix = h1}).ok());
  // A placed one with a key off by one.
  auto h2 = EncodeHeader({.kind = MsgKind::kWrite, .tag = 12});
  SendOptions o{
      .stream = 1,
      .placement = PlacementDescriptor{.key = region.key() + 1,
                                       .offset = Addr(region.bytes.data()),
                                       .head_bytes = kHeaderBytes},
      .prefix = h2};
  ASSERT_TRUE(raw->Send(AddrOf(b), body, o).ok());
  std::map<uint64_t, uint64_t> answers;  // request id -> status
  std::vector<Completion> done;
  ASSERT_TRUE(PumpUntil([&] {
    raw->Poll(&done);
    for (Completion& c : done) {
      MsgHeader h;
      if (c.type == CompletionType::kRecv &&
          DecodeHeader(c.data, &h) == HeaderError::kNone &&
          h.kind == MsgKind::kRmaResp) {
        answers[h.tag] = h.data;
      }
    }
    done.clear();
    return answers.size() == 2;
  }));
  EXPECT_EQ(answers[11], static_cast<uint64_t>(RmaStatus::kRefused));
  EXPECT_EQ(answers[12], static_cast<uint64_t>(RmaStatus::kBadKey));
  EXPECT_EQ(region.bytes, before);
  EXPECT_TRUE(b.got.empty());
  EXPECT_TRUE(b.errs.empty());
}

TEST_F(RmaForgedTest, SelectiveCompletionReportsFlaggedWritesAndEveryError) {
  Open(2, {.selective_tx = true, .rma = true});
  Side& a = sides_[0];
  Region region(domain_, 1024, FI_REMOTE_WRITE, 5);
  const std::vector<uint8_t> src = Pattern(100, 6);
  int quiet, flagged, bad;
  ASSERT_EQ(fi_write(a.ep, src.data(), src.size(), nullptr, a.peers[1],
                     Addr(region.bytes.data()), region.key(), &quiet),
            0);
  iovec iov{const_cast<uint8_t*>(src.data()), src.size()};
  fi_rma_iov rma{Addr(region.bytes.data()) + 500, src.size(), region.key()};
  fi_msg_rma msg{};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.addr = a.peers[1];
  msg.rma_iov = &rma;
  msg.rma_iov_count = 1;
  msg.context = &flagged;
  ASSERT_EQ(fi_writemsg(a.ep, &msg, FI_COMPLETION), 0);
  ASSERT_EQ(fi_write(a.ep, src.data(), src.size(), nullptr, a.peers[1],
                     Addr(region.bytes.data()), region.key() ^ 2, &bad),
            0);
  ASSERT_TRUE(PumpUntil([&] { return !a.got.empty() && !a.errs.empty(); }));
  // A later flagged write completes after the quiet one: nothing else came.
  msg.context = &quiet;
  ASSERT_EQ(fi_writemsg(a.ep, &msg, FI_COMPLETION), 0);
  ASSERT_TRUE(PumpUntil([&] { return a.got.size() >= 2; }));
  ASSERT_EQ(a.got.size(), 2u);
  EXPECT_EQ(a.got[0].op_context, &flagged);
  EXPECT_EQ(a.got[1].op_context, &quiet);
  ASSERT_EQ(a.errs.size(), 1u);
  EXPECT_EQ(a.errs[0].op_context, &bad);
  EXPECT_EQ(a.errs[0].err, FI_EACCES);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), region.bytes.begin()));
  EXPECT_TRUE(std::equal(src.begin(), src.end(), region.bytes.begin() + 500));
}

TEST_F(RmaForgedTest, EndpointsCloseCleanlyWithRmaInFlight) {
  Open(2, {.rma = true});
  Side& a = sides_[0];
  Region region(domain_, 1 << 20, FI_REMOTE_READ | FI_REMOTE_WRITE, 7);
  std::vector<uint8_t> buf(1 << 20, 1);
  ASSERT_EQ(fi_write(a.ep, buf.data(), buf.size(), nullptr, a.peers[1],
                     Addr(region.bytes.data()), region.key(), nullptr),
            0);
  ASSERT_EQ(fi_read(a.ep, buf.data(), buf.size(), nullptr, a.peers[1],
                    Addr(region.bytes.data()), region.key(), nullptr),
            0);
  Pump(a);
  // TearDown closes both endpoints now, the transfers unfinished.
  EXPECT_EQ(fi_close(&sides_[0].ep->fid), 0);
  sides_[0].ep = nullptr;
  EXPECT_EQ(fi_close(&sides_[1].ep->fid), 0);
  sides_[1].ep = nullptr;
}

}  // namespace
}  // namespace braid::libfabric::testing

// The braid provider through libfabric's public API, as an application
// uses it: messages, tagged messages, unexpected ones, errors.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "braid/endpoint.h"
#include "gtest/gtest.h"
#include "tests/libfabric/fi_fixture.h"

namespace braid::libfabric::testing {
namespace {

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

using ProviderTest = FiTest;

TEST_F(ProviderTest, MessageArrivesAndBothSidesComplete) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  std::vector<uint8_t> in(1000), out = Pattern(1000, 1);
  int rctx, sctx;
  ASSERT_EQ(fi_recv(b.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx),
            0);
  ASSERT_EQ(fi_send(a.ep, out.data(), out.size(), nullptr, a.peers[1], &sctx),
            0);
  ASSERT_TRUE(PumpUntil([&] { return !b.got.empty() && !a.got.empty(); }));
  EXPECT_EQ(b.got[0].op_context, &rctx);
  EXPECT_EQ(b.got[0].flags, FI_RECV | FI_MSG);
  EXPECT_EQ(b.got[0].len, 1000u);
  EXPECT_EQ(b.got_from[0], b.peers[0]);  // FI_SOURCE: A's address in B's AV
  EXPECT_EQ(in, out);
  EXPECT_EQ(a.got[0].op_context, &sctx);
  EXPECT_EQ(a.got[0].flags, FI_SEND | FI_MSG);
}

TEST_F(ProviderTest, UnexpectedMessagesWaitForReceivesInSendOrder) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  const std::vector<size_t> sizes = {0, 1, 64, 4096, 20000, 200000, 7, 65536};
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out.push_back(Pattern(sizes[i], static_cast<uint8_t>(i)));
    ASSERT_EQ(fi_send(a.ep, out[i].data(), out[i].size(), nullptr, a.peers[1],
                      &out[i]),
              0);
  }
  // Every send completes (delivered into B's unexpected queue) before B
  // posts a single receive.
  ASSERT_TRUE(PumpUntil([&] { return a.got.size() == sizes.size(); }));
  EXPECT_TRUE(b.got.empty());
  std::vector<std::vector<uint8_t>> in(sizes.size());
  for (auto& v : in) {
    v.assign(200000, 0xee);
    ASSERT_EQ(fi_recv(b.ep, v.data(), v.size(), nullptr, FI_ADDR_UNSPEC, &v),
              0);
  }
  ASSERT_TRUE(PumpUntil([&] { return b.got.size() == sizes.size(); }));
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(b.got[i].op_context, &in[i]);
    ASSERT_EQ(b.got[i].len, sizes[i]);
    EXPECT_TRUE(std::equal(out[i].begin(), out[i].end(), in[i].begin()))
        << "message " << i;
  }
}

TEST_F(ProviderTest, UnexpectedMessagesPastTheLimitWaitInBraidWithoutLoss) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  // 4 MiB for a receiver that buffers 1 MiB of unexpected messages.
  constexpr int kMsgs = 40;
  std::vector<std::vector<uint8_t>> out;
  for (int i = 0; i < kMsgs; ++i) {
    out.push_back(Pattern(100000 + i, static_cast<uint8_t>(i)));
    ASSERT_EQ(fi_send(a.ep, out[i].data(), out[i].size(), nullptr, a.peers[1],
                      &out[i]),
              0);
  }
  // B takes what fits; the rest waits in B's braid endpoint (A's sends
  // complete: braid holds them for B), until B posts receives.
  auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < until) {
    Pump(a);
    Pump(b);
  }
  EXPECT_TRUE(a.errs.empty());
  EXPECT_TRUE(b.got.empty());
  std::vector<std::vector<uint8_t>> in(kMsgs);
  for (auto& v : in) {
    v.assign(200000, 0);
    ASSERT_EQ(fi_recv(b.ep, v.data(), v.size(), nullptr, FI_ADDR_UNSPEC, &v),
              0);
  }
  ASSERT_TRUE(PumpUntil([&] {
    return b.got.size() == static_cast<size_t>(kMsgs) &&
           a.got.size() == static_cast<size_t>(kMsgs);
  }));
  for (int i = 0; i < kMsgs; ++i) {
    ASSERT_EQ(b.got[i].len, out[i].size());
    EXPECT_TRUE(std::equal(out[i].begin(), out[i].end(), in[i].begin()))
        << "message " << i;
  }
  EXPECT_TRUE(a.errs.empty());
}

TEST_F(ProviderTest, ContextAndDataCqFormatsPackTheirEntries) {
  Open(1);
  Side& a = sides_[0];
  fid_cq* cqs[2] = {nullptr, nullptr};
  fid_ep* eps[2] = {nullptr, nullptr};
  fid_av* av = nullptr;
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_MAP;
  ASSERT_EQ(fi_av_open(domain_, &av_attr, &av, nullptr), 0);
  const fi_cq_format formats[2] = {FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_DATA};
  for (int i = 0; i < 2; ++i) {
    fi_cq_attr attr{};
    attr.format = formats[i];
    ASSERT_EQ(fi_cq_open(domain_, &attr, &cqs[i], nullptr), 0);
    ASSERT_EQ(fi_endpoint(domain_, info_, &eps[i], nullptr), 0);
    ASSERT_EQ(fi_ep_bind(eps[i], &av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(eps[i], &cqs[i]->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(eps[i]), 0);
  }
  char name[64];
  size_t len = sizeof(name);
  ASSERT_EQ(fi_getname(&eps[0]->fid, name, &len), 0);
  fi_addr_t to0;
  ASSERT_EQ(fi_av_insert(av, name, 1, &to0, 0, nullptr), 1);
  len = sizeof(name);
  ASSERT_EQ(fi_getname(&eps[1]->fid, name, &len), 0);
  fi_addr_t to1;
  ASSERT_EQ(fi_av_insert(av, name, 1, &to1, 0, nullptr), 1);
  uint32_t in0[2], in1[2], v = 3;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(fi_recv(eps[0], &in0[i], 4, nullptr, FI_ADDR_UNSPEC, &in0[i]), 0);
    ASSERT_EQ(fi_recv(eps[1], &in1[i], 4, nullptr, FI_ADDR_UNSPEC, &in1[i]), 0);
    ASSERT_EQ(fi_injectdata(eps[1], &v, 4, 100 + i, to0), 0);
    ASSERT_EQ(fi_injectdata(eps[0], &v, 4, 200 + i, to1), 0);
  }
  fi_cq_entry ctx[2];
  fi_cq_data_entry data[2];
  size_t got_ctx = 0, got_data = 0;
  ASSERT_TRUE(PumpUntil([&] {
    ssize_t n = fi_cq_read(cqs[0], &ctx[got_ctx], 2 - got_ctx);
    if (n > 0) got_ctx += n;
    n = fi_cq_read(cqs[1], &data[got_data], 2 - got_data);
    if (n > 0) got_data += n;
    return got_ctx == 2 && got_data == 2;
  }));
  EXPECT_EQ(ctx[0].op_context, &in0[0]);
  EXPECT_EQ(ctx[1].op_context, &in0[1]);
  EXPECT_EQ(data[0].op_context, &in1[0]);
  EXPECT_EQ(data[0].data, 200u);
  EXPECT_EQ(data[1].data, 201u);
  EXPECT_EQ(data[1].len, 4u);
  EXPECT_EQ(data[1].flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
  for (fid_ep* ep : eps) EXPECT_EQ(fi_close(&ep->fid), 0);
  for (fid_cq* cq : cqs) EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&av->fid), 0);
  (void)a;
}

TEST_F(ProviderTest, TaggedReceivesMatchOnTagAndIgnoreMask) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  uint64_t any_1xx = 0, exact_200 = 0;
  ASSERT_EQ(fi_trecv(b.ep, &any_1xx, 8, nullptr, FI_ADDR_UNSPEC, 0x100, 0xff,
                     &any_1xx),
            0);
  ASSERT_EQ(fi_trecv(b.ep, &exact_200, 8, nullptr, FI_ADDR_UNSPEC, 0x200, 0,
                     &exact_200),
            0);
  uint64_t v200 = 200, v1ab = 0x1ab;
  ASSERT_EQ(fi_tsend(a.ep, &v200, 8, nullptr, a.peers[1], 0x200, nullptr), 0);
  ASSERT_EQ(fi_tsend(a.ep, &v1ab, 8, nullptr, a.peers[1], 0x1ab, nullptr), 0);
  ASSERT_TRUE(PumpUntil([&] { return b.got.size() == 2; }));
  EXPECT_EQ(b.got[0].op_context, &exact_200);
  EXPECT_EQ(b.got[0].tag, 0x200u);
  EXPECT_EQ(b.got[0].flags, FI_RECV | FI_TAGGED);
  EXPECT_EQ(b.got[1].op_context, &any_1xx);
  EXPECT_EQ(b.got[1].tag, 0x1abu);
  EXPECT_EQ(exact_200, 200u);
  EXPECT_EQ(any_1xx, 0x1abu);
}

TEST_F(ProviderTest, TaggedAndUntaggedMessagesDoNotMatchEachOther) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  uint32_t msg_in = 0, tag_in = 0, one = 1, two = 2;
  ASSERT_EQ(
      fi_trecv(b.ep, &tag_in, 4, nullptr, FI_ADDR_UNSPEC, 0, ~0ull, &tag_in),
      0);
  ASSERT_EQ(fi_send(a.ep, &one, 4, nullptr, a.peers[1], nullptr), 0);
  ASSERT_TRUE(PumpUntil([&] { return a.got.size() == 1; }));
  Pump(b);
  EXPECT_TRUE(b.got.empty());  // the message waits for an untagged receive
  ASSERT_EQ(fi_tsend(a.ep, &two, 4, nullptr, a.peers[1], 9, nullptr), 0);
  ASSERT_EQ(fi_recv(b.ep, &msg_in, 4, nullptr, FI_ADDR_UNSPEC, &msg_in), 0);
  ASSERT_TRUE(PumpUntil([&] { return b.got.size() == 2; }));
  EXPECT_EQ(msg_in, 1u);
  EXPECT_EQ(tag_in, 2u);
}

TEST_F(ProviderTest, DirectedReceiveTakesOnlyItsSource) {
  Open(3);
  Side& a = sides_[0];
  Side& b = sides_[1];
  Side& c = sides_[2];
  uint32_t from_c = 0, from_any = 0, va = 0xa, vc = 0xc;
  ASSERT_EQ(fi_recv(b.ep, &from_c, 4, nullptr, b.peers[2], &from_c), 0);
  ASSERT_EQ(fi_send(a.ep, &va, 4, nullptr, a.peers[1], nullptr), 0);
  ASSERT_TRUE(PumpUntil([&] { return a.got.size() == 1; }));
  EXPECT_TRUE(b.got.empty());
  ASSERT_EQ(fi_send(c.ep, &vc, 4, nullptr, c.peers[1], nullptr), 0);
  ASSERT_TRUE(PumpUntil([&] { return b.got.size() == 1; }));
  EXPECT_EQ(b.got[0].op_context, &from_c);
  EXPECT_EQ(from_c, 0xcu);
  EXPECT_EQ(b.got_from[0], b.peers[2]);
  ASSERT_EQ(fi_recv(b.ep, &from_any, 4, nullptr, FI_ADDR_UNSPEC, &from_any), 0);
  ASSERT_TRUE(PumpUntil([&] { return b.got.size() == 2; }));
  EXPECT_EQ(from_any, 0xau);
  EXPECT_EQ(b.got_from[1], b.peers[0]);
}

TEST_F(ProviderTest, RemoteCqDataArrivesAndInjectGivesNoCompletion) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  char in1[16], in2[16], in3[16];
  ASSERT_EQ(fi_recv(b.ep, in1, 16, nullptr, FI_ADDR_UNSPEC, in1), 0);
  ASSERT_EQ(fi_trecv(b.ep, in2, 16, nullptr, FI_ADDR_UNSPEC, 5, 0, in2), 0);
  ASSERT_EQ(fi_recv(b.ep, in3, 16, nullptr, FI_ADDR_UNSPEC, in3), 0);
  char msg[] = "hello";
  int sctx;
  ASSERT_EQ(
      fi_senddata(a.ep, msg, 6, nullptr, 0x1234567890ull, a.peers[1], &sctx),
      0);
  ASSERT_EQ(fi_tinjectdata(a.ep, msg, 6, 77, a.peers[1], 5), 0);
  ASSERT_EQ(fi_inject(a.ep, msg, 6, a.peers[1]), 0);
  ASSERT_TRUE(PumpUntil([&] { return b.got.size() == 3 && !a.got.empty(); }));
  EXPECT_EQ(b.got[0].flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
  EXPECT_EQ(b.got[0].data, 0x1234567890ull);
  EXPECT_EQ(b.got[1].flags, FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA);
  EXPECT_EQ(b.got[1].data, 77u);
  EXPECT_EQ(b.got[2].flags, FI_RECV | FI_MSG);
  EXPECT_STREQ(in3, "hello");
  Pump(a);
  ASSERT_EQ(a.got.size(), 1u);  // only the senddata completes
  EXPECT_EQ(a.got[0].op_context, &sctx);
  EXPECT_EQ(fi_inject(a.ep, msg, 4097, a.peers[1]), -FI_EINVAL);
}

TEST_F(ProviderTest, TruncatedMessageIsAnErrorNamingThePeer) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  char small[10];
  std::vector<uint8_t> big = Pattern(100, 3);
  ASSERT_EQ(fi_recv(b.ep, small, sizeof(small), nullptr, FI_ADDR_UNSPEC, small),
            0);
  ASSERT_EQ(fi_send(a.ep, big.data(), big.size(), nullptr, a.peers[1], nullptr),
            0);
  ASSERT_TRUE(PumpUntil([&] { return !b.errs.empty(); }));
  const fi_cq_err_entry& e = b.errs[0];
  EXPECT_EQ(e.err, FI_ETRUNC);
  EXPECT_EQ(e.op_context, small);
  EXPECT_EQ(e.len, 10u);
  EXPECT_EQ(e.olen, 90u);
  EXPECT_EQ(std::memcmp(small, big.data(), 10), 0);
  sockaddr_in sa;
  std::memcpy(&sa, a.name.data(), sizeof(sa));
  std::string peer = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  EXPECT_NE(b.err_texts[0].find(peer), std::string::npos) << b.err_texts[0];
  EXPECT_NE(b.err_texts[0].find("truncated"), std::string::npos);
}

TEST_F(ProviderTest, CancelledReceiveCompletesWithECanceled) {
  Open(2);
  Side& b = sides_[1];
  char buf[8];
  int ctx;
  ASSERT_EQ(fi_trecv(b.ep, buf, 8, nullptr, FI_ADDR_UNSPEC, 1, 0, &ctx), 0);
  EXPECT_EQ(fi_cancel(&b.ep->fid, &ctx), 0);
  EXPECT_EQ(fi_cancel(&b.ep->fid, &ctx), -FI_ENOENT);
  Pump(b);
  ASSERT_EQ(b.errs.size(), 1u);
  EXPECT_EQ(b.errs[0].err, FI_ECANCELED);
  EXPECT_EQ(b.errs[0].op_context, &ctx);
  EXPECT_EQ(b.errs[0].flags, FI_RECV | FI_TAGGED);
}

ssize_t TRecvMsg(fid_ep* ep, void* buf, size_t len, uint64_t tag, void* ctx,
                 uint64_t flags) {
  iovec iov{buf, len};
  fi_msg_tagged m{};
  m.msg_iov = &iov;
  m.iov_count = buf ? 1 : 0;
  m.addr = FI_ADDR_UNSPEC;
  m.tag = tag;
  m.context = ctx;
  return fi_trecvmsg(ep, &m, flags);
}

TEST_F(ProviderTest, PeekReportsClaimTakesAndAMissIsENoMsg) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  uint64_t v7 = 7, v8 = 8;
  ASSERT_EQ(fi_tsenddata(a.ep, &v7, 8, nullptr, 70, a.peers[1], 7, nullptr), 0);
  ASSERT_EQ(fi_tsend(a.ep, &v8, 8, nullptr, a.peers[1], 8, nullptr), 0);
  ASSERT_TRUE(PumpUntil([&] { return a.got.size() == 2; }));
  fi_context peek_ctx, claim_ctx, miss_ctx;
  // A peek reports the message and leaves it.
  ASSERT_EQ(TRecvMsg(b.ep, nullptr, 0, 7, &peek_ctx, FI_PEEK), 0);
  Pump(b);
  ASSERT_EQ(b.got.size(), 1u);
  EXPECT_EQ(b.got[0].op_context, &peek_ctx);
  EXPECT_EQ(b.got[0].len, 8u);
  EXPECT_EQ(b.got[0].data, 70u);
  EXPECT_EQ(b.got[0].flags, FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA);
  // Peek and claim: the message is set aside for this context ...
  ASSERT_EQ(TRecvMsg(b.ep, nullptr, 0, 7, &claim_ctx, FI_PEEK | FI_CLAIM), 0);
  // ... so a plain receive for tag 7 no longer sees it.
  uint64_t plain = 0;
  ASSERT_EQ(fi_trecv(b.ep, &plain, 8, nullptr, FI_ADDR_UNSPEC, 7, 0, &plain),
            0);
  uint64_t claimed = 0;
  ASSERT_EQ(TRecvMsg(b.ep, &claimed, 8, 0, &claim_ctx, FI_CLAIM), 0);
  Pump(b);
  ASSERT_EQ(b.got.size(), 3u);
  EXPECT_EQ(b.got[1].op_context, &claim_ctx);
  EXPECT_EQ(b.got[2].op_context, &claim_ctx);
  EXPECT_EQ(claimed, 7u);
  EXPECT_EQ(plain, 0u);
  // A peek that matches nothing completes with FI_ENOMSG.
  ASSERT_EQ(TRecvMsg(b.ep, nullptr, 0, 99, &miss_ctx, FI_PEEK), 0);
  Pump(b);
  ASSERT_EQ(b.errs.size(), 1u);
  EXPECT_EQ(b.errs[0].err, FI_ENOMSG);
  EXPECT_EQ(b.errs[0].op_context, &miss_ctx);
  // Peek with discard drops tag 8.
  ASSERT_EQ(TRecvMsg(b.ep, nullptr, 0, 8, &peek_ctx, FI_PEEK | FI_DISCARD), 0);
  uint64_t after = 0;
  ASSERT_EQ(fi_trecv(b.ep, &after, 8, nullptr, FI_ADDR_UNSPEC, 8, 0, &after),
            0);
  Pump(b);
  EXPECT_EQ(b.got.size(), 4u);  // the discarding peek's, not the receive's
  EXPECT_EQ(after, 0u);
}

TEST_F(ProviderTest, SendToASilentPeerFailsNamingPeerAndCause) {
  Open(1);
  Side& a = sides_[0];
  // A UDP port that is bound (so no ICMP) and never answers.
  int sock = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  socklen_t len = sizeof(sa);
  ASSERT_EQ(getsockname(sock, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  fi_addr_t dead;
  ASSERT_EQ(fi_av_insert(a.av, &sa, 1, &dead, 0, nullptr), 1);
  char msg[32] = {};
  int ctx;
  ASSERT_EQ(fi_send(a.ep, msg, sizeof(msg), nullptr, dead, &ctx), 0);
  bool failed = PumpUntil([&] { return !a.errs.empty(); });
  close(sock);
  ASSERT_TRUE(failed);
  EXPECT_EQ(a.errs[0].err, FI_EHOSTUNREACH);
  EXPECT_EQ(a.errs[0].op_context, &ctx);
  EXPECT_EQ(a.errs[0].prov_errno,
            static_cast<int>(FailureCause::kPeerUnreachable));
  std::string peer = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  EXPECT_NE(a.err_texts[0].find(peer), std::string::npos) << a.err_texts[0];
  EXPECT_NE(
      a.err_texts[0].find(FailureCauseName(FailureCause::kPeerUnreachable)),
      std::string::npos)
      << a.err_texts[0];
}

// B reads its CQ one entry at a time; returns the entry of the read that
// handed it a message (braid may then hold B's ack for B's answer).
fi_cq_tagged_entry ReadOne(FiTest* t, Side& a, Side& b) {
  fi_cq_tagged_entry e{};
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until) {
    fi_cq_tagged_entry ae;
    while (fi_cq_read(a.cq, &ae, 1) == 1) a.got.push_back(ae);
    if (fi_cq_read(b.cq, &e, 1) == 1) return e;
  }
  ADD_FAILURE() << "no message for B";
  return e;
}

TEST_F(ProviderTest, ReceiverThatStopsCallingStillAcknowledges) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  char in[64], out[64] = "ping";
  // A conversation in which B answers at once: braid learns that holding
  // B's acks for its answers pays.
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, in), 0);
    ASSERT_EQ(fi_recv(a.ep, out, sizeof(out), nullptr, FI_ADDR_UNSPEC, out), 0);
    ASSERT_EQ(fi_inject(a.ep, out, 8, a.peers[1]), 0);
    ASSERT_EQ(ReadOne(this, a, b).op_context, in);
    ASSERT_EQ(fi_inject(b.ep, in, 8, b.peers[0]), 0);
    ASSERT_TRUE(
        PumpUntil([&] { return a.got.size() == static_cast<size_t>(i + 1); }));
  }
  // The last message: B takes it and never calls again. Its progress
  // thread must still ack, or A fails the send after its peer timeout
  // (300 ms here).
  a.got.clear();
  int sctx;
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, in), 0);
  ASSERT_EQ(fi_send(a.ep, out, sizeof(out), nullptr, a.peers[1], &sctx), 0);
  ASSERT_EQ(ReadOne(this, a, b).op_context, in);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (a.got.empty() && a.errs.empty() &&
         std::chrono::steady_clock::now() < deadline) {
    Pump(a);
  }
  ASSERT_TRUE(a.errs.empty()) << a.err_texts[0];
  ASSERT_EQ(a.got.size(), 1u);
  EXPECT_EQ(a.got[0].op_context, &sctx);
}

TEST_F(ProviderTest, ForgedMessageWithoutProviderHeaderIsDropped) {
  Open(2);
  Side& a = sides_[0];
  Side& b = sides_[1];
  // A braid endpoint that is not a libfabric client sends B raw bytes.
  EndpointOptions o;
  auto raw = Endpoint::Open(o).value();
  NetAddr b_addr;
  sockaddr_in sa;
  std::memcpy(&sa, b.name.data(), sizeof(sa));
  b_addr = NetAddr::Ipv4(ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port));
  std::vector<uint8_t> junk = Pattern(40, 9);
  ASSERT_TRUE(raw->Send(b_addr, junk).ok());
  std::vector<Completion> done;
  auto ok = PumpUntil([&] {
    raw->Poll(&done);
    return !done.empty();
  });
  ASSERT_TRUE(ok);
  EXPECT_EQ(done[0].type, CompletionType::kSendDone);  // braid delivered it
  char in[8];
  uint32_t v = 5;
  ASSERT_EQ(fi_recv(b.ep, in, 8, nullptr, FI_ADDR_UNSPEC, in), 0);
  ASSERT_EQ(fi_send(a.ep, &v, 4, nullptr, a.peers[1], nullptr), 0);
  ASSERT_TRUE(PumpUntil([&] { return !b.got.empty(); }));
  EXPECT_EQ(b.got[0].len, 4u);  // the forged one matched nothing
  EXPECT_TRUE(b.errs.empty());
}

TEST_F(ProviderTest, AddressesRoundTripThroughTheAv) {
  Open(2);
  Side& a = sides_[0];
  sockaddr_in sa{};
  size_t len = sizeof(sa);
  ASSERT_EQ(fi_av_lookup(a.av, a.peers[1], &sa, &len), 0);
  EXPECT_EQ(len, sizeof(sockaddr_in));
  EXPECT_EQ(std::memcmp(&sa, sides_[1].name.data(), len), 0);
  char buf[64];
  size_t blen = sizeof(buf);
  fi_av_straddr(a.av, &sa, buf, &blen);
  EXPECT_EQ(std::string(buf),
            "127.0.0.1:" + std::to_string(ntohs(sa.sin_port)));
  char small[4];
  size_t slen = sizeof(small);
  EXPECT_EQ(fi_getname(&a.ep->fid, small, &slen), -FI_ETOOSMALL);
  EXPECT_EQ(slen, sizeof(sockaddr_in));
}

class SelectiveTest : public FiTest {};

TEST_F(SelectiveTest, OnlySendsAskingForACompletionGetOne) {
  SideOptions o;
  o.selective_tx = true;
  Open(2, o);
  Side& a = sides_[0];
  Side& b = sides_[1];
  char in[2][4];
  for (auto& buf : in) {
    ASSERT_EQ(fi_recv(b.ep, buf, 4, nullptr, FI_ADDR_UNSPEC, buf), 0);
  }
  uint32_t v = 1;
  int quiet, loud;
  ASSERT_EQ(fi_send(a.ep, &v, 4, nullptr, a.peers[1], &quiet), 0);
  iovec iov{&v, 4};
  fi_msg m{};
  m.msg_iov = &iov;
  m.iov_count = 1;
  m.addr = a.peers[1];
  m.context = &loud;
  ASSERT_EQ(fi_sendmsg(a.ep, &m, FI_COMPLETION), 0);
  ASSERT_TRUE(PumpUntil([&] { return b.got.size() == 2 && !a.got.empty(); }));
  Pump(a);
  ASSERT_EQ(a.got.size(), 1u);
  EXPECT_EQ(a.got[0].op_context, &loud);
}

class WaitTest : public FiTest {};

TEST_F(WaitTest, BlockingReadWakesForAMessage) {
  SideOptions o;
  o.wait_fd = true;
  Open(2, o);
  Side& a = sides_[0];
  Side& b = sides_[1];
  int fd = -1;
  ASSERT_EQ(fi_control(&b.cq->fid, FI_GETWAIT, &fd), 0);
  EXPECT_GE(fd, 0);
  fid* fids[] = {&b.cq->fid};
  EXPECT_EQ(fi_trywait(fabric_, fids, 1), 0);  // nothing there: may block
  fi_cq_tagged_entry e;
  EXPECT_EQ(fi_cq_sread(b.cq, &e, 1, nullptr, 50), -FI_EAGAIN);
  char in[8];
  uint64_t v = 99;
  ASSERT_EQ(fi_recv(b.ep, in, 8, nullptr, FI_ADDR_UNSPEC, in), 0);
  ASSERT_EQ(fi_send(a.ep, &v, 8, nullptr, a.peers[1], nullptr), 0);
  Pump(a);
  ssize_t n = fi_cq_sread(b.cq, &e, 1, nullptr, 5000);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(e.op_context, in);
  EXPECT_EQ(std::memcmp(in, &v, 8), 0);
}

}  // namespace
}  // namespace braid::libfabric::testing

// Helpers for tests that drive braid0 through libibverbs like an
// application: two contexts (two endpoints) in one process, connected QPs,
// registered buffers and completion polling with a deadline.
#ifndef BRAID_TESTS_VERBS_COMPAT_VERBS_TEST_UTIL_H_
#define BRAID_TESTS_VERBS_COMPAT_VERBS_TEST_UTIL_H_

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "braid/verbs.h"
#include "gtest/gtest.h"

namespace braid::verbs_compat::testing {

// Opens braid0 (the last device of the list). nullptr if it is not listed.
inline ibv_context* OpenBraid0() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return nullptr;
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n; ++i) {
    if (std::string(ibv_get_device_name(list[i])) == "braid0") {
      ctx = ibv_open_device(list[i]);
    }
  }
  ibv_free_device_list(list);
  return ctx;
}

// Polls `cq` until one completion arrives or `ms` pass. Returns false on
// timeout.
inline bool PollOne(ibv_cq* cq, ibv_wc* wc, int ms = 5000) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    const int n = ibv_poll_cq(cq, 1, wc);
    if (n < 0) return false;
    if (n == 1) return true;
  }
  return false;
}

// Polls for `count` completions (in arrival order).
inline std::vector<ibv_wc> PollMany(ibv_cq* cq, int count, int ms = 10000) {
  std::vector<ibv_wc> out;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (static_cast<int>(out.size()) < count &&
         std::chrono::steady_clock::now() < deadline) {
    ibv_wc wc[16];
    const int n = ibv_poll_cq(cq, 16, wc);
    for (int i = 0; i < n; ++i) out.push_back(wc[i]);
  }
  return out;
}

// Asserts that `cq` stays empty for `ms`.
// True if every byte of `v` is zero (nothing was written into it).
inline bool AllZero(const std::vector<uint8_t>& v) {
  return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
}

inline bool StaysEmpty(ibv_cq* cq, int ms = 50) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  ibv_wc wc;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ibv_poll_cq(cq, 1, &wc) != 0) return false;
  }
  return true;
}

// Ends the test process (exit status 1, `what` on stderr) unless destroyed
// within `limit`: bounds a test whose failure mode is a deadlock.
class Watchdog {
 public:
  Watchdog(std::chrono::milliseconds limit, const char* what)
      : thread_([this, limit, what] {
          std::unique_lock<std::mutex> lk(mu_);
          if (!cv_.wait_for(lk, limit, [this] { return done_; })) {
            std::fprintf(stderr, "watchdog: %s\n", what);
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// One side of a connection: context, PD, CQs, a QP and a registered
// buffer.
struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;
  ibv_cq* scq = nullptr;
  ibv_cq* rcq = nullptr;
  ibv_cq_ex* rcqx = nullptr;  // rcq as an extended CQ (PairOptions::cq_ex)
  ibv_srq* srq = nullptr;
  ibv_qp* qp = nullptr;
  std::vector<uint8_t> buf;
  ibv_mr* mr = nullptr;
  ibv_gid gid{};
  uint16_t lid = 0;

  uint64_t addr(size_t off = 0) const {
    return reinterpret_cast<uintptr_t>(buf.data()) + off;
  }
  ibv_sge Sge(size_t off, uint32_t len) const {
    return ibv_sge{addr(off), len, mr->lkey};
  }
};

struct PairOptions {
  ibv_qp_type type = IBV_QPT_RC;
  size_t buf_bytes = 1 << 20;
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  int qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                  IBV_ACCESS_REMOTE_ATOMIC;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 1;  // 10 us
  bool sq_sig_all = false;
  bool use_srq = false;
  bool with_channel = false;
  uint32_t max_inline = 256;
  uint32_t qkey = 0x11111111;
  uint8_t timeout = 14;  // local ACK timeout: 4.096 us x 2^timeout
  uint8_t retry_cnt = 7;
  int cq_depth = 256;
  // Create the CQs with ibv_create_cq_ex (polled with ibv_start_poll...).
  bool cq_ex = false;
};

// Two connected QPs on two braid0 contexts of this process.
class Pair {
 public:
  explicit Pair(const PairOptions& o = {}) : o_(o) {
    Open(a);
    Open(b);
    if (o.type == IBV_QPT_RC || o.type == IBV_QPT_UC) {
      ConnectRc(a, b);
      ConnectRc(b, a);
    } else {
      ConnectUd(a);
      ConnectUd(b);
    }
  }
  ~Pair() {
    Close(a);
    Close(b);
  }
  bool ok() const { return ok_; }
  // Destroys one side now, as an application exiting would (the
  // destructor then skips it).
  void CloseSide(Side& s) {
    Close(s);
    s = Side{};
  }

  Side a;
  Side b;

 private:
  void Open(Side& s) {
    s.ctx = OpenBraid0();
    if (s.ctx == nullptr) {
      ok_ = false;
      return;
    }
    s.pd = ibv_alloc_pd(s.ctx);
    if (o_.with_channel) s.channel = ibv_create_comp_channel(s.ctx);
    if (o_.cq_ex) {
      ibv_cq_init_attr_ex ca{};
      ca.cqe = o_.cq_depth;
      ca.channel = s.channel;
      ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
      ibv_cq_ex* scqx = ibv_create_cq_ex(s.ctx, &ca);
      s.rcqx = ibv_create_cq_ex(s.ctx, &ca);
      s.scq = scqx ? ibv_cq_ex_to_cq(scqx) : nullptr;
      s.rcq = s.rcqx ? ibv_cq_ex_to_cq(s.rcqx) : nullptr;
    } else {
      s.scq = ibv_create_cq(s.ctx, o_.cq_depth, nullptr, s.channel, 0);
      s.rcq = ibv_create_cq(s.ctx, o_.cq_depth, nullptr, s.channel, 0);
    }
    if (o_.use_srq) {
      ibv_srq_init_attr sa{};
      sa.attr.max_wr = 128;
      sa.attr.max_sge = 4;
      s.srq = ibv_create_srq(s.pd, &sa);
    }
    ibv_qp_init_attr qa{};
    qa.send_cq = s.scq;
    qa.recv_cq = s.rcq;
    qa.srq = s.srq;
    qa.qp_type = o_.type;
    qa.sq_sig_all = o_.sq_sig_all;
    qa.cap.max_send_wr = 128;
    qa.cap.max_recv_wr = 128;
    qa.cap.max_send_sge = 4;
    qa.cap.max_recv_sge = 4;
    qa.cap.max_inline_data = o_.max_inline;
    s.qp = ibv_create_qp(s.pd, &qa);
    s.buf.assign(o_.buf_bytes, 0);
    s.mr = ibv_reg_mr(s.pd, s.buf.data(), s.buf.size(), o_.access);
    ibv_port_attr pa;
    ibv_query_port(s.ctx, 1, &pa);
    s.lid = pa.lid;
    ibv_query_gid(s.ctx, 1, 0, &s.gid);
    ok_ = ok_ && s.pd && s.scq && s.rcq && s.qp && s.mr &&
          (!o_.use_srq || s.srq) && (!o_.with_channel || s.channel);
  }

  // RC, or UC with the attributes UC takes.
  void ConnectRc(Side& s, const Side& peer) {
    const bool uc = o_.type == IBV_QPT_UC;
    if (!ok_) return;
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_INIT;
    at.pkey_index = 0;
    at.port_num = 1;
    at.qp_access_flags = o_.qp_access;
    ok_ = ok_ && ibv_modify_qp(s.qp, &at,
                               IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                   IBV_QP_ACCESS_FLAGS) == 0;
    at = {};
    at.qp_state = IBV_QPS_RTR;
    at.path_mtu = IBV_MTU_4096;
    at.dest_qp_num = peer.qp->qp_num;
    at.rq_psn = 0x123;
    at.max_dest_rd_atomic = 16;
    at.min_rnr_timer = o_.min_rnr_timer;
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = peer.gid;
    at.ah_attr.grh.hop_limit = 1;
    at.ah_attr.port_num = 1;
    const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    ok_ = ok_ && ibv_modify_qp(s.qp, &at,
                               uc ? rtr
                                  : rtr | IBV_QP_MAX_DEST_RD_ATOMIC |
                                        IBV_QP_MIN_RNR_TIMER) == 0;
    at = {};
    at.qp_state = IBV_QPS_RTS;
    at.sq_psn = 0x123;
    at.timeout = o_.timeout;
    at.retry_cnt = o_.retry_cnt;
    at.rnr_retry = o_.rnr_retry;
    at.max_rd_atomic = 16;
    const int rts = IBV_QP_STATE | IBV_QP_SQ_PSN;
    ok_ = ok_ && ibv_modify_qp(s.qp, &at,
                               uc ? rts
                                  : rts | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                        IBV_QP_RNR_RETRY |
                                        IBV_QP_MAX_QP_RD_ATOMIC) == 0;
  }

  void ConnectUd(Side& s) {
    if (!ok_) return;
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    at.qkey = o_.qkey;
    ok_ = ok_ && ibv_modify_qp(s.qp, &at,
                               IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                   IBV_QP_QKEY) == 0;
    at = {};
    at.qp_state = IBV_QPS_RTR;
    ok_ = ok_ && ibv_modify_qp(s.qp, &at, IBV_QP_STATE) == 0;
    at = {};
    at.qp_state = IBV_QPS_RTS;
    at.sq_psn = 7;
    ok_ = ok_ && ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0;
  }

  void Close(Side& s) {
    if (s.qp) ibv_destroy_qp(s.qp);
    if (s.srq) ibv_destroy_srq(s.srq);
    if (s.mr) ibv_dereg_mr(s.mr);
    if (s.scq) ibv_destroy_cq(s.scq);
    if (s.rcq) ibv_destroy_cq(s.rcq);
    if (s.channel) ibv_destroy_comp_channel(s.channel);
    if (s.pd) ibv_dealloc_pd(s.pd);
    if (s.ctx) ibv_close_device(s.ctx);
  }

  PairOptions o_;
  bool ok_ = true;
};

// Posts one receive of `len` bytes at `off` of s's buffer.
inline int PostRecv(Side& s, uint64_t wr_id, size_t off, uint32_t len) {
  ibv_sge sge = s.Sge(off, len);
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return s.srq ? ibv_post_srq_recv(s.srq, &wr, &bad)
               : ibv_post_recv(s.qp, &wr, &bad);
}

// Posts one signaled send WR with the scatter-gather list `sges`.
inline int PostSendSgl(Side& s, uint64_t wr_id, ibv_wr_opcode op, ibv_sge* sges,
                       int num_sge, uint64_t raddr = 0, uint32_t rkey = 0,
                       unsigned flags = IBV_SEND_SIGNALED, uint32_t imm = 0) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.sg_list = sges;
  wr.num_sge = num_sge;
  wr.send_flags = flags;
  wr.imm_data = imm;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(s.qp, &wr, &bad);
}

// Posts one send WR with a single SGE.
inline int PostSend(Side& s, uint64_t wr_id, ibv_wr_opcode op, size_t off,
                    uint32_t len, uint64_t raddr = 0, uint32_t rkey = 0,
                    unsigned flags = IBV_SEND_SIGNALED, uint32_t imm = 0) {
  ibv_sge sge = s.Sge(off, len);
  return PostSendSgl(s, wr_id, op, &sge, 1, raddr, rkey, flags, imm);
}

inline void Fill(std::vector<uint8_t>& v, size_t off, size_t len,
                 uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; ++i) {
    x = x * 1103515245u + 12345u;
    v[off + i] = static_cast<uint8_t>(x >> 16);
  }
}

// Posts one signaled atomic (`op`: FETCH_AND_ADD or CMP_AND_SWP) whose
// result goes to 8 bytes at `off` of s's buffer.
inline int PostAtomic(Side& s, uint64_t wr_id, ibv_wr_opcode op, size_t off,
                      uint64_t raddr, uint32_t rkey, uint64_t compare_add,
                      uint64_t swap) {
  ibv_sge sge = s.Sge(off, 8);
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = raddr;
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.compare_add = compare_add;
  wr.wr.atomic.swap = swap;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(s.qp, &wr, &bad);
}

// The state `qp` reports (ibv_query_qp).
inline ibv_qp_state StateOf(ibv_qp* qp) {
  ibv_qp_attr at{};
  ibv_qp_init_attr ia{};
  EXPECT_EQ(ibv_query_qp(qp, &at, IBV_QP_STATE, &ia), 0);
  return at.qp_state;
}

// braid0's counters of `s`'s context.
inline braid_verbs_stats Stats(const Side& s) {
  braid_verbs_stats st;
  EXPECT_EQ(braid_verbs_query_stats(s.ctx, &st), 0);
  return st;
}

}  // namespace braid::verbs_compat::testing

#endif  // BRAID_TESTS_VERBS_COMPAT_VERBS_TEST_UTIL_H_

// fi_rma_test: RMA over the braid libfabric provider, as a C client sees
// it, through libfabric's public API only. One process, two endpoints on
// loopback, each in its own fabric and domain (so a key of one domain
// names nothing in the other): A is the initiator, B registers memory.
//
// usage: fi_rma_test PROVIDER_DIR
// Checks: fi_write, fi_writev, fi_writemsg, fi_inject_write, fi_writedata
// (the remote CQ data arrives in B's CQ), fi_read, fi_readv, fi_readmsg,
// every byte; a bad key, an out-of-bounds range, a region without the
// access, and a closed region each fail only their own operation with
// FI_EACCES and an error text naming the peer and the cause, and leave the
// target's memory untouched; valid operations work after them; 1 MiB
// writes and reads; atomics (fi_atomic, fi_fetch_atomic with FI_SUM and
// FI_ATOMIC_READ, fi_compare_atomic, fi_inject_atomic, what
// fi_query_atomic offers, and the same refusals). Prints one line per case;
// exit 0 when all pass, 1 at the first failure (no case waits more than 5 s).
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define FAIL(...)                                        \
  do {                                                   \
    fprintf(stderr, "fi_rma_test:%d: FAIL: ", __LINE__); \
    fprintf(stderr, __VA_ARGS__);                        \
    fputc('\n', stderr);                                 \
    exit(1);                                             \
  } while (0)
#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) FAIL(__VA_ARGS__); \
  } while (0)
#define CALL(expr)                                                    \
  do {                                                                \
    int rc_ = (int)(expr);                                            \
    if (rc_ != 0) FAIL("%s: %d (%s)", #expr, rc_, fi_strerror(-rc_)); \
  } while (0)

enum { kMaxStash = 64, kErrText = 256 };

struct Error {
  struct fi_cq_err_entry e;
  char text[kErrText];
};

struct Side {
  struct fid_fabric* fabric;
  struct fid_domain* domain;
  struct fid_av* av;
  struct fid_cq* cq;
  struct fid_ep* ep;
  fi_addr_t peer;  // the other side in this side's AV
  struct fi_cq_data_entry got[kMaxStash];
  int ngot;
  struct Error errs[kMaxStash];
  int nerrs;
};

static struct fi_info* info;
static struct Side a, b;

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void OpenSide(struct Side* s) {
  CALL(fi_fabric(info->fabric_attr, &s->fabric, NULL));
  CALL(fi_domain(s->fabric, info, &s->domain, NULL));
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA,
                               .wait_obj = FI_WAIT_NONE};
  CALL(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  CALL(fi_av_open(s->domain, &av_attr, &s->av, NULL));
  CALL(fi_endpoint(s->domain, info, &s->ep, NULL));
  CALL(fi_ep_bind(s->ep, &s->av->fid, 0));
  CALL(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
  CALL(fi_enable(s->ep));
}

static void Introduce(struct Side* s, struct Side* to) {
  char name[128];
  size_t len = sizeof(name);
  CALL(fi_getname(&to->ep->fid, name, &len));
  CHECK(fi_av_insert(s->av, name, 1, &s->peer, 0, NULL) == 1, "av_insert");
}

static void CloseSide(struct Side* s) {
  CALL(fi_close(&s->ep->fid));
  CALL(fi_close(&s->av->fid));
  CALL(fi_close(&s->cq->fid));
  CALL(fi_close(&s->domain->fid));
  CALL(fi_close(&s->fabric->fid));
}

// Reads what `s`'s CQ has (which drives its endpoint) into its stash.
static void Drive(struct Side* s) {
  struct fi_cq_data_entry e[8];
  ssize_t n = fi_cq_read(s->cq, e, 8);
  if (n > 0) {
    CHECK(s->ngot + n <= kMaxStash, "too many completions");
    memcpy(&s->got[s->ngot], e, n * sizeof(e[0]));
    s->ngot += (int)n;
  } else if (n == -FI_EAVAIL) {
    CHECK(s->nerrs < kMaxStash, "too many errors");
    struct Error* err = &s->errs[s->nerrs];
    memset(err, 0, sizeof(*err));
    err->e.err_data = err->text;
    err->e.err_data_size = sizeof(err->text);
    CHECK(fi_cq_readerr(s->cq, &err->e, 0) == 1, "fi_cq_readerr");
    err->text[kErrText - 1] = '\0';
    ++s->nerrs;
  } else {
    CHECK(n == -FI_EAGAIN, "fi_cq_read: %zd", n);
  }
}

// Drives both sides until `s` holds a completion or an error (or both
// sides `settle` seconds more, to catch what should not come); fails after
// 5 s.
static void WaitFor(struct Side* s) {
  const double end = Now() + 5;
  while (s->ngot == 0 && s->nerrs == 0) {
    CHECK(Now() < end, "no completion within 5 s");
    Drive(&a);
    Drive(&b);
  }
}

static void Settle(double seconds) {
  const double end = Now() + seconds;
  while (Now() < end) {
    Drive(&a);
    Drive(&b);
  }
}

// Expects exactly one completion at A, for `ctx`, with `flags`; nothing
// at B.
static void ExpectDone(void* ctx, uint64_t flags) {
  WaitFor(&a);
  CHECK(a.nerrs == 0, "error instead of completion: %s", a.errs[0].text);
  CHECK(a.ngot == 1, "%d completions", a.ngot);
  CHECK(a.got[0].op_context == ctx, "wrong context");
  CHECK((a.got[0].flags & (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE)) == flags,
        "flags 0x%llx", (unsigned long long)a.got[0].flags);
  CHECK(b.ngot == 0 && b.nerrs == 0, "the target got a CQ entry");
  a.ngot = 0;
}

// Expects exactly one error at A, for `ctx`: FI_EACCES, a text naming the
// target's address and containing `cause`.
static void ExpectError(void* ctx, uint64_t flags, const char* cause,
                        const char* peer) {
  WaitFor(&a);
  CHECK(a.ngot == 0, "completed, expected an error (%s)", cause);
  CHECK(a.nerrs == 1, "%d errors", a.nerrs);
  const struct Error* e = &a.errs[0];
  CHECK(e->e.op_context == ctx, "wrong context");
  CHECK(e->e.err == FI_EACCES, "err %d (%s)", e->e.err, fi_strerror(e->e.err));
  CHECK((e->e.flags & (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE)) == flags,
        "flags");
  CHECK(strstr(e->text, peer) != NULL, "text does not name %s: %s", peer,
        e->text);
  CHECK(strstr(e->text, cause) != NULL, "text does not say '%s': %s", cause,
        e->text);
  char buf[kErrText];
  const char* s =
      fi_cq_strerror(a.cq, e->e.prov_errno, e->e.err_data, buf, sizeof(buf));
  CHECK(s != NULL && strstr(s, cause) != NULL, "fi_cq_strerror: %s", s);
  CHECK(b.ngot == 0 && b.nerrs == 0, "the target got a CQ entry");
  printf("    error text: %s\n", e->text);
  a.nerrs = 0;
}

static void Fill(uint8_t* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (uint8_t)(i * 131 + seed + (i >> 9));
}

static void ExpectBytes(const uint8_t* got, const uint8_t* want, size_t n,
                        const char* what) {
  for (size_t i = 0; i < n; ++i) {
    CHECK(got[i] == want[i], "%s: byte %zu is %u, want %u", what, i, got[i],
          want[i]);
  }
}

static void ExpectFill(const uint8_t* p, size_t n, uint8_t v,
                       const char* what) {
  for (size_t i = 0; i < n; ++i) {
    CHECK(p[i] == v, "%s: byte %zu was touched", what, i);
  }
}

static uint64_t Addr(const void* p) { return (uint64_t)(uintptr_t)p; }

// A region of B's: `len` bytes with `access`.
struct Region {
  uint8_t* buf;
  size_t len;
  struct fid_mr* mr;
  uint64_t key;
};

static struct Region Register(size_t len, uint64_t access) {
  struct Region r = {.buf = malloc(len), .len = len};
  CHECK(r.buf != NULL, "malloc");
  memset(r.buf, 0x5a, len);
  CALL(fi_mr_reg(b.domain, r.buf, len, access, 0, 0, 0, &r.mr, NULL));
  r.key = fi_mr_key(r.mr);
  return r;
}

static void Unregister(struct Region* r) {
  if (r->mr) CALL(fi_close(&r->mr->fid));
  r->mr = NULL;
  free(r->buf);
}

static int ctx[8];  // operation contexts

static void TestWriteAndRead(struct Region* r) {
  uint8_t src[4096], dst[4096];
  Fill(src, sizeof(src), 1);
  CALL(fi_write(a.ep, src, sizeof(src), NULL, a.peer, Addr(r->buf) + 100,
                r->key, &ctx[0]));
  ExpectDone(&ctx[0], FI_RMA | FI_WRITE);
  ExpectBytes(r->buf + 100, src, sizeof(src), "fi_write");
  ExpectFill(r->buf, 100, 0x5a, "fi_write, before its range");
  memset(dst, 0, sizeof(dst));
  CALL(fi_read(a.ep, dst, sizeof(dst), NULL, a.peer, Addr(r->buf) + 100, r->key,
               &ctx[1]));
  ExpectDone(&ctx[1], FI_RMA | FI_READ);
  ExpectBytes(dst, src, sizeof(dst), "fi_read");
  // Zero bytes: checked and completed like any other.
  CALL(fi_write(a.ep, src, 0, NULL, a.peer, Addr(r->buf) + r->len, r->key,
                &ctx[2]));
  ExpectDone(&ctx[2], FI_RMA | FI_WRITE);
  CALL(fi_read(a.ep, dst, 0, NULL, a.peer, Addr(r->buf), r->key, &ctx[3]));
  ExpectDone(&ctx[3], FI_RMA | FI_READ);
  CALL(fi_write(a.ep, src, 0, NULL, a.peer, Addr(r->buf), r->key ^ 4, &ctx[4]));
  WaitFor(&a);
  CHECK(a.ngot == 0 && a.nerrs == 1 && a.errs[0].e.err == FI_EACCES,
        "an empty write to a bad key was not refused");
  a.nerrs = 0;
}

static void TestVectorsAndMsgs(struct Region* r) {
  uint8_t x[300], y[5000], back[5300];
  Fill(x, sizeof(x), 2);
  Fill(y, sizeof(y), 3);
  struct iovec iov[2] = {{x, sizeof(x)}, {y, sizeof(y)}};
  CALL(fi_writev(a.ep, iov, NULL, 2, a.peer, Addr(r->buf), r->key, &ctx[2]));
  ExpectDone(&ctx[2], FI_RMA | FI_WRITE);
  ExpectBytes(r->buf, x, sizeof(x), "fi_writev, first iov");
  ExpectBytes(r->buf + sizeof(x), y, sizeof(y), "fi_writev, second iov");
  // Read it back into three pieces.
  struct iovec riov[3] = {{back, 7}, {back + 7, 4000}, {back + 4007, 1293}};
  struct fi_rma_iov rma = {.addr = Addr(r->buf), .len = 5300, .key = r->key};
  struct fi_msg_rma msg = {.msg_iov = riov,
                           .iov_count = 3,
                           .addr = a.peer,
                           .rma_iov = &rma,
                           .rma_iov_count = 1,
                           .context = &ctx[3]};
  CALL(fi_readmsg(a.ep, &msg, FI_COMPLETION));
  ExpectDone(&ctx[3], FI_RMA | FI_READ);
  ExpectBytes(back, r->buf, sizeof(back), "fi_readmsg into three iovs");
  // fi_writemsg, then fi_readv.
  Fill(x, sizeof(x), 4);
  struct iovec wiov[1] = {{x, sizeof(x)}};
  rma.addr = Addr(r->buf) + 1000;
  rma.len = sizeof(x);
  msg.msg_iov = wiov;
  msg.iov_count = 1;
  msg.context = &ctx[4];
  CALL(fi_writemsg(a.ep, &msg, FI_COMPLETION));
  ExpectDone(&ctx[4], FI_RMA | FI_WRITE);
  ExpectBytes(r->buf + 1000, x, sizeof(x), "fi_writemsg");
  struct iovec rv[2] = {{back, 100}, {back + 100, 200}};
  CALL(fi_readv(a.ep, rv, NULL, 2, a.peer, Addr(r->buf) + 1000, r->key,
                &ctx[5]));
  ExpectDone(&ctx[5], FI_RMA | FI_READ);
  ExpectBytes(back, x, 300, "fi_readv");
}

static void TestWritedataAndInject(struct Region* r) {
  uint8_t src[512];
  Fill(src, sizeof(src), 5);
  CALL(fi_writedata(a.ep, src, sizeof(src), NULL, 0xfeedf00dcafe1234ull, a.peer,
                    Addr(r->buf) + 64, r->key, &ctx[6]));
  WaitFor(&a);
  const double end = Now() + 5;
  while (b.ngot == 0) {
    CHECK(Now() < end, "no remote CQ data at the target");
    Drive(&a);
    Drive(&b);
  }
  CHECK(b.nerrs == 0 && b.ngot == 1, "target: %d entries", b.ngot);
  CHECK(b.got[0].flags == (FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA),
        "target flags 0x%llx", (unsigned long long)b.got[0].flags);
  CHECK(b.got[0].data == 0xfeedf00dcafe1234ull, "remote CQ data");
  CHECK(b.got[0].op_context == NULL, "target context");
  b.ngot = 0;
  ExpectDone(&ctx[6], FI_RMA | FI_WRITE);
  ExpectBytes(r->buf + 64, src, sizeof(src), "fi_writedata");
  // fi_inject_write: no completion; the bytes arrive. The buffer may be
  // reused at once.
  uint8_t small[64];
  Fill(small, sizeof(small), 6);
  CALL(fi_inject_write(a.ep, small, sizeof(small), a.peer, Addr(r->buf) + 2000,
                       r->key));
  memset(small, 0, sizeof(small));
  uint8_t want[64];
  Fill(want, sizeof(want), 6);
  const double end2 = Now() + 5;
  while (memcmp(r->buf + 2000, want, sizeof(want)) != 0) {
    CHECK(Now() < end2, "fi_inject_write's bytes did not arrive");
    Drive(&a);
    Drive(&b);
  }
  Settle(0.05);
  CHECK(a.ngot == 0 && a.nerrs == 0, "fi_inject_write completed");
  CHECK(b.ngot == 0 && b.nerrs == 0, "the target got a CQ entry");
}

static void TestBadAccesses(struct Region* r, const char* peer) {
  uint8_t src[4096], dst[4096];
  Fill(src, sizeof(src), 7);
  memset(r->buf, 0x5a, r->len);
  // A key that B's domain never issued (A's own region's key).
  uint8_t mine[64];
  struct fid_mr* mine_mr;
  CALL(fi_mr_reg(a.domain, mine, sizeof(mine), FI_REMOTE_WRITE, 0, 0, 0,
                 &mine_mr, NULL));
  CALL(fi_write(a.ep, src, 64, NULL, a.peer, Addr(r->buf), fi_mr_key(mine_mr),
                &ctx[0]));
  ExpectError(&ctx[0], FI_RMA | FI_WRITE, "no memory region with that key",
              peer);
  CALL(fi_close(&mine_mr->fid));
  CALL(fi_write(a.ep, src, sizeof(src), NULL, a.peer, Addr(r->buf), r->key ^ 1,
                &ctx[1]));
  ExpectError(&ctx[1], FI_RMA | FI_WRITE, "no memory region with that key",
              peer);
  CALL(fi_read(a.ep, dst, sizeof(dst), NULL, a.peer, Addr(r->buf), r->key + 1,
               &ctx[2]));
  ExpectError(&ctx[2], FI_RMA | FI_READ, "no memory region with that key",
              peer);
  // Out of bounds: past the end, before the start.
  CALL(fi_write(a.ep, src, sizeof(src), NULL, a.peer,
                Addr(r->buf) + r->len - 100, r->key, &ctx[3]));
  ExpectError(&ctx[3], FI_RMA | FI_WRITE, "outside", peer);
  CALL(
      fi_write(a.ep, src, 16, NULL, a.peer, Addr(r->buf) - 8, r->key, &ctx[4]));
  ExpectError(&ctx[4], FI_RMA | FI_WRITE, "outside", peer);
  CALL(fi_read(a.ep, dst, sizeof(dst), NULL, a.peer, Addr(r->buf) + r->len - 1,
               r->key, &ctx[5]));
  ExpectError(&ctx[5], FI_RMA | FI_READ, "outside", peer);
  ExpectFill(r->buf, r->len, 0x5a, "after refused writes");
  // A region that grants reading only, and one that grants writing only.
  struct Region ro = Register(4096, FI_REMOTE_READ);
  CALL(fi_write(a.ep, src, 64, NULL, a.peer, Addr(ro.buf), ro.key, &ctx[6]));
  ExpectError(&ctx[6], FI_RMA | FI_WRITE, "does not grant", peer);
  ExpectFill(ro.buf, ro.len, 0x5a, "read-only region");
  struct Region wo = Register(4096, FI_REMOTE_WRITE);
  CALL(fi_read(a.ep, dst, 64, NULL, a.peer, Addr(wo.buf), wo.key, &ctx[7]));
  ExpectError(&ctx[7], FI_RMA | FI_READ, "does not grant", peer);
  // A closed region: its key names nothing, its memory is not touched.
  const uint64_t old_key = ro.key;
  CALL(fi_close(&ro.mr->fid));
  ro.mr = NULL;
  CALL(fi_write(a.ep, src, 64, NULL, a.peer, Addr(ro.buf), old_key, &ctx[0]));
  ExpectError(&ctx[0], FI_RMA | FI_WRITE, "no memory region with that key",
              peer);
  ExpectFill(ro.buf, ro.len, 0x5a, "closed region");
  CALL(fi_read(a.ep, dst, 64, NULL, a.peer, Addr(ro.buf), old_key, &ctx[1]));
  ExpectError(&ctx[1], FI_RMA | FI_READ, "no memory region with that key",
              peer);
  // An inject to a bad key is reported too (no context), never silent.
  CALL(fi_inject_write(a.ep, src, 8, a.peer, Addr(ro.buf), old_key));
  ExpectError(NULL, FI_RMA | FI_WRITE, "no memory region with that key", peer);
  Unregister(&ro);
  Unregister(&wo);
}

static void TestLarge(void) {
  const size_t n = 1 << 20;
  struct Region big = Register(n, FI_REMOTE_READ | FI_REMOTE_WRITE);
  uint8_t* src = malloc(n);
  uint8_t* dst = malloc(n);
  CHECK(src && dst, "malloc");
  Fill(src, n, 8);
  const double t0 = Now();
  CALL(fi_write(a.ep, src, n, NULL, a.peer, Addr(big.buf), big.key, &ctx[0]));
  ExpectDone(&ctx[0], FI_RMA | FI_WRITE);
  const double t1 = Now();
  ExpectBytes(big.buf, src, n, "1 MiB fi_write");
  Fill(big.buf, n, 9);
  memset(dst, 0, n);
  const double t2 = Now();
  CALL(fi_read(a.ep, dst, n, NULL, a.peer, Addr(big.buf), big.key, &ctx[1]));
  ExpectDone(&ctx[1], FI_RMA | FI_READ);
  const double t3 = Now();
  ExpectBytes(dst, big.buf, n, "1 MiB fi_read");
  printf("    1 MiB write %.0f us, read %.0f us\n", (t1 - t0) * 1e6,
         (t3 - t2) * 1e6);
  free(src);
  free(dst);
  Unregister(&big);
}

static void ExpectI64(const int64_t* got, const int64_t* want, int n,
                      const char* what) {
  for (int i = 0; i < n; ++i) {
    CHECK(got[i] == want[i], "%s: element %d is %lld, want %lld", what, i,
          (long long)got[i], (long long)want[i]);
  }
}

static void TestAtomics(const char* peer) {
  struct Region r = Register(64, FI_REMOTE_READ | FI_REMOTE_WRITE);
  int64_t* t = (int64_t*)r.buf;
  for (int i = 0; i < 8; ++i) t[i] = 10 * i;
  int64_t v[4] = {1, 2, 3, 4}, old[4];
  CALL(fi_atomic(a.ep, v, 4, NULL, a.peer, Addr(t), r.key, FI_INT64, FI_SUM,
                 &ctx[0]));
  ExpectDone(&ctx[0], FI_ATOMIC | FI_WRITE);
  ExpectI64(t, (int64_t[]){1, 12, 23, 34}, 4, "fi_atomic FI_SUM");
  CALL(fi_fetch_atomic(a.ep, v, 4, NULL, old, NULL, a.peer, Addr(t), r.key,
                       FI_INT64, FI_SUM, &ctx[1]));
  ExpectDone(&ctx[1], FI_ATOMIC | FI_READ);
  ExpectI64(old, (int64_t[]){1, 12, 23, 34}, 4, "fetched old values");
  ExpectI64(t, (int64_t[]){2, 14, 26, 38}, 4, "fi_fetch_atomic FI_SUM");
  CALL(fi_fetch_atomic(a.ep, NULL, 2, NULL, old, NULL, a.peer, Addr(t + 1),
                       r.key, FI_INT64, FI_ATOMIC_READ, &ctx[2]));
  ExpectDone(&ctx[2], FI_ATOMIC | FI_READ);
  ExpectI64(old, (int64_t[]){14, 26}, 2, "FI_ATOMIC_READ");
  // Compare and swap: taken when the compare value matches, not after.
  int64_t swap = 99, cmp = 2, prev = 0;
  for (int round = 0; round < 2; ++round) {
    CALL(fi_compare_atomic(a.ep, &swap, 1, NULL, &cmp, NULL, &prev, NULL,
                           a.peer, Addr(t), r.key, FI_INT64, FI_CSWAP,
                           &ctx[3]));
    ExpectDone(&ctx[3], FI_ATOMIC | FI_READ);
    CHECK(prev == (round == 0 ? 2 : 99), "FI_CSWAP old value %lld",
          (long long)prev);
    CHECK(t[0] == 99, "FI_CSWAP result %lld", (long long)t[0]);
  }
  // fi_inject_atomic: no completion, the update lands.
  const int64_t one = 1;
  CALL(fi_inject_atomic(a.ep, &one, 1, a.peer, Addr(t + 7), r.key, FI_INT64,
                        FI_SUM));
  const double end = Now() + 5;
  while (t[7] != 71) {
    CHECK(Now() < end, "fi_inject_atomic did not land");
    Drive(&a);
    Drive(&b);
  }
  Settle(0.02);
  CHECK(a.ngot == 0 && a.nerrs == 0, "fi_inject_atomic completed");
  // What is offered.
  struct fi_atomic_attr attr;
  CALL(fi_query_atomic(a.domain, FI_UINT32, FI_BOR, &attr, 0));
  CHECK(attr.size == 4 && attr.count == 1024, "query: %zu x %zu", attr.count,
        attr.size);
  CHECK(fi_query_atomic(a.domain, FI_FLOAT, FI_BOR, &attr, 0) == -FI_EOPNOTSUPP,
        "FI_BOR on floats offered");
  CALL(fi_query_atomic(a.domain, FI_DOUBLE, FI_CSWAP_LT, &attr,
                       FI_COMPARE_ATOMIC));
  size_t count = 0;
  CALL(fi_atomicvalid(a.ep, FI_DOUBLE, FI_SUM, &count));
  CHECK(count == 512, "fi_atomicvalid count %zu", count);
  CHECK(
      fi_fetch_atomicvalid(a.ep, FI_INT64, FI_MSWAP, &count) == -FI_EOPNOTSUPP,
      "FI_MSWAP offered as a fetching atomic");
  // Refusals: a bad key, out of bounds, a region without write access.
  CALL(fi_atomic(a.ep, v, 1, NULL, a.peer, Addr(t), r.key ^ 1, FI_INT64, FI_SUM,
                 &ctx[4]));
  ExpectError(&ctx[4], FI_ATOMIC | FI_WRITE, "no memory region with that key",
              peer);
  CALL(fi_fetch_atomic(a.ep, v, 2, NULL, old, NULL, a.peer, Addr(t + 7), r.key,
                       FI_INT64, FI_SUM, &ctx[5]));
  ExpectError(&ctx[5], FI_ATOMIC | FI_READ, "outside", peer);
  CHECK(t[7] == 71, "an out-of-bounds atomic changed memory");
  struct Region ro = Register(64, FI_REMOTE_READ);
  CALL(fi_atomic(a.ep, v, 1, NULL, a.peer, Addr(ro.buf), ro.key, FI_INT64,
                 FI_SUM, &ctx[6]));
  ExpectError(&ctx[6], FI_ATOMIC | FI_WRITE, "does not grant", peer);
  ExpectFill(ro.buf, ro.len, 0x5a, "read-only region");
  CALL(fi_fetch_atomic(a.ep, NULL, 1, NULL, old, NULL, a.peer, Addr(ro.buf),
                       ro.key, FI_INT64, FI_ATOMIC_READ, &ctx[7]));
  ExpectDone(&ctx[7], FI_ATOMIC | FI_READ);  // reading is granted
  CHECK(old[0] == 0x5a5a5a5a5a5a5a5all, "FI_ATOMIC_READ of a read-only region");
  Unregister(&ro);
  Unregister(&r);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fi_rma_test PROVIDER_DIR\n");
    return 2;
  }
  setenv("FI_PROVIDER_PATH", argv[1], 1);
  const double start = Now();
  struct fi_info* hints = fi_allocinfo();
  hints->caps = FI_MSG | FI_RMA | FI_ATOMIC;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  hints->fabric_attr->prov_name = strdup("braid");
  CALL(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
  fi_freeinfo(hints);
  CHECK(info->caps & FI_RMA, "no FI_RMA");
  CHECK((info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) &&
            (info->domain_attr->mr_mode & FI_MR_PROV_KEY),
        "mr_mode 0x%x", info->domain_attr->mr_mode);
  OpenSide(&a);
  OpenSide(&b);
  Introduce(&a, &b);
  Introduce(&b, &a);
  char peer[64];
  {
    struct sockaddr_storage ss;
    size_t len = sizeof(ss);
    CALL(fi_getname(&b.ep->fid, &ss, &len));
    size_t plen = sizeof(peer);
    fi_av_straddr(a.av, &ss, peer, &plen);
    // "fi_sockaddr_in://127.0.0.1:PORT": keep "127.0.0.1:PORT".
    const char* p = strstr(peer, "://");
    if (p) memmove(peer, p + 3, strlen(p + 3) + 1);
  }
  struct Region r = Register(64 * 1024, FI_REMOTE_READ | FI_REMOTE_WRITE);
  CHECK(r.key != 0, "key 0");

  struct {
    const char* name;
    int kind;
  } cases[] = {{"write and read 4 KiB", 0},
               {"writev, readmsg, writemsg, readv", 1},
               {"writedata with remote CQ data, inject_write", 2},
               {"bad key, out of bounds, no access, closed region", 3},
               {"valid write and read after the refused ones", 0},
               {"1 MiB write and read", 4},
               {"atomics: write, fetch, compare, inject, query, refusals", 5}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    const double t = Now();
    switch (cases[i].kind) {
      case 0:
        TestWriteAndRead(&r);
        break;
      case 1:
        TestVectorsAndMsgs(&r);
        break;
      case 2:
        TestWritedataAndInject(&r);
        break;
      case 3:
        TestBadAccesses(&r, peer);
        break;
      case 4:
        TestLarge();
        break;
      case 5:
        TestAtomics(peer);
        break;
    }
    printf("ok  %-50s %.1f ms\n", cases[i].name, (Now() - t) * 1e3);
  }
  Unregister(&r);
  CloseSide(&a);
  CloseSide(&b);
  fi_freeinfo(info);
  printf("fi_rma_test: all passed in %.2f s\n", Now() - start);
  return 0;
}

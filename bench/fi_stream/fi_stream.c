// fi-stream: streaming bandwidth of a libfabric RDM provider, as a client
// sees it through the public API only: the sender keeps a window of
// messages in flight (fi_send or fi_tsend), the receiver keeps as many
// receives posted; both busy-poll their CQ. fi_pingpong measures one
// message at a time; this is the like-for-like partner of
// `braid-perf --test bw` (bench/fi_ab.sh runs both).
//
//   fi-stream server --addr-file PATH [options]
//   fi-stream client --addr-file PATH [options]
// options (both sides the same): -p PROVIDER (default braid), -s SIZE
//   (65536), -n MESSAGES (2000), -w WINDOW (32), -m msg|tagged (msg),
//   -c on|off (off): the client writes message k's bytes from k, the
//   server checks every byte and that messages arrive in send order (their
//   receives complete in posting order); costs time, for tests.
//
// The server writes its endpoint name to PATH (through a temporary file and
// rename); the client reads it (waiting up to 10 s), sends its own name in
// a first message, and waits for the server's "ready" (the server then has
// its receives posted). The client times from its first data send to the
// server's "done", which the server sends once it holds every message.
// The client prints one line: "size messages seconds MB/s Gbit/s".
// Exit status 0 on success; 1 with a message naming the failed call, a
// completion error, or a 10 s stall; 2 on a bad flag.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAIL(...)                   \
  do {                              \
    fprintf(stderr, "fi-stream: "); \
    fprintf(stderr, __VA_ARGS__);   \
    fputc('\n', stderr);            \
    exit(1);                        \
  } while (0)
#define CALL(expr)                                          \
  do {                                                      \
    int rc_ = (int)(expr);                                  \
    if (rc_ != 0) FAIL("%s: %s", #expr, fi_strerror(-rc_)); \
  } while (0)

enum { kMaxWindow = 1024, kNameBytes = 256, kTag = 0x5eed };

struct Opts {
  int server;
  const char* addr_file;
  const char* provider;
  size_t size;
  long messages;
  int window;
  int tagged;
  int check;
};

struct Side {
  struct fi_info* info;
  struct fid_fabric* fabric;
  struct fid_domain* domain;
  struct fid_av* av;
  struct fid_cq* cq;
  struct fid_ep* ep;
  struct fid_mr* mr;
  void* desc;
  fi_addr_t peer;
  // Window slots of `size` bytes, then two control slots of kNameBytes
  // (one to send from, one to receive into).
  uint8_t* buf;
  struct fi_context ctx[kMaxWindow + 2];
};

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void Usage(const char* why) {
  fprintf(stderr,
          "fi-stream: %s\nusage: fi-stream server|client --addr-file PATH "
          "[-p PROVIDER] [-s SIZE] [-n MESSAGES] [-w WINDOW] "
          "[-m msg|tagged] [-c on|off]\n",
          why);
  exit(2);
}

static long ParseLong(const char* flag, const char* v, long lo, long hi) {
  char* end = NULL;
  const long x = strtol(v, &end, 10);
  if (v[0] == '\0' || *end != '\0' || x < lo || x > hi) {
    fprintf(stderr, "fi-stream: %s %s: want an integer in %ld..%ld\n", flag, v,
            lo, hi);
    exit(2);
  }
  return x;
}

// 0 for `no`, 1 for `yes`; anything else is a bad flag.
static int Choice(const char* flag, const char* v, const char* no,
                  const char* yes) {
  if (strcmp(v, no) == 0) return 0;
  if (strcmp(v, yes) == 0) return 1;
  fprintf(stderr, "fi-stream: %s %s: want %s or %s\n", flag, v, no, yes);
  exit(2);
}

static struct Opts ParseOpts(int argc, char** argv) {
  struct Opts o = {0, NULL, "braid", 65536, 2000, 32, 0, 0};
  if (argc < 2) Usage("missing server|client");
  if (strcmp(argv[1], "server") == 0) {
    o.server = 1;
  } else if (strcmp(argv[1], "client") != 0) {
    Usage("the first argument must be server or client");
  }
  for (int i = 2; i < argc; i += 2) {
    const char* f = argv[i];
    if (i + 1 >= argc) Usage("a flag is missing its value");
    const char* v = argv[i + 1];
    if (strcmp(f, "--addr-file") == 0) {
      o.addr_file = v;
    } else if (strcmp(f, "-p") == 0) {
      o.provider = v;
    } else if (strcmp(f, "-s") == 0) {
      o.size = (size_t)ParseLong(f, v, 1, 64L << 20);
    } else if (strcmp(f, "-n") == 0) {
      o.messages = ParseLong(f, v, 1, 1L << 30);
    } else if (strcmp(f, "-w") == 0) {
      o.window = (int)ParseLong(f, v, 1, kMaxWindow);
    } else if (strcmp(f, "-c") == 0) {
      o.check = Choice(f, v, "off", "on");
    } else if (strcmp(f, "-m") == 0) {
      o.tagged = Choice(f, v, "msg", "tagged");
    } else {
      fprintf(stderr, "fi-stream: unknown flag %s\n", f);
      Usage("bad flag");
    }
  }
  if (o.addr_file == NULL) Usage("--addr-file is required");
  return o;
}

static void Open(struct Side* s, const struct Opts* o) {
  struct fi_info* hints = fi_allocinfo();
  if (hints == NULL) FAIL("fi_allocinfo");
  hints->caps = o->tagged ? FI_TAGGED : FI_MSG;
  hints->mode = FI_CONTEXT;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  hints->fabric_attr->prov_name = strdup(o->provider);
  CALL(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &s->info));
  fi_freeinfo(hints);
  CALL(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
  CALL(fi_domain(s->fabric, s->info, &s->domain, NULL));
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT,
                               .wait_obj = FI_WAIT_NONE};
  CALL(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  CALL(fi_av_open(s->domain, &av_attr, &s->av, NULL));
  CALL(fi_endpoint(s->domain, s->info, &s->ep, NULL));
  CALL(fi_ep_bind(s->ep, &s->av->fid, 0));
  CALL(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
  CALL(fi_enable(s->ep));
  const size_t bytes = o->size * (size_t)o->window + 2 * kNameBytes;
  s->buf = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (s->buf == NULL) FAIL("no memory for %zu bytes of buffers", bytes);
  memset(s->buf, 0x5a, bytes);
  s->desc = NULL;
  if (s->info->domain_attr->mr_mode & FI_MR_LOCAL) {
    CALL(fi_mr_reg(s->domain, s->buf, bytes, FI_SEND | FI_RECV, 0, 0, 0, &s->mr,
                   NULL));
    s->desc = fi_mr_desc(s->mr);
  }
}

static void Close(struct Side* s) {
  CALL(fi_close(&s->ep->fid));
  if (s->desc != NULL) CALL(fi_close(&s->mr->fid));
  CALL(fi_close(&s->av->fid));
  CALL(fi_close(&s->cq->fid));
  CALL(fi_close(&s->domain->fid));
  CALL(fi_close(&s->fabric->fid));
  fi_freeinfo(s->info);
  free(s->buf);
}

static uint8_t* Slot(struct Side* s, const struct Opts* o, int i) {
  const size_t window_bytes = o->size * (size_t)o->window;
  return i < o->window
             ? s->buf + o->size * (size_t)i
             : s->buf + window_bytes + kNameBytes * (size_t)(i - o->window);
}

// Posts a send or a receive of `len` bytes at slot `i` (the control slots
// are window and window + 1); returns what the provider returned.
static ssize_t Post(struct Side* s, const struct Opts* o, int send, int i,
                    size_t len, fi_addr_t to) {
  void* ctx = &s->ctx[i];
  uint8_t* b = Slot(s, o, i);
  if (o->tagged) {
    return send
               ? fi_tsend(s->ep, b, len, s->desc, to, kTag, ctx)
               : fi_trecv(s->ep, b, len, s->desc, FI_ADDR_UNSPEC, kTag, 0, ctx);
  }
  return send ? fi_send(s->ep, b, len, s->desc, to, ctx)
              : fi_recv(s->ep, b, len, s->desc, FI_ADDR_UNSPEC, ctx);
}

// Reads one completion; returns its slot index, or -1 if none yet. A
// completion error ends the program with the provider's text.
static int Poll(struct Side* s) {
  struct fi_cq_entry e;
  const ssize_t n = fi_cq_read(s->cq, &e, 1);
  if (n == 1) return (int)((struct fi_context*)e.op_context - s->ctx);
  if (n == -FI_EAGAIN) return -1;
  if (n == -FI_EAVAIL) {
    struct fi_cq_err_entry err;
    memset(&err, 0, sizeof(err));
    fi_cq_readerr(s->cq, &err, 0);
    FAIL("completion error: %s (%s)", fi_strerror(err.err),
         fi_cq_strerror(s->cq, err.prov_errno, err.err_data, NULL, 0));
  }
  FAIL("fi_cq_read: %s", fi_strerror((int)-n));
}

static void PostRetry(struct Side* s, const struct Opts* o, int send, int i,
                      size_t len, fi_addr_t to, int* pending_slots) {
  const double give_up = Now() + 10;
  for (;;) {
    const ssize_t rc = Post(s, o, send, i, len, to);
    if (rc == 0) return;
    if (rc != -FI_EAGAIN) FAIL("post: %s", fi_strerror((int)-rc));
    if (Now() > give_up) FAIL("post stalled for 10 s");
    const int done = Poll(s);
    if (done >= 0 && pending_slots != NULL) pending_slots[done] = 0;
  }
}

// Waits for the completion of slot `want`; other completions are marked
// in `pending_slots` (may be NULL when none can come).
static void WaitFor(struct Side* s, int want, int* pending_slots) {
  const double give_up = Now() + 10;
  for (;;) {
    const int done = Poll(s);
    if (done == want) return;
    if (done >= 0 && pending_slots != NULL) pending_slots[done] = 0;
    if (done < 0 && Now() > give_up) FAIL("no completion for 10 s");
  }
}

static void WriteName(struct Side* s, const char* path) {
  char name[kNameBytes];
  size_t len = sizeof(name);
  CALL(fi_getname(&s->ep->fid, name, &len));
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE* f = fopen(tmp, "wb");
  if (f == NULL) FAIL("cannot write %s", tmp);
  if (fwrite(name, 1, len, f) != len || fclose(f) != 0) {
    FAIL("cannot write %s", tmp);
  }
  if (rename(tmp, path) != 0) FAIL("cannot rename %s to %s", tmp, path);
}

// Reads the server's endpoint name into `name` (kNameBytes), waiting up to
// 10 s for the file.
static void ReadName(const char* path, char* name) {
  const double give_up = Now() + 10;
  for (;;) {
    FILE* f = fopen(path, "rb");
    if (f != NULL) {
      const size_t n = fread(name, 1, kNameBytes, f);
      fclose(f);
      if (n > 0) return;
    }
    if (Now() > give_up) FAIL("no server address in %s after 10 s", path);
    usleep(10000);
  }
}

// Message k's byte i (check mode).
static uint8_t Pattern(long k, size_t i) {
  return (uint8_t)((uint64_t)k * 131u + i * 7u + (i >> 9));
}

static void Fill(uint8_t* b, size_t len, long k) {
  for (size_t i = 0; i < len; ++i) b[i] = Pattern(k, i);
}

static void Check(const uint8_t* b, size_t len, long k) {
  for (size_t i = 0; i < len; ++i) {
    if (b[i] != Pattern(k, i)) {
      FAIL(
          "message %ld: byte %zu is %u, want %u (wrong data, or messages "
          "out of order)",
          k, i, b[i], Pattern(k, i));
    }
  }
}

static void Server(struct Side* s, const struct Opts* o) {
  const int ctl = o->window, ctl_in = o->window + 1;
  int pending[kMaxWindow + 2] = {0};
  PostRetry(s, o, 0, ctl_in, kNameBytes, 0, NULL);
  WriteName(s, o->addr_file);
  WaitFor(s, ctl_in, NULL);  // the client's name
  if (fi_av_insert(s->av, Slot(s, o, ctl_in), 1, &s->peer, 0, NULL) != 1) {
    FAIL("fi_av_insert of the client's address");
  }
  for (int i = 0; i < o->window; ++i) {
    PostRetry(s, o, 0, i, o->size, 0, NULL);
    pending[i] = 1;
  }
  PostRetry(s, o, 1, ctl, 1, s->peer, pending);  // ready
  pending[ctl] = 1;
  long got = 0;
  // Check mode: receives complete in the order they were posted (the slot
  // of message k is k % window, reposted in turn).
  const double give_up_step = 10;
  double give_up = Now() + give_up_step;
  while (got < o->messages || pending[ctl]) {
    const int i = Poll(s);
    if (i < 0) {
      if (Now() > give_up) FAIL("server: no message for 10 s (%ld)", got);
      continue;
    }
    give_up = Now() + give_up_step;
    pending[i] = 0;
    if (i == ctl) continue;  // the ready message went out
    if (o->check) {
      if (i != (int)(got % o->window)) {
        FAIL("message %ld completed in slot %d, want %ld", got, i,
             got % o->window);
      }
      Check(Slot(s, o, i), o->size, got);
    }
    ++got;
    // Keep a receive posted for every message still to come.
    if (got + o->window <= o->messages) {
      PostRetry(s, o, 0, i, o->size, 0, pending);
      pending[i] = 1;
    }
  }
  PostRetry(s, o, 1, ctl, 1, s->peer, NULL);  // done
  WaitFor(s, ctl, NULL);
  unlink(o->addr_file);
}

static void Client(struct Side* s, const struct Opts* o) {
  const int ctl = o->window, ctl_in = o->window + 1;
  int busy[kMaxWindow + 2] = {0};
  char name[kNameBytes];
  ReadName(o->addr_file, name);
  if (fi_av_insert(s->av, name, 1, &s->peer, 0, NULL) != 1) {
    FAIL("fi_av_insert of the server's address");
  }
  size_t len = kNameBytes;
  CALL(fi_getname(&s->ep->fid, Slot(s, o, ctl), &len));
  PostRetry(s, o, 0, ctl_in, 1, 0, NULL);       // for "ready"
  PostRetry(s, o, 1, ctl, len, s->peer, NULL);  // our name
  busy[ctl] = busy[ctl_in] = 1;
  const double give_up_hello = Now() + 10;
  while (busy[ctl] || busy[ctl_in]) {
    const int i = Poll(s);
    if (i >= 0) busy[i] = 0;
    if (i < 0 && Now() > give_up_hello) FAIL("client: no ready for 10 s");
  }
  PostRetry(s, o, 0, ctl_in, 1, 0, NULL);  // for "done", later
  busy[ctl_in] = 1;
  const double start = Now();
  long sent = 0, completed = 0;
  double give_up = Now() + 10;
  while (completed < o->messages || busy[ctl_in]) {
    for (int i = 0; i < o->window && sent < o->messages; ++i) {
      if (busy[i]) continue;
      if (o->check) Fill(Slot(s, o, i), o->size, sent);
      const ssize_t rc = Post(s, o, 1, i, o->size, s->peer);
      if (rc == -FI_EAGAIN) break;
      if (rc != 0) FAIL("fi_send: %s", fi_strerror((int)-rc));
      busy[i] = 1;
      ++sent;
    }
    const int i = Poll(s);
    if (i < 0) {
      if (Now() > give_up) FAIL("client: no completion for 10 s");
      continue;
    }
    give_up = Now() + 10;
    busy[i] = 0;
    if (i < o->window) ++completed;
  }
  const double secs = Now() - start;
  const double bytes = (double)o->size * (double)o->messages;
  printf("%zu %ld %.6f %.1f %.3f\n", o->size, o->messages, secs,
         bytes / secs / 1e6, bytes * 8 / secs / 1e9);
}

int main(int argc, char** argv) {
  const struct Opts o = ParseOpts(argc, argv);
  struct Side s;
  memset(&s, 0, sizeof(s));
  Open(&s, &o);
  if (o.server) {
    Server(&s, &o);
  } else {
    Client(&s, &o);
  }
  Close(&s);
  return 0;
}

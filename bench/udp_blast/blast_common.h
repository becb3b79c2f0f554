// udp-blast: the raw-UDP baseline braid is compared against. Shared pieces:
// the tiny wire header of blast datagrams, options, clocks, statistics.
// This tool deliberately uses no braid protocol code: plain sockets with the
// same batching features braid's UDP backend uses (sendmmsg/recvmmsg, UDP
// GSO, UDP GRO), so "braid / udp-blast" measures the cost of the protocol.
#ifndef BRAID_BENCH_UDP_BLAST_BLAST_COMMON_H_
#define BRAID_BENCH_UDP_BLAST_BLAST_COMMON_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "braid/address.h"

namespace braid::blast {

// Every blast datagram starts with this header (host byte order: both ends
// run the same build on the same kind of machine).
struct Header {
  uint32_t magic = kMagic;
  uint8_t type = 0;
  uint8_t flags = 0;  // kFlagGro on kStart: receiver should enable UDP_GRO
  uint16_t reserved = 0;
  uint32_t run = 0;  // run id chosen by the client
  uint32_t seq = 0;  // datagram number within the run (data, ping)
  uint64_t a = 0;    // type-specific: sent count (end), datagrams (report),
                     // pings sent (lat end)
  uint64_t b = 0;    // sent bytes (end), bytes (report), pongs (lat end)
  uint64_t c = 0;    // send time ns (ping), receive duration ns (report)
  uint64_t d = 0;    // GRO buffers seen (report)

  static constexpr uint32_t kMagic = 0x544c4255;  // "UBLT"
  static constexpr uint8_t kFlagGro = 1;
};
static_assert(sizeof(Header) == 48, "blast header is 48 bytes");

enum Type : uint8_t {
  kStart = 1,     // client -> server: new run; server answers kStartAck
  kStartAck = 2,  //
  kData = 3,      // client -> server: counted, never answered
  kEnd = 4,       // client -> server: a = sent datagrams, b = sent bytes
  kReport = 5,    // server -> client: a = datagrams, b = bytes, c = ns
  kPing = 6,      // client -> server: echoed back as kPong
  kPong = 7,
  kLatEnd = 8,     // client -> server: lat run over; a = pings, b = pongs
  kLatEndAck = 9,  // server -> client (older servers ignore kLatEnd)
};

struct Options {
  std::string role;         // "server" or "client"
  std::string mode = "bw";  // client: "bw" or "lat"
  NetAddr addr;             // server: bind; client: server address
  uint32_t size = 0;        // datagram size (ParseArgs: the mode default)
  double seconds = 0;       // bw or lat duration (0 with count 0: bw 5 s)
  uint64_t count = 0;       // bw datagrams or lat iterations (lat: 10000)
  bool gso = true;
  bool gro = true;
  int burst = 64;          // datagrams per sendmmsg/recvmmsg
  int entropies = 1;       // client sender sockets (source ports)
  bool busy_poll = false;  // spin instead of blocking
  // lat client: connect() the socket to the server and send() (the kernel
  // keeps the route; without it every sendto looks one up).
  bool connect = false;
  bool json = false;
  bool once = false;  // server: exit after one run (bw or lat)
  bool help = false;  // -h/--help: print Usage() and exit 0
  // bw client: copy each datagram's payload (after the blast header) from
  // a source buffer of this many bytes, in turn, before sending it -- the
  // one user-space copy a transport with per-datagram headers makes from
  // the application's message into its datagram. 0 = off (send the same
  // prepared burst every time).
  uint64_t copy_from = 0;
  // bw client: send each datagram as two iovecs, the header (from the
  // prepared burst) and the payload taken in place from a source buffer of
  // this many bytes, in turn -- no user-space copy; the kernel copies from
  // 2 iovecs per datagram. 0 = off. Excludes copy_from.
  uint64_t iov_from = 0;
  int sndbuf = 4 << 20;
  int rcvbuf = 8 << 20;
};

// Parses argv (see Usage()). Returns InvalidArgument with a message; with
// -h/--help returns Options with only `help` set.
absl::StatusOr<Options> ParseArgs(int argc, char** argv);
std::string Usage();

// Monotonic clock in nanoseconds (tool code; never used in braid protocol).
int64_t NowNs();

// A UDP socket of addr's family, optionally bound to addr; buffers sized
// (FORCE variants first when privileged). Exits the process on failure with
// a message naming the syscall.
int OpenUdpSocket(const NetAddr& addr, bool bind_it, int sndbuf, int rcvbuf,
                  bool nonblocking);

// The p-th quantile (0..1) of `v` (sorted in place).
double Quantile(std::vector<double>& v, double p);

}  // namespace braid::blast

#endif  // BRAID_BENCH_UDP_BLAST_BLAST_COMMON_H_

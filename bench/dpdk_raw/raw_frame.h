// dpdk-raw frames: Ethernet + IPv4 + UDP (42 bytes of headers, the same as
// braid's frames over DPDK) with a 48-byte bench header at the start of the
// UDP payload. Frames are built once into template pools; the hot path only
// patches what changes.
#ifndef BRAID_BENCH_DPDK_RAW_RAW_FRAME_H_
#define BRAID_BENCH_DPDK_RAW_RAW_FRAME_H_

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace braid::dpdkraw {

// Ethernet (14) + IPv4 without options (20) + UDP (8).
inline constexpr uint32_t kHeadersBytes = 42;

// The bench header (host byte order: both ends run the same build).
struct BenchHeader {
  uint32_t magic = kMagic;
  uint8_t type = 0;
  uint8_t flags = 0;
  uint16_t reserved = 0;
  uint32_t run = 0;  // run id chosen by the client
  uint32_t seq = 0;  // ping number within the run
  uint64_t a = 0;    // kEnd: frames sent; kReport: frames; kLatEnd: pings
  uint64_t b = 0;    // kEnd: bytes sent; kReport: bytes; kLatEnd: pongs
  uint64_t c = 0;    // kReport: ns from the first to the last data frame
  uint64_t d = 0;

  static constexpr uint32_t kMagic = 0x57415244;  // "DRAW"
};
static_assert(sizeof(BenchHeader) == 48, "bench header is 48 bytes");

enum Type : uint8_t {
  kStart = 1,     // client -> server: a new run; answered with kStartAck
  kStartAck = 2,  //
  kData = 3,      // client -> server: counted, never answered
  kEnd = 4,       // client -> server: bw run over; answered with kReport
  kReport = 5,    //
  kPing = 6,      // client -> server: echoed back with addresses swapped
  kLatEnd = 8,    // client -> server: lat run over; answered with kLatEndAck
  kLatEndAck = 9,
};

// One end of a flow: MAC, IPv4 address and UDP port, in host byte order.
struct Endpoint {
  rte_ether_addr mac{};
  uint32_t ip = 0;
  uint16_t port = 0;
};

// The addresses the tool uses: the client sends from 10.0.0.1:9001 to the
// server at 10.0.0.2:9000 (MACs are the ports' own).
inline constexpr uint32_t kClientIp = 0x0a000001;
inline constexpr uint32_t kServerIp = 0x0a000002;
inline constexpr uint16_t kClientPort = 9001;
inline constexpr uint16_t kServerPort = 9000;

// Writes a whole frame of kHeadersBytes + payload_bytes into `out`: headers
// from `src` to `dst` (ECT(0), DF, TTL 64), `h` at the start of the payload,
// the rest of the payload filled with `fill`, the IPv4 and UDP checksums.
void WriteFrame(uint8_t* out, const Endpoint& src, const Endpoint& dst,
                const BenchHeader& h, uint32_t payload_bytes, uint8_t fill);

// Recomputes the UDP checksum of the single-segment frame `m` after its
// payload changed.
void UpdateUdpChecksum(rte_mbuf* m);

// A received frame that carries a bench header.
struct RxFrame {
  BenchHeader h;
  Endpoint src;
  Endpoint dst;
  uint32_t payload_bytes = 0;  // UDP payload, bench header included
};

// Why a received frame was dropped.
enum class Drop : uint8_t {
  kNone = 0,
  kShort,      // shorter than the headers say (or than the bench header)
  kNotIpv4,    // another ethertype, IP version or header length (options)
  kFragment,   // MF set or a fragment offset
  kNotUdp,     // another IP protocol
  kBadLength,  // IP/UDP lengths disagree with each other or the frame
  kNotBench,   // no bench magic
  kTrailing,   // bytes after the IP packet, beyond the 60-byte minimum
               // frame (e.g. two frames a port chained into one)
};
inline constexpr int kDropReasons = 8;

// Parses frame `m` (any number of segments; never reads past its end).
// Returns kNone and fills *out, or the reason it is not a bench frame.
Drop ParseFrame(const rte_mbuf* m, RxFrame* out);

// Turns frame `m` around in place: swaps the MACs, IPs and UDP ports. The
// checksums stay valid (their sums do not depend on the order).
void TurnAround(rte_mbuf* m);

// A pool of `n` mbufs each holding `frame_bytes` bytes of `frame` at its
// data offset, so an mbuf taken from it is a ready frame once its lengths
// are set (TakeFrames). Only frames of this template may be put in it.
absl::StatusOr<rte_mempool*> MakeTemplatePool(const std::string& name,
                                              unsigned n, const uint8_t* frame,
                                              uint32_t frame_bytes);

// Takes up to `n` frames of `pool` into `out` with their lengths set to
// `frame_bytes`; returns how many (0 when the pool is empty).
unsigned TakeFrames(rte_mempool* pool, uint32_t frame_bytes, rte_mbuf** out,
                    unsigned n);

}  // namespace braid::dpdkraw

#endif  // BRAID_BENCH_DPDK_RAW_RAW_FRAME_H_

// The burst interface every backend implements (kernel UDP, DPDK, verbs UD,
// the simulator). The endpoint moves packets only in bursts: no per-packet
// virtual call, no per-packet allocation.
#ifndef BRAID_BACKEND_BACKEND_H_
#define BRAID_BACKEND_BACKEND_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "braid/address.h"
#include "braid/stats.h"
#include "braid/time.h"
#include "wire/psn.h"

namespace braid::backend {

// The references a backend keeps to a message's bytes after TxBurst has
// returned (TxPacket::hold), for a backend that hands `tail` to a NIC by
// reference: the NIC reads it by DMA later. The sender's core owns it, one
// per message, at a stable address. Such a backend adds 1 to `refs` for
// each packet it keeps before TxBurst returns, and subtracts it when the
// NIC is done with the bytes (in a later call, or on the thread that frees
// the buffer: hence atomic). The core reuses or releases the bytes (and
// completes a zero-copy send) only once refs is 0.
struct TxHold {
  std::atomic<uint32_t> refs{0};
};

// One datagram to send: `len` bytes at `data`, followed on the wire by
// `tail_len` bytes at `tail` (a second piece, so a payload can leave from
// the application's buffer without a user-space copy; usually empty). Both
// are owned by the caller and must stay valid until TxBurst returns
// (backends copy or transmit synchronously) — except that `tail` stays
// valid longer for a backend that counts itself in `hold` (see TxHold).
struct TxPacket {
  NetAddr dst;
  wire::Entropy entropy =
      0;             // selects the source port / path; < EntropyCount()
  bool ect = false;  // mark ECT(0) so the network may set CE
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  const uint8_t* tail = nullptr;
  uint32_t tail_len = 0;
  // Which of this host's addresses the datagram leaves from: a tag an
  // RxPacket::local gave (the address the peer sent to, so the peer sees
  // the answer come from the address it knows), or 0 for the backend's own
  // choice (its bound address, or the route's when bound to the any-address).
  uint8_t local = 0;
  // A hint, which a backend may ignore: the next `run_follow` packets of the
  // burst are this one's siblings in one GSO run, with the same dst,
  // entropy, ect, local and size (each still has its own data and tail), and
  // valid if this one is. 0 = no claim. Whoever drops, adds or reorders
  // packets of a burst must clear it.
  uint8_t run_follow = 0;
  // Non-null (only when the backend KeepsTails()): the hold of the message
  // `tail` points into; the backend may keep `tail` past TxBurst by
  // counting itself in it.
  TxHold* hold = nullptr;

  // Datagram size on the wire (UDP payload).
  uint32_t size() const { return len + tail_len; }
  // Copies the whole datagram to `out` (at least size() bytes).
  void CopyTo(uint8_t* out) const;
};

// One received datagram. `data` is owned by the backend and valid until the
// next RxBurst call on the same backend.
struct RxPacket {
  NetAddr src;
  bool ce = false;  // the network marked Congestion Experienced
  uint8_t* data = nullptr;
  uint32_t len = 0;
  // When the datagram reached this host (the kernel's receive timestamp, on
  // the CLOCK_MONOTONIC scale of MonotonicNow), or Infinite if the backend
  // cannot tell. RTT samples end here, so time the datagram then spent
  // waiting for this process to run is not taken for network delay.
  TimeNs arrival = TimeNs::Infinite();
  // The local address the datagram was sent to, as a tag for
  // TxPacket::local (backend-defined, 1..255), or 0 when the backend does
  // not tell its addresses apart (bound to one address, or too many seen).
  uint8_t local = 0;
};

struct BackendCounters {
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_dropped = 0;  // accepted by TxBurst but dropped (e.g. ENOBUFS)
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t rx_dropped = 0;  // truncated, bad checksum, wrong family, ...
  // Datagrams larger than this side's MTU (the peer's is larger), taken.
  uint64_t rx_over_mtu = 0;
  uint64_t tx_syscalls = 0;
  uint64_t rx_syscalls = 0;
  // Segmentation offload (UDP GSO or the like); 0 where the backend has none.
  uint64_t gso_sends = 0;     // super-datagrams handed to the kernel / NIC
  uint64_t gso_segments = 0;  // datagrams carried inside them
  // Kernel arrival timestamps read (one per receive buffer; a GRO buffer
  // holds several datagrams). 0 while they are off (SetRxTimestamps).
  uint64_t rx_timestamps = 0;
  // Sockets (or queues) bound to one destination, which it then reaches
  // without per-datagram addressing; and sends that met an error the
  // network reported for an earlier datagram on such a socket.
  uint64_t connected_sockets = 0;
  uint64_t tx_icmp_errors = 0;
  // Test impairments applied to outbound datagrams (ImpairBackend); 0
  // without them.
  uint64_t impair_dropped = 0;
  uint64_t impair_corrupted = 0;  // discarded as a failed checksum would be
  uint64_t impair_duplicated = 0;
  uint64_t impair_reordered = 0;
  // Raw-Ethernet backends: drops by reason, ARP/ND, transmit copies.
  FrameStats frames;
  UdStats ud;  // the verbs UD backend
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Number of distinct entropy values this backend can realise; valid entropy
  // values are [0, EntropyCount()). Fixed for the backend's lifetime.
  virtual uint32_t EntropyCount() const = 0;

  // The address peers use to reach this endpoint.
  virtual NetAddr LocalAddress() const = 0;

  // True if this backend can send to (and hear from) peers of `family`:
  // its own family, plus IPv4 for an IPv6 socket bound to the any-address
  // that also takes IPv4 (dual-stack, IPV6_V6ONLY off).
  virtual bool Reaches(NetAddr::Family family) const {
    return family == LocalAddress().family;
  }

  // Largest datagram (UDP payload) this backend carries.
  virtual uint32_t MaxDatagram() const = 0;

  // Sends up to pkts.size() datagrams. Returns how many were taken; the rest
  // were not sent (transient back-pressure) and may be offered again.
  virtual size_t TxBurst(absl::Span<const TxPacket> pkts) = 0;

  // Receives up to out.size() datagrams without blocking. Returns the count.
  virtual size_t RxBurst(absl::Span<RxPacket> out) = 0;

  // A file descriptor that becomes readable when RxBurst has work, or -1.
  virtual int WaitFd() const { return -1; }

  // When RxBurst must be called again although WaitFd may stay quiet
  // (e.g. test impairments release held datagrams then), on the
  // CLOCK_MONOTONIC scale of MonotonicNow; Infinite if never.
  virtual TimeNs NextDeadline() const { return TimeNs::Infinite(); }

  // The CLOCK_MONOTONIC time the backend read right after taking the
  // datagrams of the last non-empty RxBurst from the kernel, so a caller
  // need not read the clock again; Infinite if the backend reads no clock.
  virtual TimeNs LastRxTime() const { return TimeNs::Infinite(); }

  // From now on, report (on) or stop reporting (off) when each datagram
  // reached this host in RxPacket::arrival. Datagrams already queued may be
  // stamped when they are read. A backend without such timestamps ignores
  // it (arrival stays Infinite).
  virtual void SetRxTimestamps(bool /*on*/) {}

  // True if this backend may keep packets' tails past TxBurst (zero-copy
  // transmit by reference); the core then gives each packet's message
  // hold. Fixed for the backend's lifetime.
  virtual bool KeepsTails() const { return false; }
  // Asks the backend to let go of the tails it keeps as soon as it can
  // (e.g. reclaim transmitted buffers now rather than at a later burst):
  // the core calls it while completions wait for holds.
  virtual void ReleaseTails() {}
  // The smallest tail this backend sends better uncopied than copied (the
  // core then leaves payloads of at least this size in the message's
  // buffer); 0 = the core's default (CoreConfig::min_uncopied_payload).
  virtual uint32_t MinUncopiedTail() const { return 0; }

  // Registers [addr, addr + len) as memory whose bytes may leave without a
  // copy (a backend whose NIC reads only registered memory, such as verbs
  // UD); a backend that needs no registration returns OK and does nothing.
  // Regions must not overlap. Errors name the cause (e.g. ResourceExhausted
  // when the NIC cannot pin more memory).
  virtual absl::Status RegisterMemory(const void* /*addr*/, size_t /*len*/) {
    return absl::OkStatus();
  }
  // Forgets a region RegisterMemory took (by its start address); the caller
  // must not have sends from it in flight. NotFound if there is none.
  virtual absl::Status DeregisterMemory(const void* /*addr*/) {
    return absl::OkStatus();
  }

  virtual BackendCounters counters() const = 0;
};

inline void TxPacket::CopyTo(uint8_t* out) const {
  if (len > 0) std::memcpy(out, data, len);
  if (tail_len > 0) std::memcpy(out + len, tail, tail_len);
}

}  // namespace braid::backend

#endif  // BRAID_BACKEND_BACKEND_H_

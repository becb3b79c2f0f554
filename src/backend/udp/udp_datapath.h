// The hot path of the kernel-UDP backend: batched sendmmsg/recvmmsg over
// sockets opened by udp_setup, with UDP GSO on send and UDP GRO on receive.
// All buffers and message arrays are allocated once, at construction.
#ifndef BRAID_BACKEND_UDP_UDP_DATAPATH_H_
#define BRAID_BACKEND_UDP_UDP_DATAPATH_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "backend/backend.h"
#include "backend/udp/local_addrs.h"
#include "backend/udp/udp_options.h"

namespace braid::backend {

// UDP-specific counters, beyond BackendCounters.
struct UdpCounters {
  uint64_t gso_sends = 0;      // super-datagrams sent with UDP_SEGMENT
  uint64_t gso_segments = 0;   // datagrams carried inside them
  uint64_t gso_fallbacks = 0;  // times the kernel refused GSO (now off)
  uint64_t tx_iovecs = 0;      // iovecs handed to the kernel (segments
                               // adjacent in memory share one)
  uint64_t gro_buffers = 0;    // received buffers that held >1 datagram
  uint64_t tx_eagain = 0;      // bursts cut short by a full socket buffer
  uint64_t tx_invalid = 0;     // bad entropy / length / destination
  uint64_t tx_errors = 0;      // sendmmsg errors other than EAGAIN
  uint64_t rx_truncated = 0;   // larger than the receive buffer
  // Control data cut short (MSG_CTRUNC): a CE mark or GRO segment size may
  // be missing from that buffer. Should stay 0.
  uint64_t rx_ctrl_truncated = 0;
  uint64_t rx_oversize = 0;  // larger than mtu_payload (accepted)
  uint64_t rx_bad_addr = 0;  // source address of an unexpected family
  uint64_t rx_errors = 0;    // recvmmsg errors other than EAGAIN
  uint64_t rx_ce = 0;        // datagrams that arrived CE-marked
  // Datagrams the kernel dropped because the receive socket buffer was full
  // (SO_RXQ_OVFL; cumulative, as of the last datagram read).
  uint64_t rx_kernel_drops = 0;
  // Kernel receive timestamps not trusted (clock stepped): arrival unknown.
  uint64_t rx_bad_timestamps = 0;
  // Entropy sockets connected to their first destination (UdpOptions::
  // connect), connects the kernel refused (that socket then sends by
  // address), and sends refused because of an ICMP error the kernel had
  // queued on a connected socket for an earlier datagram (the datagram
  // itself was not sent, and is offered once more at once).
  uint64_t tx_connected_sockets = 0;
  uint64_t tx_connect_failures = 0;
  uint64_t tx_icmp_errors = 0;
  // Bound to the any-address: sends whose source tag was unknown (they left
  // from the route's choice). The addresses seen and the datagrams that
  // found their table full: local_addrs().
  uint64_t tx_local_unknown = 0;
};

class UdpDatapath {
 public:
  // Uses (does not own) `rx_fd` and `tx_fds` (index = entropy), all of
  // socket family `family`. `gro_active`: the kernel accepted UDP_GRO on
  // rx_fd, so one received buffer may hold several datagrams.
  UdpDatapath(int family, int rx_fd, std::vector<int> tx_fds,
              const UdpOptions& opts, bool gro_active);
  UdpDatapath(const UdpDatapath&) = delete;
  UdpDatapath& operator=(const UdpDatapath&) = delete;

  // Sends pkts in order. Consecutive packets of one entropy go out in one
  // sendmmsg; with GSO, runs of equal-size packets to one destination become
  // one super-datagram. Returns how many packets were taken (sent, or
  // dropped and counted: bad entropy/length/destination, kernel errors other
  // than EAGAIN). Stops early only when a socket buffer is full (EAGAIN).
  size_t TxBurst(absl::Span<const TxPacket> pkts);

  // Receives up to out.size() datagrams with one receive syscall (none if
  // datagrams from the previous call are still pending, see RxPending;
  // after repeated empty calls, one datagram, see RxBurst in the .cc). GRO
  // buffers are split into their datagrams. Data stays valid until the next
  // call. Returns the count; when it equals out.size() call again before
  // waiting on the fd, since split GRO buffers may leave datagrams pending.
  size_t RxBurst(absl::Span<RxPacket> out);
  // CLOCK_MONOTONIC read right after the last receive syscall that returned
  // datagrams; Infinite before the first.
  TimeNs last_rx_time() const {
    return mono_now_ns_ > 0 ? TimeNs(mono_now_ns_) : TimeNs::Infinite();
  }

  // True if datagrams already read from the kernel wait for RxBurst (the
  // receive fd may then not be readable).
  bool RxPending() const { return rx_next_ < rx_count_; }

  // True while UDP GSO is in use (opts.gso and the kernel has not refused).
  bool gso_active() const { return gso_; }

  const BackendCounters& counters() const { return counters_; }
  const UdpCounters& udp_counters() const { return udp_; }
  // Bound to the any-address: the local addresses peers reached us at.
  const LocalAddrs& local_addrs() const { return local_; }

 private:
  // One message of a sendmmsg batch: packets [first, first + count) of the
  // caller's span, sent as one datagram or one GSO super-datagram.
  struct TxMsg {
    size_t first = 0;
    uint32_t count = 0;
    uint32_t bytes = 0;
    uint32_t seg = 0;  // segment size (the first packet's length)
    bool ect = false;
    bool closed = false;  // a short last segment ends the run
    uint8_t local = 0;    // source address tag (TxPacket::local)
  };
  // What recvmmsg returned for one buffer, decoded.
  struct RxMeta {
    NetAddr src;
    uint32_t len = 0;
    uint32_t seg = 0;  // UDP_GRO segment size, 0 = a single datagram
    bool ce = false;
    uint8_t local = 0;  // destination address tag (RxPacket::local)
    TimeNs arrival = TimeNs::Infinite();
    bool valid = false;
  };

  // Connection state of one entropy socket (UdpOptions::connect).
  enum class ConnState : uint8_t { kUnused, kConnected, kOff };
  struct TxConn {
    ConnState state = ConnState::kOff;
    NetAddr dst;
  };

  bool TxValid(const TxPacket& p) const;
  // True if entropy e's socket is connected to `dst`, so a datagram to it
  // goes without an address. Connects an unused socket (one syscall, the
  // first time the socket sends).
  bool ConnectedTo(wire::Entropy e, const NetAddr& dst);
  // Builds messages for packets from `i` on (same entropy, at most burst_
  // packets, stops at an invalid packet). Returns the number of messages.
  size_t BuildTxBatch(absl::Span<const TxPacket> pkts, size_t i);
  // Adds the TxPacket::run_follow siblings of pkts[*i] (just added to
  // tx_msgs_[m]) to that message, advancing *i, *npkt and *niov.
  void TakeRunFollowers(absl::Span<const TxPacket> pkts, size_t* i,
                        size_t* npkt, size_t* niov, size_t m);
  void FinishTxMsg(size_t m, const TxPacket& first);
  void DecodeRx(size_t j);
  // One receive syscall into rx_hdrs_[0, vlen): recvmsg for one slot,
  // else recvmmsg. Returns the messages filled, or -1 (errno set).
  int Receive(size_t vlen);
  // Restores the fields recvmmsg writes in rx_hdrs_[j].
  void ResetRxHeader(size_t j);
  // A kernel (CLOCK_REALTIME) timestamp on the CLOCK_MONOTONIC scale, using
  // the clock readings taken after the last receive; Infinite if implausible.
  TimeNs ToMonotonic(const timespec& ts);
  size_t DrainRx(absl::Span<RxPacket> out);

  const int family_;
  const int rx_fd_;
  const std::vector<int> tx_fds_;
  const uint32_t mtu_;
  const size_t burst_;
  const bool ecn_;
  const bool gro_;
  // Bound to the any-address: datagrams carry their destination address up
  // (IP_PKTINFO / IPV6_PKTINFO, enabled by udp_setup) and answers leave
  // from it.
  const bool track_local_;
  bool gso_;
  LocalAddrs local_;

  // Transmit scratch, sized burst_.
  std::vector<mmsghdr> tx_hdrs_;
  std::vector<iovec> tx_iov_;
  std::vector<sockaddr_storage> tx_addr_;
  std::vector<TxMsg> tx_msgs_;
  std::vector<uint8_t> tx_ctrl_;  // burst_ * kTxCtrl bytes
  std::vector<TxConn> tx_conn_;   // per entropy socket

  // Receive buffers: burst_ slots of 64 KiB, a little apart (see the .cc).
  std::vector<uint8_t> rx_data_;
  std::vector<mmsghdr> rx_hdrs_;
  std::vector<iovec> rx_iov_;
  std::vector<sockaddr_storage> rx_addr_;
  std::vector<uint8_t> rx_ctrl_;  // burst_ * kRxCtrl bytes
  std::vector<RxMeta> rx_meta_;
  size_t rx_count_ = 0;  // buffers filled by the last recvmmsg
  // rx_hdrs_[0, rx_dirty_) were written by the kernel (name/control
  // lengths, flags) and are reset before the next recvmmsg.
  size_t rx_dirty_ = 0;
  uint32_t rx_empty_polls_ = 0;     // consecutive receives that found nothing
  int64_t mono_now_ns_ = 0;         // CLOCK_MONOTONIC after the last receive
  int64_t real_minus_mono_ns_ = 0;  // CLOCK_REALTIME - CLOCK_MONOTONIC
  int64_t offset_read_ns_ = 0;      // mono time real_minus_mono_ns_ was read
  size_t rx_next_ = 0;              // next buffer to hand out
  uint32_t rx_off_ = 0;  // offset of the next datagram in that buffer

  BackendCounters counters_;
  UdpCounters udp_;
};

}  // namespace braid::backend

#endif  // BRAID_BACKEND_UDP_UDP_DATAPATH_H_

// Options for a braid endpoint. Every field has a documented default; a
// default-constructed struct gives a working endpoint on 127.0.0.1.
#ifndef BRAID_OPTIONS_H_
#define BRAID_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "braid/time.h"

namespace braid {

// How packets of a message travel.
enum class Mode : uint8_t {
  // Spray over all paths, accept in any order, repair losses selectively.
  kSpray,
  // The honest baseline modelling RoCE RC on a lossy network: one path,
  // in-order acceptance only, go-back-N on loss (NAK or timeout).
  kGoBackN,
};

enum class CcAlgorithm : uint8_t {
  kSwift,  // delay target + ECN (DCTCP-like) + loss above a threshold
  kNone,   // window fixed at its maximum; for comparison only
};

absl::StatusOr<Mode> ParseMode(absl::string_view s);       // "spray" | "gbn"
absl::StatusOr<CcAlgorithm> ParseCc(absl::string_view s);  // "swift" | "none"
const char* ModeName(Mode m);
const char* CcName(CcAlgorithm c);

// Protocol settings shared by every backend (and by the simulator).
struct ProtocolOptions {
  Mode mode = Mode::kSpray;
  // Entropy values (paths) per peer, 1..256. kGoBackN always uses 1.
  uint16_t paths = 16;
  // Datagrams sent on one path before the next is picked (1 = a new path per
  // datagram; 0 = the backend's default: one UDP GSO super-datagram over
  // kernel UDP (44 datagrams at MTU 1500, 7 at 9000), 1 in the
  // simulator). Short runs on one path let kernel UDP batch them (one
  // syscall, one GSO super-datagram, GRO at the receiver) while still
  // spreading every message over the paths.
  uint16_t spray_run = 0;
  // How each spray run's path is chosen, 1..8: of the next `spray_choices`
  // usable paths in round-robin order, the one with the least load (packets
  // in flight plus packets lost since the path last delivered one). 1 =
  // plain round robin; 2 (two choices) moves load off routes that queue or
  // drop while a dead-looking path can take at most twice its share.
  // docs/protocol.md §9.
  uint8_t spray_choices = 2;
  CcAlgorithm cc = CcAlgorithm::kSwift;
  // Largest message Send accepts, bytes. Hard ceiling 1 GiB.
  uint32_t max_message_bytes = 64u << 20;
  // Peers the endpoint keeps state for (1..16,777,216). When full, a new
  // peer takes the slot of, first, a peer that has proven nothing (no ack
  // of ours, docs/protocol.md "Peer table") and holds partial messages;
  // then of the longest-idle peer that has had nothing to send or ack for
  // at least peer_timeout; then (Send only) of any other peer that has
  // proven nothing and has nothing of ours to send. A peer evicted before
  // it was idle that long is not heard again (its frames are dropped) for
  // twice peer_timeout, so its sender fails what it had in flight instead
  // of resending what was delivered. If no peer qualifies, Send to a new
  // peer is ResourceExhausted.
  uint32_t max_peers = 1024;
  // Bytes the endpoint commits to partial (not yet complete) inbound
  // messages, over all peers; at least 1 MiB and twice max_message_bytes
  // (so the largest message fits in the half open to strangers). Memory is
  // committed in 64 KiB chunks as fragments land, never at the message length.
  // Peers that have proven nothing may fill only half of it; when that half or
  // the whole is full, peers that have proven nothing and hold partial messages
  // are evicted (least recently active first) and the fragment is dropped (the
  // sender resends it). 512 MiB: twice receive_queue_bytes, room for every
  // peer's credit in a busy endpoint, far below what a host has.
  uint64_t max_reassembly_bytes = 512ull << 20;
  // Messages accepted by Send and not yet completed, over all peers. Past
  // this, Send returns ResourceExhausted (retry after polling completions).
  uint32_t max_pending_sends = 16384;
  // Bytes of not-yet-delivered inbound data the endpoint holds per peer
  // (partial and order-held messages). Advertised to the peer as credit.
  uint64_t receive_budget_bytes = 64ull << 20;
  // Undelivered completed messages the application has not polled, over all
  // peers. No peer is credited more than the room left below it, and none
  // at all while above it (a slow reader is never overrun, the senders
  // wait). What a reader that stops polling ends up holding: about this,
  // plus per sending peer at most the credit it held when the room ran out
  // (never less than a session's initial 256 datagrams), plus a message.
  uint64_t receive_queue_bytes = 256ull << 20;
  // A peer that answers nothing for this long — or leaves one packet
  // unacknowledged for this long while acking others (it keeps refusing it)
  // — fails the sends in flight to it with kPeerUnreachable.
  DurationNs peer_timeout = DurationNs::Seconds(2);
  // Retransmission timer bounds. The RTO is the last resort (losses with
  // traffic behind them are found by the per-path gap and time rules); its
  // floor must sit above the host's scheduling jitter, or it fires
  // spuriously: 1 ms suits kernel UDP on a shared host, the simulator
  // (deterministic microsecond delays) uses 200 us.
  DurationNs min_rto = DurationNs::Millis(1);
  DurationNs max_rto = DurationNs::Millis(50);
  DurationNs initial_rtt = DurationNs::Micros(100);
  // An ack the repairing sender asked for at once (a re-send or tail probe
  // flagged ACK_NOW) or that answers a duplicate (our previous ack was
  // evidently lost) is sent twice, on two different paths, when it goes
  // alone: a dead return path then costs the sender another tail probe or an
  // RTO only if both copies die. No extra acks while nothing is lost.
  bool duplicate_urgent_acks = true;
  // Ack coalescing: ack after this many data packets or this delay.
  uint32_t ack_every_packets = 8;
  DurationNs ack_delay = DurationNs::Micros(10);
  // Congestion window bounds (bytes).
  uint64_t initial_cwnd_bytes = 512 * 1024;
  uint64_t max_cwnd_bytes = 64ull << 20;
  // Non-zero: a session starts at this window and doubles it every RTT up
  // to initial_cwnd_bytes until the first queueing signal (delay above
  // target, CE), so N senders starting at once put N x this, not
  // N x initial_cwnd_bytes, into their first RTT (incast: 64 senders x
  // 64 KiB fit a 16 MiB bottleneck queue; 64 x 512 KiB overflow it). Off
  // by default: while the window doubles, queues grow faster than the
  // per-path RTT estimates follow, and the time-based loss rule declares
  // queued packets lost (docs/congestion.md). 0: start at
  // initial_cwnd_bytes.
  uint64_t start_cwnd_bytes = 0;
  // Swift delay target above the path's minimum RTT. Zero = the backend's
  // default: 50 us in the simulator; 1 ms over kernel UDP, where (without NIC
  // timestamps) the measured RTT includes host scheduling and socket queueing
  // that no sender can drain, and a fabric-sized target only starves the
  // window.
  DurationNs cc_target_delay = DurationNs::Zero();
};

// The backend that moves an endpoint's datagrams. Each is compiled in by a
// CMake option; asking for one that is not is an error naming the option.
enum class BackendKind : uint8_t {
  kUdp,      // kernel UDP sockets (always built; settings in `udp`)
  kDpdk,     // raw Ethernet/IP/UDP over DPDK (BRAID_BACKEND_DPDK; settings
             // in `dpdk`)
  kVerbsUd,  // rdma-core UD queue pairs (BRAID_BACKEND_VERBS_UD; settings
             // in `ud`)
};

// "udp" | "dpdk" | "verbs_ud".
absl::StatusOr<BackendKind> ParseBackend(absl::string_view s);
const char* BackendName(BackendKind b);

// When the kernel-UDP backend asks for receive timestamps (SO_TIMESTAMPNS).
// They let RTT samples and ack delays start when a datagram reached the host
// rather than when the application read it, which matters when the
// application sleeps (blocking waits) between reads. They are not free: a
// busy-polled 64 B ping-pong is ~0.1 us (one machine) to ~1 us (another)
// slower per one-way trip with them on (docs/performance.md).
enum class RxTimestamps : uint8_t {
  // Off while the application busy-polls (a datagram is then read within
  // one Poll of its arrival, and the time of that read stands in); on for
  // good from the first Endpoint::Wait or Endpoint::fd call. A Poll that
  // comes more than UdpBackendOptions::rx_timestamps_poll_gap after the one
  // before (the thread was descheduled or busy elsewhere, so datagrams may
  // have waited unread and would look like network delay to congestion
  // control) turns them on too, until the Polls have been prompt again for
  // UdpBackendOptions::rx_timestamps_linger. kAlways turns them on from the
  // start.
  kAuto,
  kAlways,
  kNever,
};

// Kernel-UDP backend settings.
struct UdpBackendOptions {
  // First source port of the entropy sockets; 0 = ephemeral ports.
  uint16_t src_port_base = 0;
  // Entropy sockets (distinct source ports). 0 = twice the paths (at most
  // 256), leaving spare ports for recycling failed paths.
  uint16_t entropy_sockets = 0;
  bool gso = true;
  bool gro = true;
  bool ecn = true;
  int sndbuf_bytes = 4 << 20;
  int rcvbuf_bytes = 8 << 20;
  RxTimestamps rx_timestamps = RxTimestamps::kAuto;
  // kAuto: a gap between two Polls longer than this turns timestamps on. A
  // quarter of the smallest delay target (1 ms over UDP) bounds what an
  // unread datagram's wait can add to an RTT sample before then; a busy
  // poller's own gaps (a burst of receives and sends) stay well below it.
  DurationNs rx_timestamps_poll_gap = DurationNs::Micros(250);
  // kAuto: after a late Poll turned timestamps on, they go off again once no
  // Poll has been late for this long (a busy poller on a VM is descheduled
  // now and then; each such gap used to leave them on for good).
  DurationNs rx_timestamps_linger = DurationNs::Millis(10);
  // Connect each entropy socket to the first peer it sends to, so sends to
  // that peer skip the kernel's per-datagram route lookup (other peers are
  // still reached by address). Applies only when `bind` names a specific
  // IP, since a connect fixes a wildcard-bound socket's source IP.
  bool connect_sockets = true;
};

// DPDK backend settings (BackendKind::kDpdk; docs/dpdk.md). The endpoint
// writes the Ethernet, IP and UDP headers itself, so its frames are the ones
// a kernel-UDP endpoint sends: the two talk to each other. `bind` must name
// the endpoint's own IP (no any-address: there is no kernel to pick one);
// port 0 takes a random port in 32768..49151.
struct DpdkBackendOptions {
  // EAL arguments, separated by spaces (e.g. "--no-huge -m 512 --no-pci
  // --file-prefix=a --vdev=net_memif0,role=server,socket=/tmp/m.sock"). The
  // EAL is initialised once per process, by the first DPDK endpoint; a later
  // endpoint passes the same arguments or none.
  std::string eal_args;
  // The port: its name as DPDK knows it (a PCI address "0000:3b:00.0", or a
  // vdev name "net_memif0" created by eal_args), or a vdev's full device
  // arguments ("net_memif1,role=client,socket=/tmp/m1.sock"), which are
  // hot-plugged when no such port exists. "" = the only port there is.
  // One endpoint per port.
  std::string port;
  // The source MAC; "" = the port's own.
  std::string local_mac;
  // Next hops. `next_hop_mac` non-empty: every frame goes to that MAC (a
  // router, or the peer on a point-to-point link), no ARP/ND. Otherwise
  // peers inside bind's /prefix_len are resolved by ARP (IPv4) or Neighbor
  // Discovery (IPv6) and the rest through `gateway` (an IP; "" = everything
  // is on-link). The endpoint answers ARP/ND for its own IP either way.
  std::string next_hop_mac;
  std::string gateway;
  uint32_t prefix_len = 0;  // 0 = 24 for IPv4, 64 for IPv6
  // Source ports: entropy i sends from src_port_base + i (0 = 49152).
  uint16_t src_port_base = 0;
  // Entropy values (source ports). 0 = twice the paths (at most 256).
  uint16_t entropies = 0;
  // Descriptor ring sizes and mbufs in the endpoint's pool (0 = defaults:
  // 1024, 1024, 8191).
  uint16_t rx_ring = 0;
  uint16_t tx_ring = 0;
  uint32_t mbufs = 0;
  // Mark ECT(0) and read CE back, as the UDP backend does.
  bool ecn = true;
  // Use the port's IPv4/UDP checksum offloads where it has them; false
  // computes every checksum in software.
  bool checksum_offload = true;
};

// Verbs UD backend settings (BackendKind::kVerbsUd; docs/verbs-ud.md). The
// endpoint sends braid datagrams as the payload of an RDMA NIC's Unreliable
// Datagram service (RoCE v2, InfiniBand), one UD queue pair per endpoint.
// Its address is the queue pair's, "[gid]/qpn" (NetAddr::Family::kIbUd), and
// so are its peers'; `bind` is not used. Busy-polled (fd() is -1).
struct VerbsUdBackendOptions {
  // The device, as ibv_devices lists it ("mlx5_0"); "" = the first one.
  std::string device;
  uint8_t port = 1;        // the device's port (1-based)
  uint32_t gid_index = 0;  // the GID (show_gids; RoCE v2 + your IP)
  // Q_Key of every queue pair in the job (both ends must agree); the high
  // bit (privileged Q_Keys) is refused.
  uint32_t qkey = 0x1ba1d000;
  // Paths are address handles with their own GRH flow label, from which a
  // RoCE v2 NIC derives the UDP source port. 0 = twice the paths (at most
  // 256).
  uint16_t entropies = 0;
  // Send and receive queue depths (work requests), and every how many sends
  // one is signalled (the last of each burst always is). 0 = 512, 1024, 16.
  uint32_t send_queue = 0;
  uint32_t recv_queue = 0;
  uint32_t signal_every = 0;
  // Largest datagram; 0 = the port's active MTU (256..4096 bytes).
  uint32_t max_datagram = 0;
  // Address handles are kept for at most this many peers (each has one per
  // entropy); beyond it they are all released once no send uses them, and
  // made again as needed. 0 = 4096.
  uint32_t max_ah_peers = 0;
};

// Packet protection (docs/security.md). Both ends of a conversation must use
// the same mode and the same domain key; a datagram that fails its check is
// dropped and counted.
enum class SecurityMode : uint8_t {
  kNone,     // no protection (the default): as the wire format describes
  kAuth,     // every datagram authenticated (AES-GMAC); frames in clear
  kEncrypt,  // every datagram authenticated and its frames encrypted (AES-GCM)
};

// "none" | "auth" | "encrypt".
absl::StatusOr<SecurityMode> ParseSecurityMode(absl::string_view s);
const char* SecurityModeName(SecurityMode m);

struct SecurityOptions {
  SecurityMode mode = SecurityMode::kNone;
  // The security-domain key every endpoint of the domain shares: 16..64 raw
  // bytes (32 recommended), required unless mode is kNone. Per-peer-pair
  // packet keys are derived from it and both incarnations (HKDF-SHA256), so
  // a restart rekeys. Whoever holds it can forge and read the domain's
  // traffic.
  std::string domain_key;
};

// Reads a domain key from the file at `path`: exactly 32 raw bytes, or 64
// hex digits (either case) optionally followed by one newline. Errors:
// NotFound (no such file), PermissionDenied (unreadable, or readable by
// group or others: chmod 600 it), InvalidArgument (not a regular file, a
// wrong size, a character that is not a hex digit), each naming the path.
absl::StatusOr<std::string> LoadDomainKey(absl::string_view path);

struct EndpointOptions {
  // Local address to bind, "ip:port" or "[ip6]:port"; port 0 picks one.
  // Peers must be of the same family, except that "[::]:port" on a
  // dual-stack host (net.ipv6.bindv6only = 0) also reaches IPv4 peers.
  // Multicast and broadcast addresses are refused. An any-address endpoint
  // answers each peer from the address that peer sent to (IP_PKTINFO), so
  // a host's second address works too; a peer it reaches first, before
  // hearing from it, gets the source the kernel's route picks.
  std::string bind = "127.0.0.1:0";
  // IP MTU of the network; the largest datagram is derived from it
  // (minus IP and UDP headers). Loopback can use up to 65535.
  uint32_t mtu = 1500;
  // Which backend moves the datagrams.
  BackendKind backend = BackendKind::kUdp;
  ProtocolOptions protocol;
  UdpBackendOptions udp;
  DpdkBackendOptions dpdk;
  VerbsUdBackendOptions ud;
  // Packet authentication / encryption; off by default.
  SecurityOptions security;
  // Seed for incarnation and path choices; 0 = from the OS's randomness.
  // A fixed seed also fixes the key of the endpoint's unguessable values
  // (the incarnation each peer sees, challenge nonces): anyone who knows
  // the seed can forge them. For reproducible tests, not for production.
  uint64_t seed = 0;
};

}  // namespace braid

#endif  // BRAID_OPTIONS_H_

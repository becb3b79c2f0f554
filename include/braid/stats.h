// Counters a user of a transport expects to see: per endpoint, per peer and
// per path. All are cumulative since the endpoint opened unless noted.
#ifndef BRAID_STATS_H_
#define BRAID_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "braid/address.h"
#include "braid/time.h"

namespace braid {

// Per path of a peer (PeerStats::paths). The printers call the peer- and
// endpoint-level sums of penalties / recycles `path_penalties` /
// `path_recycles`.
struct PathStats {
  // This path's entropy value: which of the backend's sources it uses. For
  // the UDP backend that is the index of a source-port socket, not the
  // port itself (the port is UdpBackendOptions::src_port_base + entropy
  // when a base is set, else an ephemeral port the kernel chose).
  uint16_t entropy = 0;
  const char* health = "healthy";  // healthy | penalised | probing
  // Datagrams sent on this path, first sends and re-sends, data and control.
  uint64_t packets_sent = 0;
  // Their bytes as the endpoint wrote them (braid headers included, UDP/IP
  // not): unlike PeerStats::bytes_sent, which counts message payload once.
  uint64_t bytes_sent = 0;
  uint64_t packets_acked = 0;
  uint64_t packets_lost = 0;  // declared lost on this path (any rule)
  uint64_t ecn_marks = 0;
  // RTOs charged to this path: only when at most half of the paths had an
  // RTO-expired packet (a path-specific silence). An RTO that hits most
  // paths at once (the peer or the whole network is silent) is counted in
  // ReliabilityStats::rtos but blames no path.
  uint64_t timeouts = 0;
  uint64_t penalties = 0;  // times the path was penalised
  uint64_t recycles = 0;   // times its entropy was replaced by a fresh one
  DurationNs srtt;
  DurationNs min_rtt;
};

// Retransmission and loss counters of one sender (peer or endpoint total).
struct ReliabilityStats {
  // Re-sent packets, and below the same re-sends by the loss rule that
  // declared each one lost (they sum to `retransmits`). A packet declared
  // lost but acknowledged before its re-send went out counts in neither.
  uint64_t retransmits = 0;
  uint64_t retransmits_path_gap = 0;  // gap within one path (FIFO rule)
  uint64_t retransmits_time = 0;      // time-based (later packet acked)
  uint64_t retransmits_rto = 0;       // retransmission timeout
  uint64_t retransmits_tail_probe = 0;
  uint64_t retransmits_nak = 0;  // go-back-N NAK
  // Re-sent at once because the peer refused our first contact (it was
  // under pressure and challenged it instead: docs/protocol.md §13).
  uint64_t retransmits_refused = 0;
  uint64_t rtos = 0;
  // Re-sends proven unnecessary: the receiver echoed the original (or
  // reported the re-send as a duplicate) after it was declared lost. Only
  // provable cases: the receiver's duplicates_dropped can be higher.
  uint64_t spurious_retransmits = 0;
  // Time-rule loss declarations proven wrong (the copy arrived); each can
  // widen the sender's reorder window.
  uint64_t spurious_losses = 0;
  // Path-gap loss declarations proven wrong: the network reordered packets
  // inside one path (one UDP 5-tuple). Each can raise the peer's gap
  // threshold (PeerStats::gap_threshold).
  uint64_t spurious_gap_losses = 0;
  // RTOs proven premature (the network delivered what they gave up on);
  // their backoff and congestion-window cut are undone.
  uint64_t spurious_rtos = 0;
  // Paths moved to fresh entropies because their packets' RTOs came twice
  // or more in a row with nothing acknowledged in between (the peer silent
  // on every route tried; also counted in path_recycles).
  uint64_t rto_reroutes = 0;
};

// Why inbound datagrams were dropped.
struct DropStats {
  uint64_t truncated = 0;
  uint64_t bad_version = 0;
  uint64_t bad_type = 0;
  uint64_t bad_flags = 0;
  uint64_t reserved_nonzero = 0;
  uint64_t zero_incarnation = 0;
  uint64_t fragment_bounds = 0;
  uint64_t empty_fragment = 0;
  uint64_t sack_too_long = 0;
  uint64_t bad_ctrl_type = 0;
  uint64_t bad_preamble = 0;           // not a braid datagram
  uint64_t bad_placement = 0;          // malformed placement extension
  uint64_t inconsistent_fragment = 0;  // disagrees with earlier fragments
  uint64_t invalid_ack = 0;            // acks PSNs never sent
  uint64_t stale_incarnation = 0;      // from/to an incarnation that is gone
  uint64_t stale_need_sync = 0;  // NEED_SYNC about data of an earlier session
  // From a life learnt on trust (dst = 0) while another life claims the
  // same address, until one of them proves itself (protocol.md §3).
  uint64_t contested_incarnation = 0;
  uint64_t beyond_window = 0;  // PSN beyond the granted credit
  uint64_t duplicates = 0;     // PSN already received
  uint64_t no_peer_slot = 0;   // peer table full, nothing evictable
  uint64_t no_memory = 0;      // receive budget exhausted
  // The endpoint's reassembly memory (max_reassembly_bytes, or the half
  // open to peers that have proven nothing) was full.
  uint64_t reassembly_full = 0;
  // From a peer evicted before it was idle, while it is not heard
  // (ProtocolOptions::max_peers).
  uint64_t evicted_peer = 0;
  uint64_t unsynced = 0;                // data before the sender's SYNC
  uint64_t out_of_order_discarded = 0;  // go-back-N receiver: not the next PSN
  // A SYNC or STALE claiming a new incarnation of a known peer, or any frame
  // of a second life from the address of one taken on trust: dropped and
  // answered with a challenge; only the proof acts on the claim.
  uint64_t unproven_claim = 0;
  // A challenge reply whose nonce we did not issue (forged or too late).
  uint64_t bad_challenge_reply = 0;
  // A control reply (STALE, challenge, challenge reply) not sent: more
  // were queued than one transmit burst may carry.
  uint64_t ctrl_reply_overflow = 0;
  // A first contact while the peer table or reassembly memory was under
  // pressure: not given state, answered with a challenge; the sender's
  // answer creates its peer (protocol.md §13).
  uint64_t first_contact_challenged = 0;
  // Packet protection (SecurityOptions): a datagram that is not sealed, or
  // whose tag does not match; one whose key would need a derivation beyond
  // the rate unauthenticated input may cause; a frame naming incarnations
  // other than those its datagram was sealed for.
  uint64_t auth_failed = 0;
  uint64_t auth_no_key = 0;
  uint64_t auth_mismatch = 0;
  uint64_t malformed() const {
    return truncated + bad_version + bad_type + bad_flags + reserved_nonzero +
           zero_incarnation + fragment_bounds + empty_fragment + sack_too_long +
           bad_ctrl_type + bad_preamble + bad_placement + inconsistent_fragment;
  }
};

struct PeerStats {
  NetAddr addr;
  uint64_t peer_incarnation = 0;
  // It has shown it receives what we send to its address (it acked our
  // data or answered a challenge); peers that have not are evicted first
  // under pressure (protocol.md §13).
  bool proven = false;
  uint64_t packets_sent = 0;
  uint64_t bytes_sent = 0;  // payload bytes, first transmissions
  uint64_t packets_received = 0;
  uint64_t bytes_received = 0;
  uint64_t messages_sent = 0;  // completed kSendDone
  uint64_t messages_failed = 0;
  uint64_t messages_received = 0;
  uint64_t messages_placed = 0;   // received, placed directly
  uint64_t messages_refused = 0;  // received, placement refused
  // Ordered messages dropped after arriving whole: their stream_seq was
  // already delivered, or one with the same stream_seq is held. Their
  // packets were acknowledged, so the sender saw kSendDone. A sender that
  // follows the protocol never causes one (protocol.md, known gap 2).
  uint64_t ordered_refused = 0;
  uint64_t bytes_placed = 0;       // received, written straight to place
  uint64_t bytes_reassembled = 0;  // received, copied into message buffers
  uint64_t acks_sent = 0;
  uint64_t acks_received = 0;
  uint64_t ecn_marks_received = 0;  // CE on inbound data
  uint64_t ecn_echoes = 0;          // CE reported back by the peer
  ReliabilityStats reliability;
  DurationNs srtt;
  DurationNs min_rtt;
  DurationNs rto;
  uint64_t cwnd_bytes = 0;
  uint64_t bytes_in_flight = 0;
  // Seqs a path must deliver past a packet before a gap in it counts as a
  // loss: 1 while paths keep their order, learnt from spurious gap losses
  // when they do not (protocol.md §7).
  uint32_t gap_threshold = 1;
  uint64_t credit_blocked = 0;  // times the sender waited for receive credit
  uint32_t healthy_paths = 0;
  uint64_t penalties = 0;
  uint64_t recycles = 0;
  // Congestion signals (RTT samples, CE marks, losses) kept from congestion
  // control because their path was being steered away from (a penalised
  // path or a delay hot spot; protocol.md §9).
  uint64_t steered_signals = 0;
  // RTT samples whose ack came back on a slow return path (one of the
  // peer's source ports whose samples run far above the others'): not taken
  // for the data path's delay nor for congestion control (protocol.md §9).
  uint64_t slow_return_samples = 0;
  // Acks evidently lost on the way back (the peer re-sent data this side
  // had acknowledged while this side had nothing of its own in flight): the
  // last ack's path was moved to a fresh source port (protocol.md gap 14).
  uint64_t return_path_losses = 0;
  std::vector<PathStats> paths;
};

// Raw-Ethernet backends only (DPDK), where braid does what the kernel does
// for UDP sockets: frames dropped before the protocol saw them, by reason;
// its ARP / Neighbor Discovery traffic; and the transmit path's copies. All
// 0 over kernel UDP.
struct FrameStats {
  uint64_t rx_short = 0;          // shorter than its headers say
  uint64_t rx_ether_type = 0;     // not IPv4/IPv6/ARP (VLAN-tagged too)
  uint64_t rx_wrong_mac = 0;      // unicast to another MAC
  uint64_t rx_bad_ip_header = 0;  // version, header length
  uint64_t rx_ip_options = 0;     // IPv4 options / IPv6 extension headers
  uint64_t rx_fragment = 0;       // IP fragments (braid never fragments)
  uint64_t rx_wrong_ip = 0;       // to another IP
  uint64_t rx_not_udp = 0;        // other protocol
  uint64_t rx_bad_length = 0;     // IP/UDP lengths disagree
  uint64_t rx_bad_ip_checksum = 0;
  uint64_t rx_bad_udp_checksum = 0;
  uint64_t rx_wrong_port = 0;     // UDP to another port
  uint64_t rx_multi_segment = 0;  // chained frames, copied into one buffer
  uint64_t neighbor_requests_sent = 0;  // ARP requests / ND solicitations
  uint64_t neighbor_replies_sent = 0;   // answers for this endpoint's IP
  uint64_t neighbor_learnt = 0;         // MACs learnt from ARP/ND
  uint64_t neighbor_ignored = 0;        // unsolicited or malformed ARP/ND
  uint64_t tx_no_neighbor = 0;          // dropped: next hop's MAC not known yet
  uint64_t tx_no_mbuf = 0;              // bursts refused: mbuf pool empty
  // Transmit: message bytes the core left uncopied (a packet's tail) that
  // the backend copied into its frame, and frames whose tail left from the
  // message's memory by reference instead (zero-copy).
  uint64_t tx_copied_bytes = 0;
  uint64_t tx_zero_copy_frames = 0;
  uint64_t rx_drops() const {
    return rx_short + rx_ether_type + rx_wrong_mac + rx_bad_ip_header +
           rx_ip_options + rx_fragment + rx_wrong_ip + rx_not_udp +
           rx_bad_length + rx_bad_ip_checksum + rx_bad_udp_checksum +
           rx_wrong_port;
  }
};

// The verbs UD backend's own counters (all 0 for other backends).
struct UdStats {
  // Sends whose payload left by reference from registered memory
  // (Endpoint::RegisterMemory; zero copies) and sends copied into the
  // backend's registered buffers, with the bytes copied.
  uint64_t tx_zero_copy = 0;
  uint64_t tx_copied = 0;
  uint64_t tx_copied_bytes = 0;
  uint64_t ah_created = 0;
  // Datagrams dropped because no address handle could be made for them
  // (ibv_create_ah failed: the peer's GID is unreachable, or the NIC is out
  // of address handles); the protocol resends and, if it keeps failing,
  // fails the send when the peer times out.
  uint64_t ah_failures = 0;
  uint64_t ah_flushes = 0;     // times every address handle was released
  uint64_t sq_full = 0;        // bursts cut short by a full send queue
  uint64_t post_errors = 0;    // ibv_post_send/recv refused for another reason
  uint64_t tx_wc_errors = 0;   // send completions with an error status
  uint64_t rx_wc_errors = 0;   // receive completions with an error status
  uint64_t rx_bad_grh = 0;     // receives without a readable GRH/IP header
  uint64_t qp_recoveries = 0;  // queue pair reset from the error state
  // The device failed (IBV_EVENT_DEVICE_FATAL, or removed): nothing moves
  // any more, sends fail when their peers time out.
  uint64_t device_failed = 0;
};

struct EndpointStats {
  uint64_t incarnation = 0;
  uint64_t datagrams_sent = 0;
  uint64_t datagrams_received = 0;
  uint64_t packets_sent = 0;  // data frames, incl. retransmissions
  uint64_t packets_received = 0;
  uint64_t bytes_sent = 0;  // datagram bytes
  uint64_t bytes_received = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_failed = 0;
  uint64_t messages_received = 0;
  uint64_t messages_placed = 0;  // see PeerStats
  uint64_t messages_refused = 0;
  uint64_t ordered_refused = 0;  // see PeerStats
  uint64_t bytes_placed = 0;
  uint64_t bytes_reassembled = 0;
  uint64_t acks_sent = 0;
  uint64_t acks_received = 0;
  uint64_t ecn_marks_received = 0;
  uint64_t peers = 0;  // current
  uint64_t peers_created = 0;
  uint64_t peers_evicted = 0;  // all of the three below
  // Peer table full: an idle peer (nothing to send or ack for
  // peer_timeout) gave its slot.
  uint64_t peers_evicted_idle = 0;
  // Peer table full: a peer that had proven nothing gave its slot before
  // it was idle.
  uint64_t peers_evicted_unproven = 0;
  // Reassembly memory full: a peer that had proven nothing was evicted
  // with its partial messages.
  uint64_t peers_evicted_memory = 0;
  // Peers asleep now (idle for peer_timeout: windows and buffers freed,
  // under 1 KiB kept, counters included; they wake at their next send or
  // datagram), and peers put to sleep in total (protocol.md §13).
  uint64_t peers_asleep = 0;
  uint64_t peers_slept = 0;
  // Bytes committed to partial inbound messages now, the most ever, and the
  // cap (ProtocolOptions::max_reassembly_bytes).
  uint64_t reassembly_bytes = 0;
  uint64_t reassembly_peak_bytes = 0;
  uint64_t reassembly_max_bytes = 0;
  uint64_t peer_restarts = 0;  // a peer proved a new incarnation
  // A life taken on trust (a dst-0 first contact, perhaps forged) was
  // replaced by another that answered our challenge (protocol.md §3).
  uint64_t provisional_replaced = 0;
  uint64_t challenges_sent = 0;      // claims of a restart we challenged
  uint64_t challenges_answered = 0;  // challenges of peers we answered
  // Packet protection: datagrams not sent because they could not be sealed,
  // and key derivations refused (rate-limited; see drops.auth_no_key).
  uint64_t seal_failures = 0;
  uint64_t key_derivations_refused = 0;
  // Peers the transmit scan visited: grows with the peers that had
  // something to send, not with the peer table (idle peers cost a poll
  // nothing).
  uint64_t tx_peer_visits = 0;
  uint64_t penalties = 0;
  uint64_t recycles = 0;
  ReliabilityStats reliability;
  DropStats drops;
  // Backend (syscalls let a user check batching).
  uint64_t tx_syscalls = 0;
  uint64_t rx_syscalls = 0;
  uint64_t tx_backpressure = 0;
  uint64_t timer_syscalls = 0;  // timerfd_settime (re-arming the wake timer)
  uint64_t wait_syscalls = 0;   // epoll_wait in Wait()
  uint64_t gso_sends = 0;       // UDP GSO super-datagrams sent
  uint64_t gso_segments = 0;    // datagrams carried inside them
  // Kernel receive timestamps read (UdpBackendOptions::rx_timestamps; one
  // per receive buffer, and a GRO buffer holds several datagrams).
  uint64_t rx_timestamps = 0;
  // RxTimestamps::kAuto: times a late Poll turned them on, or prompt Polls
  // (rx_timestamps_linger) off again; a Wait or fd() call is not counted.
  uint64_t rx_timestamp_switches = 0;
  // Entropy sockets connected to a destination (UdpBackendOptions::
  // connect_sockets), and sends that found an ICMP error (port unreachable,
  // ...) queued on one for an earlier datagram and were offered again.
  uint64_t connected_sockets = 0;
  uint64_t tx_icmp_errors = 0;
  // Datagrams the backend dropped before the protocol saw them (truncated,
  // unexpected address family, ...), and datagrams larger than this
  // endpoint's MTU, which are accepted: nonzero means a peer is configured
  // with a larger MTU (its datagrams may be fragmented or dropped on a real
  // network with the smaller one).
  uint64_t rx_backend_drops = 0;
  uint64_t rx_over_mtu = 0;
  FrameStats frames;
  UdStats ud;
  // TEST impairments (EndpointOptions::impair) applied to this endpoint's
  // outbound datagrams; all 0 without them. A corrupted datagram is
  // discarded, as the receiver's UDP checksum would discard it.
  uint64_t impair_dropped = 0;
  uint64_t impair_corrupted = 0;
  uint64_t impair_duplicated = 0;
  uint64_t impair_reordered = 0;
};

// Human-readable multi-line table / one JSON object.
std::string FormatStatsTable(const EndpointStats& s);
std::string FormatStatsJson(const EndpointStats& s);
std::string FormatPeerStatsTable(const PeerStats& s);
std::string FormatPeerStatsJson(const PeerStats& s);

}  // namespace braid

#endif  // BRAID_STATS_H_

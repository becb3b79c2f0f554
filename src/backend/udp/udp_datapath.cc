#include "backend/udp/udp_datapath.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "backend/udp/udp_sockaddr.h"

namespace braid::backend {
namespace {

// Segments per GSO super-datagram: the kernel's UDP_MAX_SEGMENTS (64 on
// older kernels, 128 on newer ones; we use the smaller).
constexpr uint32_t kMaxGsoSegments = 64;
// Payload bytes per GSO super-datagram (IPv4 total length limit).
constexpr uint32_t kMaxGsoBytes = 65507;
// Receive buffer per slot: any UDP payload (a peer's MTU may be larger than
// ours) or a GRO buffer of coalesced datagrams.
constexpr size_t kRxSlotSize = 65536;
// Slots start one cache line apart modulo 64 KiB, so the heads of a burst's
// datagrams do not all fall into the same cache sets.
constexpr size_t kRxSlotStride = kRxSlotSize + 64;
// Control space per message: UDP_SEGMENT (u16) + TOS/TCLASS (int) + a
// source address (in6_pktinfo) on send; UDP_GRO (int) + TOS + TCLASS +
// SO_RXQ_OVFL (u32) + SCM_TIMESTAMPNS (timespec) + IP_PKTINFO +
// IPV6_PKTINFO on receive, with room to spare.
constexpr size_t kTxCtrl = 128;
constexpr size_t kRxCtrl = 256;
// Consecutive empty receives after which RxBurst asks for one datagram at a
// time (see there). Two, so that a caller that blocks after one empty poll
// (epoll) still reads a full burst when it wakes.
constexpr uint32_t kProbeAfterEmptyPolls = 2;
// How often the CLOCK_REALTIME - CLOCK_MONOTONIC offset is re-read.
constexpr int64_t kClockOffsetRefreshNs = 1000000;

// Errors a connected UDP socket reports for a hard ICMP error the kernel
// received about an earlier datagram (port or protocol unreachable,
// administratively filtered); the failing send sent nothing.
bool IsQueuedIcmpError(int err) {
  return err == ECONNREFUSED || err == EHOSTUNREACH || err == ENOPROTOOPT ||
         err == ENETUNREACH || err == EHOSTDOWN || err == ENONET;
}

}  // namespace

UdpDatapath::UdpDatapath(int family, int rx_fd, std::vector<int> tx_fds,
                         const UdpOptions& opts, bool gro_active)
    : family_(family),
      rx_fd_(rx_fd),
      tx_fds_(std::move(tx_fds)),
      mtu_(opts.mtu_payload),
      burst_(static_cast<size_t>(std::max(1, opts.burst))),
      ecn_(opts.ecn),
      gro_(gro_active),
      track_local_(opts.bind.IsWildcard()),
      gso_(opts.gso),
      tx_hdrs_(burst_),
      tx_iov_(2 * burst_),  // two pieces per datagram at most
      tx_addr_(burst_),
      tx_msgs_(burst_),
      tx_ctrl_(burst_ * kTxCtrl),
      tx_conn_(tx_fds_.size()),
      rx_data_(burst_ * kRxSlotStride),
      rx_hdrs_(burst_),
      rx_iov_(burst_),
      rx_addr_(burst_),
      rx_ctrl_(burst_ * kRxCtrl),
      rx_meta_(burst_) {
  if (opts.connect && !opts.bind.IsWildcard()) {
    for (TxConn& c : tx_conn_) c.state = ConnState::kUnused;
  }
  std::memset(tx_hdrs_.data(), 0, tx_hdrs_.size() * sizeof(mmsghdr));
  std::memset(rx_hdrs_.data(), 0, rx_hdrs_.size() * sizeof(mmsghdr));
  for (size_t j = 0; j < burst_; ++j) {
    rx_iov_[j].iov_base = &rx_data_[j * kRxSlotStride];
    rx_iov_[j].iov_len = kRxSlotSize;
    msghdr& h = rx_hdrs_[j].msg_hdr;
    h.msg_name = &rx_addr_[j];
    h.msg_iov = &rx_iov_[j];
    h.msg_iovlen = 1;
    h.msg_control = &rx_ctrl_[j * kRxCtrl];
    ResetRxHeader(j);
  }
}

void UdpDatapath::ResetRxHeader(size_t j) {
  msghdr& h = rx_hdrs_[j].msg_hdr;
  h.msg_namelen = sizeof(sockaddr_storage);
  h.msg_controllen = kRxCtrl;
  h.msg_flags = 0;
}

bool UdpDatapath::ConnectedTo(wire::Entropy e, const NetAddr& dst) {
  TxConn& c = tx_conn_[e];
  if (c.state == ConnState::kConnected) return c.dst == dst;
  if (c.state == ConnState::kOff) return false;
  sockaddr_storage ss;
  const socklen_t len = ToSockaddr(dst, family_, &ss);
  if (len == 0 ||
      connect(tx_fds_[e], reinterpret_cast<const sockaddr*>(&ss), len) != 0) {
    c.state = ConnState::kOff;
    ++udp_.tx_connect_failures;
    return false;
  }
  c.state = ConnState::kConnected;
  c.dst = dst;
  ++udp_.tx_connected_sockets;
  ++counters_.connected_sockets;
  return true;
}

// Inlined: it runs once per datagram sent (in BuildTxBatch and TxBurst).
[[gnu::always_inline]] inline bool UdpDatapath::TxValid(
    const TxPacket& p) const {
  if (p.entropy >= tx_fds_.size() || p.size() > mtu_) return false;
  if (p.data == nullptr && p.len != 0) return false;
  if (p.tail == nullptr && p.tail_len != 0) return false;
  if (p.dst.family == NetAddr::Family::kIpv4) return true;
  return p.dst.family == NetAddr::Family::kIpv6 && family_ == AF_INET6;
}

namespace {

// Appends [data, data + len) to the message's iovecs, extending the last
// iovec when the bytes follow it in memory (consecutive slots of the
// caller's batch: the kernel then copies one run).
[[gnu::always_inline]] inline void AddPiece(const uint8_t* data, uint32_t len,
                                            iovec* iov, size_t* niov,
                                            msghdr* h) {
  if (len == 0) return;
  if (h->msg_iovlen > 0) {
    iovec& last = iov[*niov - 1];
    if (static_cast<const uint8_t*>(last.iov_base) + last.iov_len == data) {
      last.iov_len += len;
      return;
    }
  }
  iov[*niov].iov_base = const_cast<uint8_t*>(data);
  iov[*niov].iov_len = len;
  ++*niov;
  ++h->msg_iovlen;
}

}  // namespace

void UdpDatapath::TakeRunFollowers(absl::Span<const TxPacket> pkts, size_t* i,
                                   size_t* npkt, size_t* niov, size_t m) {
  // Packet *i was just added to message m; its run_follow siblings (same
  // dst, entropy, ect, local and size: TxPacket::run_follow) join m
  // without the per-packet checks, as far as m's limits allow.
  const TxPacket& p = pkts[*i];
  TxMsg& cur = tx_msgs_[m];
  const uint32_t size = p.size();
  if (p.run_follow == 0 || cur.closed || size == 0 || size != cur.seg) return;
  size_t k = std::min<size_t>(p.run_follow, pkts.size() - *i - 1);
  k = std::min<size_t>(k, burst_ - *npkt);
  k = std::min<size_t>(k, kMaxGsoSegments - cur.count);
  k = std::min<size_t>(k, (kMaxGsoBytes - cur.bytes) / size);
  msghdr& h = tx_hdrs_[m].msg_hdr;
  for (size_t j = 1; j <= k; ++j) {
    const TxPacket& q = pkts[*i + j];
    AddPiece(q.data, q.len, tx_iov_.data(), niov, &h);
    AddPiece(q.tail, q.tail_len, tx_iov_.data(), niov, &h);
  }
  cur.count += static_cast<uint32_t>(k);
  cur.bytes += static_cast<uint32_t>(k) * size;
  *npkt += k;
  *i += k;
}

size_t UdpDatapath::BuildTxBatch(absl::Span<const TxPacket> pkts, size_t i) {
  const wire::Entropy e = pkts[i].entropy;
  size_t nmsg = 0;
  size_t npkt = 0;
  size_t niov = 0;
  for (; i < pkts.size() && npkt < burst_; ++i) {
    const TxPacket& p = pkts[i];
    if (p.entropy != e || !TxValid(p)) break;
    const bool ect = ecn_ && p.ect;
    const uint8_t local = track_local_ ? p.local : 0;
    const uint32_t size = p.size();
    if (gso_ && nmsg > 0) {
      TxMsg& cur = tx_msgs_[nmsg - 1];
      if (!cur.closed && cur.ect == ect && size > 0 && size <= cur.seg &&
          cur.count < kMaxGsoSegments && cur.bytes + size <= kMaxGsoBytes &&
          local == cur.local && p.dst == pkts[cur.first].dst) {
        ++cur.count;
        cur.bytes += size;
        cur.closed = size < cur.seg;
        msghdr& h = tx_hdrs_[nmsg - 1].msg_hdr;
        AddPiece(p.data, p.len, tx_iov_.data(), &niov, &h);
        AddPiece(p.tail, p.tail_len, tx_iov_.data(), &niov, &h);
        ++npkt;
        TakeRunFollowers(pkts, &i, &npkt, &niov, nmsg - 1);
        continue;
      }
    }
    TxMsg& m = tx_msgs_[nmsg];
    m.first = i;
    m.count = 1;
    m.bytes = size;
    m.seg = size;
    m.ect = ect;
    m.closed = size == 0;
    m.local = local;
    msghdr& h = tx_hdrs_[nmsg].msg_hdr;
    if (ConnectedTo(e, p.dst)) {
      h.msg_name = nullptr;  // the socket's own destination and route
      h.msg_namelen = 0;
    } else if (nmsg > 0 && p.dst == pkts[tx_msgs_[nmsg - 1].first].dst) {
      // Same peer as the previous message: share its converted address.
      const msghdr& prev = tx_hdrs_[nmsg - 1].msg_hdr;
      h.msg_name = prev.msg_name;
      h.msg_namelen = prev.msg_namelen;
    } else {
      h.msg_name = &tx_addr_[nmsg];
      h.msg_namelen = ToSockaddr(p.dst, family_, &tx_addr_[nmsg]);
    }
    h.msg_iov = &tx_iov_[niov];
    h.msg_iovlen = 0;
    h.msg_flags = 0;
    AddPiece(p.data, p.len, tx_iov_.data(), &niov, &h);
    AddPiece(p.tail, p.tail_len, tx_iov_.data(), &niov, &h);
    ++nmsg;
    ++npkt;
    if (gso_) TakeRunFollowers(pkts, &i, &npkt, &niov, nmsg - 1);
  }
  for (size_t m = 0; m < nmsg; ++m) FinishTxMsg(m, pkts[tx_msgs_[m].first]);
  return nmsg;
}

void UdpDatapath::FinishTxMsg(size_t m, const TxPacket& first) {
  const TxMsg& t = tx_msgs_[m];
  msghdr& h = tx_hdrs_[m].msg_hdr;
  uint8_t* ctrl = &tx_ctrl_[m * kTxCtrl];
  size_t used = 0;
  if (t.count > 1) {
    auto* c = reinterpret_cast<cmsghdr*>(ctrl);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    const uint16_t seg = static_cast<uint16_t>(t.seg);
    std::memcpy(CMSG_DATA(c), &seg, sizeof(seg));
    used += CMSG_SPACE(sizeof(uint16_t));
  }
  if (ecn_ && !t.ect) {
    // The socket default is ECT(0); this datagram must go out Not-ECT.
    auto* c = reinterpret_cast<cmsghdr*>(ctrl + used);
    const bool v4 = first.dst.family == NetAddr::Family::kIpv4;
    c->cmsg_level = v4 ? IPPROTO_IP : IPPROTO_IPV6;
    c->cmsg_type = v4 ? IP_TOS : IPV6_TCLASS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    const int tos = 0;
    std::memcpy(CMSG_DATA(c), &tos, sizeof(tos));
    used += CMSG_SPACE(sizeof(int));
  }
  if (t.local != 0) {
    const NetAddr* src = local_.Find(t.local);
    const size_t n = src == nullptr ? 0
                                    : WritePktinfo(family_, *src, ctrl + used,
                                                   kTxCtrl - used);
    if (n == 0) ++udp_.tx_local_unknown;  // leaves from the route's choice
    used += n;
  }
  h.msg_control = used == 0 ? nullptr : ctrl;
  h.msg_controllen = used;
}

size_t UdpDatapath::TxBurst(absl::Span<const TxPacket> pkts) {
  const size_t n = pkts.size();
  size_t i = 0;
  while (i < n) {
    if (!TxValid(pkts[i])) {
      ++counters_.tx_dropped;
      ++udp_.tx_invalid;
      ++i;
      continue;
    }
    const int fd = tx_fds_[pkts[i].entropy];
    const bool connected =
        tx_conn_[pkts[i].entropy].state == ConnState::kConnected;
    const size_t nmsg = BuildTxBatch(pkts, i);
    const size_t batch_end =
        tx_msgs_[nmsg - 1].first + tx_msgs_[nmsg - 1].count;
    size_t m = 0;
    bool rebuild = false;
    bool icmp_retried = false;  // at most one retry per batch
    while (m < nmsg) {
      ++counters_.tx_syscalls;
      // One message (a lone reply, or one GSO run): sendmsg, which skips
      // sendmmsg's per-message loop and length write-back.
      const int r =
          nmsg - m == 1
              ? (sendmsg(fd, &tx_hdrs_[m].msg_hdr, MSG_DONTWAIT) < 0 ? -1 : 1)
              : sendmmsg(fd, &tx_hdrs_[m], static_cast<unsigned>(nmsg - m),
                         MSG_DONTWAIT);
      if (r > 0) {
        for (size_t k = m; k < m + static_cast<size_t>(r); ++k) {
          const TxMsg& t = tx_msgs_[k];
          counters_.tx_packets += t.count;
          udp_.tx_iovecs += tx_hdrs_[k].msg_hdr.msg_iovlen;
          counters_.tx_bytes += t.bytes;
          if (t.count > 1) {
            ++udp_.gso_sends;
            udp_.gso_segments += t.count;
            ++counters_.gso_sends;
            counters_.gso_segments += t.count;
          }
        }
        m += static_cast<size_t>(r);
        continue;
      }
      const int err = r < 0 ? errno : EAGAIN;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        ++udp_.tx_eagain;
        return tx_msgs_[m].first;
      }
      const TxMsg& t = tx_msgs_[m];
      if (connected && IsQueuedIcmpError(err) && !icmp_retried) {
        // Reported on a connected socket for an earlier datagram (e.g. a
        // port unreachable from a peer that went away); this one was not
        // sent. The error is consumed: offer it once more.
        ++udp_.tx_icmp_errors;
        ++counters_.tx_icmp_errors;
        icmp_retried = true;
        continue;
      }
      if (t.count > 1 && (err == EIO || err == EINVAL || err == EOPNOTSUPP ||
                          err == ENOPROTOOPT)) {
        // The kernel or device cannot segment: resend from here without GSO.
        gso_ = false;
        ++udp_.gso_fallbacks;
        i = t.first;
        rebuild = true;
        break;
      }
      counters_.tx_dropped += t.count;
      ++udp_.tx_errors;
      ++m;
    }
    if (!rebuild) i = batch_end;
  }
  return n;
}

TimeNs UdpDatapath::ToMonotonic(const timespec& ts) {
  const int64_t real = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  const int64_t mono = real - real_minus_mono_ns_;
  // A timestamp from the future, or older than a second (the wall clock
  // was stepped in between), is not trusted.
  if (mono > mono_now_ns_ || mono < mono_now_ns_ - 1000000000) {
    ++udp_.rx_bad_timestamps;
    return TimeNs::Infinite();
  }
  return TimeNs(mono);
}

void UdpDatapath::DecodeRx(size_t j) {
  RxMeta& m = rx_meta_[j];
  m.valid = false;
  m.seg = 0;
  m.ce = false;
  m.local = 0;
  m.arrival = TimeNs::Infinite();
  msghdr& h = rx_hdrs_[j].msg_hdr;
  m.len = rx_hdrs_[j].msg_len;
  if (h.msg_flags & MSG_TRUNC) {
    ++counters_.rx_dropped;
    ++udp_.rx_truncated;
    return;
  }
  if (!FromSockaddr(rx_addr_[j], h.msg_namelen, &m.src)) {
    ++counters_.rx_dropped;
    ++udp_.rx_bad_addr;
    return;
  }
  if (h.msg_flags & MSG_CTRUNC) ++udp_.rx_ctrl_truncated;
  int tos = 0;
  NetAddr dst;
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
        c->cmsg_len >= CMSG_LEN(sizeof(timespec))) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
      m.arrival = ToMonotonic(ts);
      ++counters_.rx_timestamps;
    } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
               c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int seg = 0;
      std::memcpy(&seg, CMSG_DATA(c), sizeof(seg));
      m.seg = seg > 0 ? static_cast<uint32_t>(seg) : 0;
    } else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
               c->cmsg_len >= CMSG_LEN(1)) {
      uint8_t v = 0;
      std::memcpy(&v, CMSG_DATA(c), 1);
      tos = v;
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS &&
               c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      std::memcpy(&tos, CMSG_DATA(c), sizeof(tos));
    } else if (track_local_ && ParsePktinfo(c, &dst)) {
      m.local = local_.Tag(dst);
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL &&
               c->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
      uint32_t drops = 0;
      std::memcpy(&drops, CMSG_DATA(c), sizeof(drops));
      udp_.rx_kernel_drops = drops;
    }
  }
  m.ce = (tos & 0x3) == 0x3;
  if (m.seg >= m.len) m.seg = 0;  // one datagram
  if ((m.seg == 0 ? m.len : m.seg) > mtu_) {
    // The sender's MTU is larger than ours. The network carried it, so take
    // it (refusing would leave the two unable to talk, with nothing said);
    // counted, so the mismatch can be seen.
    ++counters_.rx_over_mtu;
    ++udp_.rx_oversize;
  }
  if (m.seg != 0) ++udp_.gro_buffers;
  m.valid = true;
}

size_t UdpDatapath::DrainRx(absl::Span<RxPacket> out) {
  size_t k = 0;
  while (k < out.size() && rx_next_ < rx_count_) {
    const RxMeta& m = rx_meta_[rx_next_];
    if (!m.valid) {
      ++rx_next_;
      rx_off_ = 0;
      continue;
    }
    uint8_t* base = &rx_data_[rx_next_ * kRxSlotStride];
    const uint32_t piece =
        m.seg == 0 ? m.len : std::min(m.seg, m.len - rx_off_);
    RxPacket& p = out[k++];
    p.src = m.src;
    p.ce = m.ce;
    p.local = m.local;
    p.data = base + rx_off_;
    p.len = piece;
    p.arrival = m.arrival;
    counters_.rx_packets += 1;
    counters_.rx_bytes += piece;
    if (m.ce) ++udp_.rx_ce;
    rx_off_ += piece;
    if (m.seg == 0 || rx_off_ >= m.len) {
      ++rx_next_;
      rx_off_ = 0;
    }
  }
  return k;
}

int UdpDatapath::Receive(size_t vlen) {
  if (vlen > 1) {
    return recvmmsg(rx_fd_, rx_hdrs_.data(), static_cast<unsigned>(vlen),
                    MSG_DONTWAIT, nullptr);
  }
  const ssize_t n = recvmsg(rx_fd_, &rx_hdrs_[0].msg_hdr, MSG_DONTWAIT);
  if (n < 0) return -1;
  rx_hdrs_[0].msg_len = static_cast<unsigned>(n);
  return 1;
}

size_t UdpDatapath::RxBurst(absl::Span<RxPacket> out) {
  if (out.empty()) return 0;
  if (RxPending()) return DrainRx(out);
  // A busy poller that keeps finding the socket empty will next find it
  // empty again or holding one datagram (a reply): ask for just one, with
  // recvmsg. recvmmsg would, after the first datagram, go on to try the
  // next slot in the kernel, and costs more per empty call. The first
  // receive that finds data turns full bursts back on.
  const size_t vlen = rx_empty_polls_ >= kProbeAfterEmptyPolls
                          ? 1
                          : std::min(burst_, out.size());
  // The kernel writes msg_namelen, msg_controllen and msg_flags only of the
  // messages it fills (nothing on an error); the others still hold what the
  // constructor set. Resetting just those keeps the busy poll of an empty
  // socket at one syscall with no per-slot work.
  for (size_t j = 0; j < rx_dirty_; ++j) ResetRxHeader(j);
  rx_dirty_ = 0;
  ++counters_.rx_syscalls;
  const int r = Receive(vlen);
  if (r <= 0) {
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      ++udp_.rx_errors;
      rx_dirty_ = vlen;  // unknown state: reset them all next time
    }
    if (rx_empty_polls_ < kProbeAfterEmptyPolls) ++rx_empty_polls_;
    return 0;
  }
  rx_empty_polls_ = 0;
  rx_count_ = static_cast<size_t>(r);
  rx_dirty_ = rx_count_;
  rx_next_ = 0;
  rx_off_ = 0;
  // Kernel timestamps are CLOCK_REALTIME; they map onto CLOCK_MONOTONIC by
  // the offset between the two clocks. NTP slews both clocks alike, so the
  // offset moves only when the wall clock is stepped: it is re-read at most
  // every kClockOffsetRefreshNs, not per burst (a step misdates timestamps
  // for at most that long, and ToMonotonic refuses those from the future).
  timespec mono;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  mono_now_ns_ = int64_t{mono.tv_sec} * 1000000000 + mono.tv_nsec;
  if (offset_read_ns_ == 0 ||
      mono_now_ns_ - offset_read_ns_ >= kClockOffsetRefreshNs) {
    timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    real_minus_mono_ns_ =
        int64_t{real.tv_sec} * 1000000000 + real.tv_nsec - mono_now_ns_;
    offset_read_ns_ = mono_now_ns_;
  }
  for (size_t j = 0; j < rx_count_; ++j) DecodeRx(j);
  return DrainRx(out);
}

}  // namespace braid::backend

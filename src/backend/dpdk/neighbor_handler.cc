// HandleNeighborFrame (neighbor.h): what braid does with each received ARP
// or Neighbor Discovery frame.
#include <cstring>

#include "backend/dpdk/neighbor.h"

namespace braid::backend::dpdk {
namespace {

bool SameIp(const NetAddr& a, const NetAddr& b) {
  const size_t n = a.family == NetAddr::Family::kIpv4 ? 4 : 16;
  return a.family == b.family && std::memcmp(a.ip.data(), b.ip.data(), n) == 0;
}

bool IsZeroIpv4(const NetAddr& a) {
  return a.ip[0] == 0 && a.ip[1] == 0 && a.ip[2] == 0 && a.ip[3] == 0;
}

NeighborAction Count(NeighborAction a, NeighborTable* table) {
  NeighborCounters* c = table->mutable_counters();
  switch (a) {
    case NeighborAction::kNone:
      ++c->not_for_us;
      break;
    case NeighborAction::kReply:
      ++c->replies_sent;
      break;
    case NeighborAction::kIgnored:
      ++c->unsolicited_ignored;
      break;
    case NeighborAction::kMalformed:
      ++c->malformed;
      break;
    case NeighborAction::kLearnt:
      break;  // counted by Learn
  }
  return a;
}

NeighborAction HandleArp(absl::Span<const uint8_t> frame,
                         const LocalIdentity& me, TimeNs now,
                         NeighborTable* table, absl::Span<uint8_t> reply_out,
                         size_t* reply_len) {
  ArpMessage m;
  if (!ParseArp(frame, &m) || IsGroupMac(m.sender_mac) ||
      m.sender_ip.IsMulticastOrBroadcast()) {
    return NeighborAction::kMalformed;
  }
  if (me.addr.family != NetAddr::Family::kIpv4 || m.sender_mac == me.mac ||
      SameIp(m.sender_ip, me.addr)) {
    return NeighborAction::kNone;  // our own, or someone claiming our IP
  }
  if (!SameIp(m.target_ip, me.addr)) {
    return m.op == kArpOpReply ? NeighborAction::kIgnored
                               : NeighborAction::kNone;
  }
  if (m.op == kArpOpReply) {
    if (!table->Requested(m.sender_ip, now)) return NeighborAction::kIgnored;
    table->Learn(m.sender_ip, m.sender_mac, now);
    return NeighborAction::kLearnt;
  }
  // A request for us. A probe (sender 0.0.0.0, RFC 5227) teaches nothing.
  if (!IsZeroIpv4(m.sender_ip)) table->Learn(m.sender_ip, m.sender_mac, now);
  *reply_len =
      WriteArpReply(me.mac, me.addr, m.sender_mac, m.sender_ip, reply_out);
  return *reply_len > 0 ? NeighborAction::kReply : NeighborAction::kNone;
}

NeighborAction HandleNd(absl::Span<const uint8_t> frame,
                        const LocalIdentity& me, TimeNs now,
                        NeighborTable* table, absl::Span<uint8_t> reply_out,
                        size_t* reply_len) {
  NdMessage m;
  if (!ParseNd(frame, &m) || IsGroupMac(m.eth_src)) {
    return NeighborAction::kMalformed;
  }
  if (me.addr.family != NetAddr::Family::kIpv6 || m.eth_src == me.mac ||
      SameIp(m.src_ip, me.addr)) {
    return NeighborAction::kNone;
  }
  const MacAddr peer_mac = m.has_link_addr ? m.link_addr : m.eth_src;
  if (m.type == kNdAdvertisement) {
    if (SameIp(m.target, me.addr) || !table->Requested(m.target, now)) {
      return NeighborAction::kIgnored;
    }
    table->Learn(m.target, peer_mac, now);
    return NeighborAction::kLearnt;
  }
  if (!SameIp(m.target, me.addr)) return NeighborAction::kNone;
  NetAddr dst_ip = m.src_ip;
  MacAddr dst_mac = peer_mac;
  bool solicited = true;
  if (m.src_ip.ip == NetAddr{}.ip) {
    // Duplicate address detection by someone else: answer all nodes.
    dst_ip.ip = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    dst_mac = Ipv6MulticastMac(dst_ip);
    solicited = false;
  } else if (m.has_link_addr) {
    table->Learn(m.src_ip, m.link_addr, now);  // RFC 4861 7.2.3
  }
  *reply_len = WriteNeighborAdvertisement(me.mac, me.addr, dst_mac, dst_ip,
                                          solicited, reply_out);
  return *reply_len > 0 ? NeighborAction::kReply : NeighborAction::kNone;
}

}  // namespace

const char* NeighborActionName(NeighborAction a) {
  switch (a) {
    case NeighborAction::kNone:
      return "none";
    case NeighborAction::kLearnt:
      return "learnt";
    case NeighborAction::kReply:
      return "reply";
    case NeighborAction::kIgnored:
      return "ignored";
    case NeighborAction::kMalformed:
      return "malformed";
  }
  return "unknown";
}

NeighborAction HandleNeighborFrame(absl::Span<const uint8_t> frame,
                                   const LocalIdentity& me, TimeNs now,
                                   NeighborTable* table,
                                   absl::Span<uint8_t> reply_out,
                                   size_t* reply_len) {
  *reply_len = 0;
  if (frame.size() < kEthHeaderLen) {
    return Count(NeighborAction::kMalformed, table);
  }
  const uint16_t type = LoadBe16(frame.data() + 12);
  NeighborAction a = NeighborAction::kMalformed;
  if (type == kEtherTypeArp) {
    a = HandleArp(frame, me, now, table, reply_out, reply_len);
  } else if (type == kEtherTypeIpv6) {
    a = HandleNd(frame, me, now, table, reply_out, reply_len);
  }
  return Count(a, table);
}

}  // namespace braid::backend::dpdk

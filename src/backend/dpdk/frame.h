// Ethernet + IPv4/IPv6 + UDP framing for the DPDK backend: the headers braid
// writes in front of each datagram, and the checks every received frame
// passes before its payload reaches the core. Pure byte code, no DPDK, so it
// is unit-tested, fuzzed and sanitizer-clean on its own.
//
// Frames written here mean exactly what Linux's UDP socket sends for braid
// (udp_setup.cc: DF set, TOS ECT(0) when ECN is on): a DPDK endpoint and a
// kernel-UDP endpoint talk to each other.
#ifndef BRAID_BACKEND_DPDK_FRAME_H_
#define BRAID_BACKEND_DPDK_FRAME_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "braid/address.h"

namespace braid::backend::dpdk {

using MacAddr = std::array<uint8_t, 6>;

inline constexpr MacAddr kBroadcastMac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// Parses "aa:bb:cc:dd:ee:ff" (hex digits of either case, exactly six
// two-digit groups separated by ':'). InvalidArgument naming the text
// otherwise.
absl::StatusOr<MacAddr> ParseMac(absl::string_view text);
// "aa:bb:cc:dd:ee:ff", lower case.
std::string FormatMac(const MacAddr& mac);

inline constexpr uint32_t kEthHeaderLen = 14;
inline constexpr uint32_t kIpv4HeaderLen = 20;
inline constexpr uint32_t kIpv6HeaderLen = 40;
inline constexpr uint32_t kUdpHeaderLen = 8;
// The shortest Ethernet frame without its FCS; shorter frames are padded
// (by the NIC, or by the sender) and the receiver ignores the padding.
inline constexpr uint32_t kMinEthFrameLen = 60;

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeArp = 0x0806;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeQinQ = 0x88a8;
inline constexpr uint8_t kIpProtoUdp = 17;
inline constexpr uint8_t kIpProtoIcmpv6 = 58;
inline constexpr uint8_t kDefaultTtl = 64;  // Linux's default TTL/hop limit
inline constexpr uint8_t kEcnMask = 0x03;
inline constexpr uint8_t kEcnEct0 = 0x02;
inline constexpr uint8_t kEcnCe = 0x03;

// Ethernet + IP + UDP header bytes: 42 for IPv4, 62 for IPv6, 0 otherwise.
uint32_t FrameHeaderLen(NetAddr::Family family);

// What WriteFrameHeader writes. src and dst carry the IP addresses and the
// UDP ports (host order); both must be of one family.
struct FrameHeaderSpec {
  MacAddr src_mac{};
  MacAddr dst_mac{};
  NetAddr src;
  NetAddr dst;
  bool ect = false;          // ECT(0) in the TOS / traffic class
  uint32_t payload_len = 0;  // UDP payload bytes that follow the header
  // IPv6 flow label (low 20 bits; ignored for IPv4). Linux's UDP sockets
  // send a label hashed from the 5-tuple (net.ipv6.auto_flowlabels), and
  // routers may hash it for ECMP: a label derived from the entropy keeps
  // paths apart the way the kernel backend's sockets do. 0 = none.
  uint32_t flow_label = 0;
};

// Who computes the UDP checksum: braid (FinishUdpChecksum) or the NIC
// (SetUdpPseudoHeaderChecksum, then the port's L4 checksum offload).
enum class L4Checksum : uint8_t { kSoftware, kOffload };

// Writes the Ethernet, IP and UDP headers into the front of `out`: IPv4 with
// IHL 5, DF, ID 0, TTL 64, TOS ECT(0) or 0, and its header checksum (0 when
// `ipv4_checksum_offload`: the NIC fills it); IPv6 with s.flow_label, hop
// limit 64, traffic class ECT(0) or 0. The UDP checksum is left 0: finish
// it with FinishUdpChecksum or SetUdpPseudoHeaderChecksum. Returns
// FrameHeaderLen(family), or 0 (nothing written) when `out` is too small,
// the families differ or are kNone, or the datagram would not fit in the
// IP/UDP length fields.
size_t WriteFrameHeader(const FrameHeaderSpec& s, bool ipv4_checksum_offload,
                        absl::Span<uint8_t> out);

// Software UDP checksum: fills the UDP checksum of a header written by
// WriteFrameHeader from the pseudo-header, the UDP header and the payload
// pieces (any lengths, odd ones included; together payload_len bytes). A
// computed 0 is sent as 0xffff. Does nothing if `header` is shorter than the
// header it names.
void FinishUdpChecksum(absl::Span<uint8_t> header,
                       absl::Span<const absl::Span<const uint8_t>> payload);

// Checksum offload: puts in the UDP checksum field the folded,
// non-complemented sum of the IPv4/IPv6 pseudo-header (addresses, protocol
// 17, UDP length), the value NICs expect with UDP checksum offload (as
// DPDK's rte_ipv4_phdr_cksum / rte_ipv6_phdr_cksum compute it without TSO).
void SetUdpPseudoHeaderChecksum(absl::Span<uint8_t> header);

// Either of the two above, by `mode`.
void FinishUdpChecksum(L4Checksum mode, absl::Span<uint8_t> header,
                       absl::Span<const absl::Span<const uint8_t>> payload);

// Why a received frame was dropped; one counter each.
enum class RxDrop : uint8_t {
  kShort,           // shorter than the headers it claims
  kEtherType,       // not IPv4/IPv6/ARP, a VLAN tag, or not our IP family
  kWrongMac,        // not to our MAC (broadcast/multicast: only ARP/ND)
  kBadIpHeader,     // IP version or IHL < 5
  kIpOptions,       // IPv4 options (IHL > 5)
  kFragment,        // IPv4 MF or fragment offset
  kWrongIp,         // IP destination is not ours
  kNotUdp,          // another protocol, or IPv6 extension headers
  kBadLength,       // IP/UDP lengths disagree with each other or the frame
  kBadIpChecksum,   // IPv4 header checksum (software or NIC)
  kBadUdpChecksum,  // UDP checksum (software or NIC); 0 on IPv6
  kWrongPort,       // UDP destination port is not ours
  kCount,
};
// snake_case name of a reason, for counters ("wrong_mac"); "unknown" for
// kCount or an out-of-range value.
const char* RxDropName(RxDrop why);

// What the NIC said about a checksum (mbuf ol_flags): kUnknown means verify
// it in software.
enum class HwChecksum : uint8_t { kUnknown, kGood, kBad };

// Our side of the wire: MAC, IP and the bound UDP port.
struct LocalIdentity {
  MacAddr mac{};
  NetAddr addr;
};

// A valid UDP datagram for us, as ClassifyFrame found it.
struct ParsedUdp {
  NetAddr src;  // sender IP + UDP source port
  MacAddr src_mac{};
  bool ce = false;              // ECN field was CE
  uint32_t payload_offset = 0;  // from the start of the frame
  uint32_t payload_len = 0;
};

enum class FrameKind : uint8_t { kUdp, kArp, kNeighborDiscovery, kDrop };

// Classifies one received frame (starting at the Ethernet header; trailing
// bytes past the IP length, e.g. Ethernet padding, are ignored):
//  - kUdp: a datagram of me.addr's family to our MAC, IP and port, with
//    valid lengths and checksums; *udp filled (payload within `frame`).
//  - kArp: an ARP frame to our MAC or broadcast (for HandleNeighborFrame).
//  - kNeighborDiscovery: an ICMPv6 neighbour solicitation/advertisement to
//    our MAC or a 33:33 multicast MAC (for HandleNeighborFrame).
//  - kDrop: *why says why.
// ip_csum / l4_csum: the NIC's verdict; kUnknown checks in software. An
// IPv4 UDP checksum of 0 (none) is accepted; on IPv6 it is dropped. Never
// reads outside `frame`. `udp` and `why` must not be null.
FrameKind ClassifyFrame(absl::Span<const uint8_t> frame,
                        const LocalIdentity& me, HwChecksum ip_csum,
                        HwChecksum l4_csum, ParsedUdp* udp, RxDrop* why);

// Big-endian field access shared by frame.cc and neighbor.cc.
inline uint16_t LoadBe16(const uint8_t* p) {
  return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
inline void StoreBe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

}  // namespace braid::backend::dpdk

#endif  // BRAID_BACKEND_DPDK_FRAME_H_

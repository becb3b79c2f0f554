#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "braid/address.h"

namespace braid {

NetAddr NetAddr::Ipv4(uint32_t host_order_ip, uint16_t port) {
  NetAddr a;
  a.family = Family::kIpv4;
  a.port = port;
  a.ip[0] = static_cast<uint8_t>(host_order_ip >> 24);
  a.ip[1] = static_cast<uint8_t>(host_order_ip >> 16);
  a.ip[2] = static_cast<uint8_t>(host_order_ip >> 8);
  a.ip[3] = static_cast<uint8_t>(host_order_ip);
  return a;
}

NetAddr NetAddr::IbUd(const uint8_t* gid, uint32_t qpn) {
  NetAddr a;
  a.family = Family::kIbUd;
  a.qpn_hi = static_cast<uint8_t>(qpn >> 16);
  a.port = static_cast<uint16_t>(qpn);
  std::memcpy(a.ip.data(), gid, 16);
  return a;
}

bool NetAddr::IsWildcard() const {
  const size_t n = family == Family::kIpv4 ? 4 : ip.size();
  for (size_t i = 0; i < n; ++i) {
    if (ip[i] != 0) return false;
  }
  return true;
}

bool NetAddr::IsMulticastOrBroadcast() const {
  if (family == Family::kIpv4) {
    return (ip[0] & 0xf0) == 0xe0 || ipv4() == 0xffffffffu;
  }
  // Multicast GIDs start with 0xff as IPv6 multicast addresses do.
  return (family == Family::kIpv6 || family == Family::kIbUd) && ip[0] == 0xff;
}

NetAddr NetAddr::Canonical() const {
  if (family != Family::kIpv6) return *this;
  for (int i = 0; i < 10; ++i) {
    if (ip[i] != 0) return *this;
  }
  if (ip[10] != 0xff || ip[11] != 0xff) return *this;
  NetAddr v4 = *this;
  v4.family = Family::kIpv4;
  v4.ip = {};
  for (int i = 0; i < 4; ++i) v4.ip[i] = ip[12 + i];
  return v4;
}

uint32_t NetAddr::ipv4() const {
  return (uint32_t{ip[0]} << 24) | (uint32_t{ip[1]} << 16) |
         (uint32_t{ip[2]} << 8) | uint32_t{ip[3]};
}

namespace {

// "[gid]/qpn": the GID as an IPv6 address, the QP number decimal or 0x hex.
absl::StatusOr<NetAddr> ParseIbUd(absl::string_view text, size_t close) {
  const std::string gid_text(text.substr(1, close - 1));
  absl::string_view qpn_text = text.substr(close + 2);
  in6_addr gid;
  if (inet_pton(AF_INET6, gid_text.c_str(), &gid) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad address '", text, "': the GID is not written as an IPv6 address"));
  }
  int base = 10;
  if (absl::StartsWith(qpn_text, "0x") || absl::StartsWith(qpn_text, "0X")) {
    qpn_text.remove_prefix(2);
    base = 16;
  }
  const bool digits =
      !qpn_text.empty() && qpn_text.size() <= 8 &&
      std::all_of(qpn_text.begin(), qpn_text.end(), [base](char c) {
        return base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                          : (c >= '0' && c <= '9');
      });
  const uint32_t qpn = digits ? static_cast<uint32_t>(std::stoul(
                                    std::string(qpn_text), nullptr, base))
                              : 0;
  if (qpn == 0 || qpn > 0xffffff) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad address '", text,
                     "': the QP number must be in 1..0xffffff (decimal or "
                     "0x hex)"));
  }
  return NetAddr::IbUd(reinterpret_cast<const uint8_t*>(&gid), qpn);
}

}  // namespace

absl::StatusOr<NetAddr> NetAddr::Parse(absl::string_view text,
                                       bool allow_port_zero) {
  std::string host;
  absl::string_view port_text;
  bool v6 = false;
  // inet_pton sees a C string: a NUL would hide whatever follows it.
  if (text.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("bad address: contains a NUL byte");
  }
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close != absl::string_view::npos && close + 1 < text.size() &&
        text[close + 1] == '/') {
      return ParseIbUd(text, close);
    }
    if (close == absl::string_view::npos || close + 1 >= text.size() ||
        text[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad address '", text, "': expected [ipv6]:port or [gid]/qpn"));
    }
    host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
    v6 = true;
  } else {
    size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address '", text, "': missing ':port'"));
    }
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  uint32_t port = 0;
  // Digits only: SimpleAtoi alone would also take a sign and whitespace.
  const bool digits = !port_text.empty() &&
                      std::all_of(port_text.begin(), port_text.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || !absl::SimpleAtoi(port_text, &port) ||
      (port == 0 && !allow_port_zero) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad address '", text, "': port must be a number in 1..65535"));
  }
  NetAddr a;
  a.port = static_cast<uint16_t>(port);
  if (v6) {
    in6_addr v;
    if (inet_pton(AF_INET6, host.c_str(), &v) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address '", text, "': not an IPv6 address"));
    }
    a.family = Family::kIpv6;
    std::memcpy(a.ip.data(), &v, 16);
  } else {
    in_addr v;
    if (inet_pton(AF_INET, host.c_str(), &v) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad address '", text, "': not an IPv4 address (use [v6]:port)"));
    }
    a.family = Family::kIpv4;
    std::memcpy(a.ip.data(), &v, 4);
  }
  return a;
}

std::string NetAddr::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {0};
  switch (family) {
    case Family::kIpv4:
      inet_ntop(AF_INET, ip.data(), buf, sizeof(buf));
      return absl::StrCat(buf, ":", port);
    case Family::kIpv6:
      inet_ntop(AF_INET6, ip.data(), buf, sizeof(buf));
      return absl::StrCat("[", buf, "]:", port);
    case Family::kIbUd:
      inet_ntop(AF_INET6, ip.data(), buf, sizeof(buf));
      return absl::StrCat("[", buf, "]/0x", absl::Hex(qpn(), absl::kZeroPad6));
    case Family::kNone:
      break;
  }
  return "(none)";
}

size_t NetAddrHash::operator()(const NetAddr& a) const {
  return absl::Hash<NetAddr>()(a);
}

}  // namespace braid

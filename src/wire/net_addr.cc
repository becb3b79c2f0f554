#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "absl/hash/hash.h"
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
  return family == Family::kIpv6 && ip[0] == 0xff;
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
    if (close == absl::string_view::npos || close + 1 >= text.size() ||
        text[close + 1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address '", text, "': expected [ipv6]:port"));
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
    case Family::kNone:
      break;
  }
  return "(none)";
}

size_t NetAddrHash::operator()(const NetAddr& a) const {
  return absl::Hash<NetAddr>()(a);
}

}  // namespace braid

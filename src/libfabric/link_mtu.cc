#include "libfabric/link_mtu.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "libfabric/sockaddr.h"

namespace braid::libfabric {
namespace {

// The MTU of interface `name` (SIOCGIFMTU), 0 if it cannot be read.
uint32_t MtuOf(const char* name) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  ifreq r{};
  std::strncpy(r.ifr_name, name, IFNAMSIZ - 1);
  const int rc = ioctl(fd, SIOCGIFMTU, &r);
  close(fd);
  return rc == 0 && r.ifr_mtu > 0 ? static_cast<uint32_t>(r.ifr_mtu) : 0;
}

}  // namespace

uint32_t LinkMtu(const NetAddr& ip, std::string* ifname) {
  if (!ip.valid() || ip.IsWildcard()) return 0;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return 0;
  uint32_t mtu = 0;
  for (ifaddrs* i = list; i != nullptr && mtu == 0; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    NetAddr a;
    if (!FromSockaddr(i->ifa_addr, SockaddrLen(i->ifa_addr), &a)) continue;
    a.port = ip.port;  // compare the addresses only
    if (!(a == ip.Canonical())) continue;
    mtu = MtuOf(i->ifa_name);
    if (mtu != 0 && ifname != nullptr) *ifname = i->ifa_name;
  }
  freeifaddrs(list);
  return mtu;
}

uint32_t DefaultMtu(const NetAddr& ip) {
  const uint32_t mtu = LinkMtu(ip);
  // (576: the smallest MTU FI_BRAID_MTU takes, every IPv4 host's.)
  return mtu == 0 ? 1500 : std::clamp(mtu, kMinDefaultMtu, kMaxDefaultMtu);
}

}  // namespace braid::libfabric

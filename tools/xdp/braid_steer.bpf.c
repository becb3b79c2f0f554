// An XDP program for running braid over DPDK's net_af_xdp on an interface
// the host keeps using: UDP datagrams to braid's ports go to the AF_XDP
// socket, everything else (ARP, ICMP, ssh, other UDP) to the kernel.
//
// Loaded by DPDK's af_xdp port through its devarg, e.g.
//   --dpdk-port "net_af_xdp0,iface=eth0,xdp_prog=braid_steer.bpf.o"
// The port finds the map named xsks_map, puts its socket at its queue's
// index and attaches the program to the interface; it detaches it when the
// port closes.
//
// braid's ports are the range [BRAID_PORT_LO, BRAID_PORT_HI], fixed when
// the program is compiled (the port loads the object itself, so nothing
// can be set after loading):
//   clang -O2 -g -target bpf -DBRAID_PORT_LO=9000 -DBRAID_PORT_HI=9100 \
//     -I/usr/include/$(uname -m)-linux-gnu \
//     -c braid_steer.bpf.c -o braid_steer.bpf.o
// Verdicts are counted in the per-CPU array steer_stats (bpftool map dump
// name steer_stats).

// The kernel's types first: libbpf's helper headers use them.
// clang-format off
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
// clang-format on

#if !defined(BRAID_PORT_LO) || !defined(BRAID_PORT_HI)
#error "define BRAID_PORT_LO and BRAID_PORT_HI (braid's UDP ports)"
#endif

// The AF_XDP sockets, by receive queue (DPDK's af_xdp fills it).
struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32);
} xsks_map SEC(".maps");

enum steer_counter {
  kToSocket = 0,  // redirected to the AF_XDP socket
  kToKernel = 1,  // passed: not braid's (or not parsable as such)
  kCounters = 2,
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, kCounters);
  __type(key, __u32);
  __type(value, __u64);
} steer_stats SEC(".maps");

static __always_inline int Count(__u32 which, int verdict) {
  __u64* n = bpf_map_lookup_elem(&steer_stats, &which);
  if (n) *n += 1;
  return verdict;
}

static __always_inline int IsBraidPort(const struct udphdr* udp) {
  const __u16 port = bpf_ntohs(udp->dest);
  return port >= BRAID_PORT_LO && port <= BRAID_PORT_HI;
}

SEC("xdp")
int braid_steer(struct xdp_md* ctx) {
  const void* data = (const void*)(long)ctx->data;
  const void* end = (const void*)(long)ctx->data_end;
  const struct ethhdr* eth = data;
  if ((const void*)(eth + 1) > end) return Count(kToKernel, XDP_PASS);
  const void* l4 = 0;
  if (eth->h_proto == bpf_htons(ETH_P_IP)) {
    const struct iphdr* ip = (const void*)(eth + 1);
    if ((const void*)(ip + 1) > end || ip->protocol != IPPROTO_UDP) {
      return Count(kToKernel, XDP_PASS);
    }
    // Later fragments carry no UDP header: the kernel's. A first fragment
    // goes to braid below, which drops fragments and counts them.
    if (ip->frag_off & bpf_htons(0x1fff)) return Count(kToKernel, XDP_PASS);
    l4 = (const void*)ip + ip->ihl * 4;
  } else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
    const struct ipv6hdr* ip6 = (const void*)(eth + 1);
    if ((const void*)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP) {
      return Count(kToKernel, XDP_PASS);
    }
    l4 = ip6 + 1;
  } else {
    return Count(kToKernel, XDP_PASS);  // ARP and the rest
  }
  const struct udphdr* udp = l4;
  if ((const void*)(udp + 1) > end || !IsBraidPort(udp)) {
    return Count(kToKernel, XDP_PASS);
  }
  // No socket on this queue (braid is not running there): XDP_PASS, so
  // the kernel answers as it would without the program.
  const int verdict =
      bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
  return Count(verdict == XDP_REDIRECT ? kToSocket : kToKernel, verdict);
}

char _license[] SEC("license") = "Dual BSD/GPL";

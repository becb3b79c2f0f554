# shellcheck shell=bash
# Helpers for the tests that run braid over DPDK on the namespace fabric
# (tests/fabric/braid_dpdk_*_test.sh). Source after lib.sh and braid_lib.sh:
#
#   fabric_require_root; braid_require_perf; braid_require_dpdk
#   fabric_init bfdpdk
#   fab up --spines 4
#   dpdk_host_setup 0                 # host 0's eth0 becomes a DPDK port
#                                     # (af_packet; or dpdk_host_setup_af_xdp)
#   perf_server 1 --json ...          # a kernel-UDP host
#   perf_client 0 1 "${DPDK_FLAGS[@]}" ...   # braid over DPDK on host 0
#
# How a fabric host runs DPDK. Its eth0 is a veth; DPDK drives it through
# net_af_packet, a PACKET_MMAP socket on eth0, so braid's frames leave and
# arrive there while the interface stays the kernel's: same IP, same MAC
# (the af_packet port reports the interface's MAC and braid sends from the
# port's MAC), the leaf's ARP and routes unchanged. Three things make that
# a faithful DPDK host (dpdk_host_setup):
#
# * The kernel sees every frame af_packet sees. A datagram to braid's UDP
#   port would make it answer "ICMP port unreachable" (there is no socket),
#   and the kernel-UDP peer's connected sockets would report the error. An
#   nftables rule in the host's namespace drops inbound UDP to braid's ports
#   at prerouting. Packet sockets take their copy in the device's receive
#   path, before IP and netfilter, so DPDK still gets every frame; the
#   tests check that (the rule's counter is non-zero, the runs deliver
#   everything, the host sends no ICMP).
# * The kernel's own ARP is dropped in the host's namespace too, so only
#   braid answers ARP for the host's address: the leaf can reach the host
#   only through braid's ARP reply (a DPDK host on a real NIC has no kernel
#   to answer for it).
# * veth passes packets between namespaces as the sender's kernel built
#   them: UDP checksums still partial (CHECKSUM_PARTIAL, left to an offload
#   that never runs) and UDP GSO super-packets unsegmented. A packet socket
#   hands them over as they are (DPDK 22.11's af_packet ignores the
#   TP_STATUS_CSUMNOTREADY flag), so braid would drop the kernel peer's
#   datagrams as bad checksums. The leaf's port towards the DPDK host gets
#   transmit checksum offload turned off (ethtool -K tx off; that also
#   turns off its segmentation offloads), so the leaf finishes checksums and
#   segments before the frame enters the host, as a NIC puts complete
#   frames on a wire.
#
# net_af_xdp (dpdk_host_setup_af_xdp) needs neither firewall rule: braid's
# steering XDP program (tools/xdp/braid_steer.bpf.c) hands only braid's UDP
# ports to the AF_XDP socket, so the kernel never sees braid's datagrams
# and keeps ARP, ICMP and TCP. XDP on veth sees the same partial checksums,
# so the leaf finishes them as above.
#
# Each DPDK process gets its own EAL file prefix (runtime directory
# /var/run/dpdk/<prefix>), removed at exit; the nft tables live in the
# host's namespace and go with it.

# dpdk_test_start NAME: the start of every braid-over-DPDK fabric test:
# skips unless root with a DPDK-enabled braid-perf, then fabric_init NAME.
dpdk_test_start() {
  fabric_require_root
  braid_require_perf
  braid_require_dpdk
  fabric_init "$1"
}

# braid_require_dpdk: skip (77) unless braid-perf has the dpdk backend and
# ethtool is there.
braid_require_dpdk() {
  local has=${BRAID_PERF_DPDK:-}
  if [[ -z $has ]]; then
    # Run by hand: the dpdk backend links DPDK's ethdev library. (Not
    # `ldd | grep -q`: grep's early exit fails the pipe under pipefail.)
    has=OFF
    [[ $(ldd "$PERF" 2>/dev/null) == *librte_ethdev* ]] && has=ON
  fi
  if [[ $has != ON ]]; then
    echo "skipped: $PERF has no dpdk backend (built without libdpdk)"
    exit "$FABRIC_SKIP"
  fi
  command -v ethtool >/dev/null || { echo "skipped: needs ethtool"; exit "$FABRIC_SKIP"; }
}

DPDK_PREFIXES=()

# The EAL runtime directory of a file prefix.
dpdk_runtime_dir() { echo "/var/run/dpdk/$1"; }

# Exit hook: removes the EAL runtime directories (the processes that used
# them ended with the fabric); fails if one cannot be removed.
dpdk_cleanup() {
  local p dir ok=0
  for p in "${DPDK_PREFIXES[@]}"; do
    dir=$(dpdk_runtime_dir "$p")
    rm -rf "$dir"
    if [[ -e $dir ]]; then
      echo "FAIL: DPDK runtime directory left behind: $dir"
      ok=1
    fi
  done
  return $ok
}

# dpdk_host_common HOST: what every DPDK host needs: an EAL file prefix of
# its own (DPDK_PREFIX, removed at exit) and complete frames from its leaf
# (transmit checksum offload off on the leaf's port towards it). Sets
# DPDK_PREFIX, DPDK_EAL, DPDK_MAC (eth0's), DPDK_GW and DPDK_PLEN (its
# gateway and prefix length).
# shellcheck disable=SC2034  # DPDK_MAC is read by the tests
dpdk_host_common() {
  local host=$1 leaf_ns
  leaf_ns="${FABRIC_NAME}-leaf$((host % 2))"
  DPDK_PREFIX="${FABRIC_NAME}-h${host}"
  if ((${#DPDK_PREFIXES[@]} == 0)); then fabric_at_exit dpdk_cleanup; fi
  DPDK_PREFIXES+=("$DPDK_PREFIX")
  rm -rf "$(dpdk_runtime_dir "$DPDK_PREFIX")"  # a hard-killed earlier run's
  ip netns exec "$leaf_ns" ethtool -K "h${host}" tx off >/dev/null ||
    fabric_fail "ethtool -K h${host} tx off in $leaf_ns failed"
  DPDK_MAC=$(fab exec --host "$host" -- cat /sys/class/net/eth0/address)
  DPDK_GW=$(fab exec --host "$host" -- ip -4 route show default | awk '{print $3; exit}')
  DPDK_PLEN=$(fab exec --host "$host" -- ip -4 -o addr show dev eth0 |
    awk '{split($4, a, "/"); print a[2]; exit}')
  [[ -n $DPDK_GW && -n $DPDK_PLEN ]] || fabric_fail "host $host has no default route or address"
  DPDK_EAL="--no-huge -m 512 --no-pci --file-prefix=$DPDK_PREFIX --log-level=*:error"
}

# dpdk_host_setup HOST: prepares host HOST for net_af_packet (see the top of
# this file) and sets DPDK_FLAGS to the braid-perf flags that run braid over
# DPDK on its eth0 with its own IP and MAC and its leaf as gateway (resolved
# by braid's ARP).
# shellcheck disable=SC2034  # DPDK_FLAGS is read by the tests
dpdk_host_setup() {
  local host=$1
  dpdk_host_common "$host"
  fab exec --host "$host" -- nft -f - <<EOF || fabric_fail "nft rules in host $host failed"
table inet braid_dpdk {
  counter braid_udp {}
  chain pre {
    type filter hook prerouting priority raw; policy accept;
    udp dport { $PERF_DPORT, $PERF_CPORT } counter name braid_udp drop
  }
}
table arp braid_dpdk {
  counter arp_in {}
  chain in {
    type filter hook input priority filter; policy accept;
    counter name arp_in drop
  }
}
EOF
  DPDK_FLAGS=(--backend dpdk --dpdk-eal "$DPDK_EAL"
    --dpdk-port "net_af_packet0,iface=eth0"
    --dpdk-gateway "$DPDK_GW" --dpdk-prefix-len "$DPDK_PLEN")
}

# dpdk_host_setup_af_xdp HOST PROG: prepares host HOST for net_af_xdp with
# the steering program PROG (tools/xdp/braid_steer.bpf.c compiled for
# braid's ports) and sets DPDK_FLAGS. The program hands braid's UDP ports to
# the AF_XDP socket and everything else to the kernel, so the kernel keeps
# ARP (no firewall rules here) and braid never sees an ARP frame: its next
# hop is the gateway's MAC from the kernel's neighbour table
# (--dpdk-next-hop-mac), as a host that leaves ARP to its kernel would do.
# shellcheck disable=SC2034  # DPDK_FLAGS is read by the tests
dpdk_host_setup_af_xdp() {
  local host=$1 prog=$2 mac="" n
  dpdk_host_common "$host"
  # The kernel resolves its gateway for its own first datagram to it.
  fab exec --host "$host" -- bash -c "echo > /dev/udp/$DPDK_GW/9" 2>/dev/null || true
  for ((n = 0; n < 50; n++)); do
    mac=$(fab exec --host "$host" -- ip neigh show "$DPDK_GW" dev eth0 |
      awk '$2 == "lladdr" { print $3; exit }')
    [[ -n $mac ]] && break
    sleep 0.05
  done
  [[ -n $mac ]] || fabric_fail "host $host's kernel did not resolve its gateway $DPDK_GW"
  DPDK_FLAGS=(--backend dpdk --dpdk-eal "$DPDK_EAL"
    --dpdk-port "net_af_xdp0,iface=eth0,xdp_prog=$prog"
    --dpdk-next-hop-mac "$mac")
}

# dpdk_pin_balanced DPDK_HOST KERNEL_HOST: both hosts send from the same
# 16 source ports, a window the kernel spreads 4/4/4/4 over the spines from
# DPDK_HOST to KERNEL_HOST (braid_balanced_base): braid over DPDK writes
# them into its frames (--dpdk-src-port-base, appended to DPDK_FLAGS; give
# it --entropy-sockets 16), the kernel host's port range is narrowed to
# them. Sets DPDK_BASE.
dpdk_pin_balanced() {
  DPDK_BASE=$(braid_balanced_base "$1" "$2" 16)
  [[ -n $DPDK_BASE ]] || fabric_fail "no 16-port window spreads evenly (hash seed changed?)"
  braid_pin_ports "$2" "$DPDK_BASE" 16
  DPDK_FLAGS+=(--dpdk-src-port-base "$DPDK_BASE")
}

# spread_check LEAF MIN WHAT: the data packets leaf LEAF sent up to the
# spines since the last `counters --reset` (at least MIN) reach every spine
# with at least a quarter of an equal share (16 paths, 4 per spine with the
# balanced source ports; swift moves the shares a little). The counters
# count what the leaf forwards: the kernel host's UDP GSO sends cross the
# leaves as one super-packet each (the leaf facing the DPDK host segments
# them), braid over DPDK sends one frame per datagram.
spread_check() {
  local leaf=$1 min=$2 what=$3 k total=0 acks=()
  local -a got=()
  perf_spread_snapshot
  for k in 0 1 2 3; do
    got[k]=$(perf_link_counter "$k" "$leaf" up_pkts)
    total=$((total + got[k]))
    acks[k]=$(perf_link_counter "$k" $((1 - leaf)) up_pkts)
  done
  fabric_log "$what: data packets per spine ${got[*]} (total $total), acks per spine ${acks[*]}"
  ((total >= min)) || fabric_fail "$what: only $total data packets crossed the spines"
  for k in 0 1 2 3; do
    ((got[k] * 16 >= total)) || fabric_fail "$what: spine $k carried ${got[k]} of $total data packets"
  done
}

# dpdk_nft_counter HOST NAME: packets counted by the named counter NAME
# (braid_udp: datagrams the kernel saw and dropped; arp_in) in HOST.
dpdk_nft_counter() {
  local family=inet
  [[ $2 == arp_in ]] && family=arp
  fab exec --host "$1" -- nft list counter "$family" braid_dpdk "$2" |
    awk '$1 == "packets" { print $2; found = 1 } END { if (!found) exit 1 }' ||
    fabric_fail "no nft counter $2 in host $1"
}

# dpdk_icmp_unreachables HOST: ICMP destination-unreachable messages HOST's
# kernel has sent.
dpdk_icmp_unreachables() {
  fab exec --host "$1" -- cat /proc/net/snmp | awk '
    $1 == "Icmp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
    $1 == "Icmp:" && hdr { print $(col["OutDestUnreachs"]); exit }'
}

# dpdk_learnt_macs HOST: the MACs the leaf's bridge learnt on HOST's port
# (not its own permanent ones), one a line.
dpdk_learnt_macs() {
  ip netns exec "${FABRIC_NAME}-leaf$(($1 % 2))" bridge fdb show br br0 brport "h$1" |
    awk '!/permanent/ { print $1 }'
}

# dpdk_forget_host HOST: the leaf forgets HOST's MAC (ARP entry), so the
# next frame to it needs a fresh ARP reply.
dpdk_forget_host() {
  ip netns exec "${FABRIC_NAME}-leaf$(($1 % 2))" ip neigh flush to \
    "$(fab addr --host "$1")" dev br0 2>/dev/null || true
}

# perf_check_server_line ITERS WHAT: the server's JSON line (perf_server
# ... --json) reports ITERS messages received, none bad, duplicated or
# missing.
perf_check_server_line() {
  local verdict
  verdict=$(python3 -c '
import json, sys
# (not the {"server_stats":...} line --stats adds at exit)
lines = [l for l in open(sys.argv[1])
         if l.startswith("{") and not l.startswith("{\"server_stats\"")]
if not lines:
    print("no server line"); sys.exit()
r = json.loads(lines[-1])
bad = [] if r.get("ok") is True else ["server not ok"]
if r.get("received") != int(sys.argv[2]):
    bad.append("received %s of %s" % (r.get("received"), sys.argv[2]))
for k in ("bad", "duplicates", "missing"):
    if r.get(k) != 0:
        bad.append("%s=%s" % (k, r.get(k)))
print("; ".join(bad) if bad else "ok")' "$FABRIC_TMP/server.out" "$1" 2>&1)
  [[ $verdict == ok ]] || fabric_fail "$2: server line: $verdict ($(tail -c 300 "$FABRIC_TMP/server.out"))"
}

# stats_value FILE NAME: a counter from a --stats table (the server's
# stderr), the first line starting with NAME.
stats_value() {
  awk -v k="$2" '$1 == k { print $2; found = 1; exit } END { if (!found) exit 1 }' "$1" ||
    fabric_fail "no counter $2 in $1"
}

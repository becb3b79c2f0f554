#!/usr/bin/env bash
# braid over DPDK's net_af_xdp on host 0's fabric interface, with braid's
# steering XDP program (tools/xdp/braid_steer.bpf.c, loaded by the port's
# xdp_prog= devarg): UDP to braid's ports goes to the AF_XDP socket, the
# rest to the kernel. braid over DPDK and a kernel-UDP host (host 1) talk in
# both directions (3000 x 64 KiB each way, verified, spread over every
# spine), and while braid owns the interface the host's kernel still
# answers ARP (the leaf reaches host 0 only through the kernel's reply:
# braid never sees an ARP frame), ICMP echo, TCP, and UDP to other ports
# (port unreachable), and it never sees one of braid's datagrams. When
# braid exits, the program is gone from the interface.
#
# The host's set-up is in braid_dpdk_lib.sh (dpdk_host_setup_af_xdp): the
# leaf finishes checksums as for af_packet (XDP on veth sees the kernel
# sender's partial checksums too), and braid's next hop is the gateway's
# MAC from the kernel's neighbour table. Source ports are pinned as in
# braid_dpdk_interop_test.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
source "$(dirname "$0")/braid_dpdk_lib.sh"
dpdk_test_start bfdpdkxdp
command -v clang >/dev/null || { echo "skipped: needs clang (to compile the XDP program)"; exit "$FABRIC_SKIP"; }
[[ -f /usr/include/bpf/bpf_helpers.h ]] ||
  { echo "skipped: needs libbpf-dev (bpf/bpf_helpers.h)"; exit "$FABRIC_SKIP"; }

# The steering program, for braid-perf's two ports.
prog="$FABRIC_TMP/braid_steer.bpf.o"
clang -O2 -g -target bpf -DBRAID_PORT_LO="$PERF_DPORT" -DBRAID_PORT_HI="$PERF_CPORT" \
  -I"/usr/include/$(uname -m)-linux-gnu" \
  -c "$FABRIC_SRC_ROOT/tools/xdp/braid_steer.bpf.c" -o "$prog" ||
  fabric_fail "compiling tools/xdp/braid_steer.bpf.c failed"
# A port outside braid's range, for the kernel's own UDP and TCP.
other_udp=9999
other_tcp=2222

fab up --spines 4 >/dev/null
dpdk_host_setup_af_xdp 0 "$prog"
dpdk_pin_balanced 0 1
common=(--paths 16 --entropy-sockets 16 --time-limit 30)
dpdk=("${DPDK_FLAGS[@]}")
iters=3000
h0=$(fab addr --host 0)

# ---- kernel client (host 1) -> DPDK server (host 0), and host 0's kernel
# services while braid owns its interface. The leaf forgets host 0's MAC
# first: only the kernel's ARP reply can teach it back.
dpdk_forget_host 0
fab counters --reset >/dev/null
perf_server 0 --json --stats "${dpdk[@]}" "${common[@]}"
fab exec --host 0 -- ip link show eth0 | grep -q 'prog/xdp id [0-9]* name braid_steer' ||
  fabric_fail "braid_steer is not attached to host 0's eth0: $(fab exec --host 0 -- ip link show eth0)"
fab exec --host 0 -- timeout 20 python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(1)
open(sys.argv[2], "w").close()
c, _ = s.accept()
c.settimeout(5)
c.sendall(c.recv(64).upper())' $other_tcp "$FABRIC_TMP/tcp.ready" &
FABRIC_BG_PIDS+=($!)
for ((n = 0; n < 100; n++)); do [[ -f $FABRIC_TMP/tcp.ready ]] && break; sleep 0.05; done
kernel=$(fab exec --host 1 -- timeout 20 python3 -c '
import os, socket, struct, sys
host, udp_port, tcp_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = []
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
# ICMP echo (what ping does).
ic = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
ic.settimeout(3)
hdr = struct.pack("!BBHHH", 8, 0, 0, os.getpid() & 0xffff, 1) + b"braid!"
ic.sendto(hdr[:2] + struct.pack("!H", csum(hdr)) + hdr[4:], (host, 0))
try:
    while True:
        d, a = ic.recvfrom(256)
        if a[0] == host and d[20] == 0:
            out.append("echo")
            break
except socket.timeout:
    out.append("no-echo")
# UDP to a port nobody has: the kernel says port unreachable.
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(3)
u.connect((host, udp_port))
u.send(b"x")
try:
    u.recv(16)
    out.append("udp-answered")
except ConnectionRefusedError:
    out.append("unreachable")
except socket.timeout:
    out.append("udp-silent")
# TCP to the kernel listener.
try:
    t = socket.create_connection((host, tcp_port), timeout=3)
    t.sendall(b"braid")
    t.settimeout(3)
    out.append("tcp-" + t.recv(16).decode())
except OSError as e:
    out.append("tcp-failed")
print(" ".join(out))' "$h0" $other_udp $other_tcp 2>&1 || true)
assert_eq "$kernel" "echo unreachable tcp-BRAID" \
  "host 0's kernel (ICMP echo, UDP port unreachable, TCP) with braid on its interface"
fabric_log "with braid on eth0, host 0's kernel answered: $kernel"
perf_client 1 0 "${common[@]}" --test bw -s 64k -n $iters --stats
perf_wait_server
perf_check_ok "kernel client -> DPDK (af_xdp) server, bw"
perf_check_server_line $iters "kernel client -> DPDK (af_xdp) server, bw"
fabric_log "kernel -> DPDK (af_xdp): $(perf_get 'r["results"][0]["gbps"]') Gbit/s, $(perf_get 'r["results"][0]["retransmits"]') retransmits"
spread_check 1 $iters "kernel -> DPDK (af_xdp)"
assert_eq "$(stats_value "$FABRIC_TMP/server.err" neighbor_replies_sent)" 0 \
  "ARP replies braid sent (the kernel keeps ARP)"
assert_eq "$(stats_value "$FABRIC_TMP/server.err" frame_rx_ether_type)" 0 \
  "non-IP frames that reached braid"

# ---- DPDK (af_xdp) client (host 0) -> kernel server (host 1)
fab counters --reset >/dev/null
perf_server 1 --json --stats "${common[@]}"
perf_client 0 1 "${dpdk[@]}" "${common[@]}" --test bw -s 64k -n $iters --stats
perf_wait_server
perf_check_ok "DPDK (af_xdp) client -> kernel server, bw"
perf_check_server_line $iters "DPDK (af_xdp) client -> kernel server, bw"
fabric_log "DPDK (af_xdp) -> kernel: $(perf_get 'r["results"][0]["gbps"]') Gbit/s, $(perf_get 'r["results"][0]["retransmits"]') retransmits, $(perf_get 'r["stats"]["endpoint"]["tx_zero_copy_frames"]') frames sent zero-copy"
spread_check 0 $((iters * 45)) "DPDK (af_xdp) -> kernel"
assert_eq "$(stats_value "$FABRIC_TMP/server.err" tx_icmp_errors)" 0 \
  "ICMP errors seen by the kernel server"

# ---- The host's kernel saw none of braid's datagrams: its only inbound UDP
# was the one probe datagram (to a port without a socket), its only ICMP
# unreachable the answer to it. And braid took its program with it.
udp=$(fab exec --host 0 -- cat /proc/net/snmp | awk '
  $1 == "Udp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
  $1 == "Udp:" && hdr { print $(col["InDatagrams"]), $(col["NoPorts"]); exit }')
assert_eq "$udp" "0 1" "host 0's kernel UDP counters (InDatagrams NoPorts)"
assert_eq "$(dpdk_icmp_unreachables 0)" 1 "ICMP unreachables sent by host 0's kernel"
if fab exec --host 0 -- ip link show eth0 | grep -q 'prog/xdp'; then
  fabric_fail "an XDP program is still attached to host 0's eth0 after braid exited"
fi
fabric_pass

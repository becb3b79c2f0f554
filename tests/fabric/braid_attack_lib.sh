# shellcheck shell=bash
# Helpers for the attacks over real sockets (tests/fabric/braid_attack_test.sh,
# braid_flood_test.sh, bench/flood_ab.sh): braid-forge run as root in an
# attacker's namespace on the victim's bridge, and the victim braid-perf
# server's counters. Source it after lib.sh and braid_lib.sh.
#
# The fabric: host 0 (victim A, 10.77.0.10) and host 2 (attacker X,
# 10.77.0.12) hang off leaf 0's bridge, host 1 (peer B, 10.77.1.11) off
# leaf 1. X spoofs B's address towards A; the bridge forwards by MAC, so X
# sees none of A's and B's traffic (an off-path attacker). A's reverse-path
# filter must be off for spoofed sources to arrive: braid-fabric turns it off
# in every namespace, attack_fabric_up checks and says so.
#
# Environment: BRAID_FORGE (the braid-forge binary; default: the newest
# build*/tools/braid_forge/braid-forge of the tree).

FORGE=${BRAID_FORGE:-}
if [[ -z $FORGE ]]; then
  FORGE=$(ls -t "$FABRIC_SRC_ROOT"/build*/tools/braid_forge/braid-forge 2>/dev/null | head -n 1 || true)
fi
readonly ATTACK_VICTIM=0 ATTACK_PEER=1 ATTACK_HOST=2

# Fails the test unless braid-forge is built.
attack_require_forge() {
  [[ -n $FORGE && -x $FORGE ]] || fabric_fail "braid-forge not built (set BRAID_FORGE)"
}

# attack_fabric_up HOSTS [up flags...]: a fabric of HOSTS (>= 3) hosts;
# checks that the victim's reverse-path filter is off (spoofed sources from
# the bridge would be dropped otherwise) and logs it.
attack_fabric_up() {
  local hosts=$1
  shift
  fab up --hosts "$hosts" "$@" >/dev/null
  fab exec --host $ATTACK_VICTIM -- sysctl -qw net.ipv4.conf.all.rp_filter=0 \
    net.ipv4.conf.eth0.rp_filter=0
  local rp
  rp=$(fab exec --host $ATTACK_VICTIM -- cat /proc/sys/net/ipv4/conf/all/rp_filter \
    /proc/sys/net/ipv4/conf/eth0/rp_filter | tr '\n' ' ')
  [[ $rp == "0 0 " ]] || fabric_fail "victim's rp_filter is '$rp', want 0 (spoofed packets would be dropped)"
  fabric_log "victim host $ATTACK_VICTIM: rp_filter off (all, eth0), so spoofed sources arrive"
}

# forge_at VICTIM_HOST ATTACKS [braid-forge flags...]: runs braid-forge
# once per attack of the space-separated list ATTACKS, one after the other in
# one process tree (quick: one namespace entry), from the attacker's
# namespace at VICTIM_HOST's braid-perf server port. The JSON summaries are
# appended to $FABRIC_TMP/forge.json; FORGE_SENT is the datagrams the kernel
# took, summed.
forge_at() {
  local vip attacks=$2 out
  vip=$(fab addr --host "$1")
  shift 2
  # shellcheck disable=SC2016
  out=$(fab exec --host $ATTACK_HOST -- bash -c \
    'f=$1 v=$2 as=$3; shift 3; for a in $as; do "$f" --attack "$a" --victim "$v" --json "$@" || exit; done' \
    forge "$FORGE" "$vip:$PERF_DPORT" "$attacks" "$@") ||
    fabric_fail "braid-forge ($attacks) $* failed: $out"
  echo "$out" >>"$FABRIC_TMP/forge.json"
  FORGE_SENT=$(python3 -c '
import json, sys
print(sum(json.loads(x)["datagrams"] for x in sys.argv[1].splitlines()))' "$out")
  fabric_log "forged: $out"
}

# forge_as_peer VICTIM PEER ATTACKS [braid-forge flags...]: forge_at VICTIM
# posing as PEER's braid-perf client (its IP, reply port 9100).
forge_as_peer() {
  local victim=$1 pip attacks=$3
  pip=$(fab addr --host "$2")
  shift 3
  forge_at "$victim" "$attacks" --spoof "$pip:$PERF_CPORT" "$@"
}

# transfer_still_on WHAT: fails unless the background client (the transfer)
# is still running: an attack that outlasts it proves nothing.
transfer_still_on() {
  kill -0 "$PERF_CLIENT_PID" 2>/dev/null ||
    fabric_fail "$1: the transfer ended before the attack did (a slow host: lengthen it)"
}

# server_stat NAME: counter NAME of the victim server's endpoint (the
# {"server_stats":...} line braid-perf --server --stats --json prints at exit).
server_stat() {
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{\"server_stats\""):
        print(json.loads(line)["server_stats"][sys.argv[2]])
        break
else:
    sys.exit("no server_stats line")' "$FABRIC_TMP/server.out" "$1" ||
    fabric_fail "no server counter $1: $(tail -c 400 "$FABRIC_TMP/server.out")"
}

# server_drops: the victim server's non-zero drop_* counters and the
# challenge / restart counters, "name=value ...".
server_drops() {
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{\"server_stats\""):
        s = json.loads(line)["server_stats"]
        print(" ".join("%s=%s" % (k, v) for k, v in s.items()
                       if v and (k.startswith("drop_") or "challenge" in k
                                 or "restart" in k or k.startswith(("datagrams", "rx_")))))' \
    "$FABRIC_TMP/server.out"
  echo "; kernel:"
  fab exec --host $ATTACK_VICTIM -- grep Udp: /proc/net/snmp | tail -n 1
}

# client_stat NAME: counter NAME of the client's endpoint (client.json).
client_stat() {
  perf_get "r[\"stats\"][\"endpoint\"][\"$1\"]"
}

# sniff_incarnation HOST PEER: the incarnation HOST's braid endpoint shows
# PEER's client (the src_incarnation of a datagram HOST sends to PEER's port
# 9100), read off HOST's interface: an on-path leak, to test what a leaked
# incarnation still does not open. Empty if none seen within 5 s.
sniff_incarnation() {
  local pip
  pip=$(fab addr --host "$2")
  fab exec --host "$1" -- python3 -c '
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("eth0", 0))
s.settimeout(1)
dst, port = socket.inet_aton(sys.argv[1]), int(sys.argv[2])
end = time.time() + 5
while time.time() < end:
    try:
        pkt = s.recv(65535)
    except socket.timeout:
        continue
    if pkt[12:14] != b"\x08\x00":
        continue
    ip = pkt[14:]
    if len(ip) < 20 or ip[9] != 17 or ip[16:20] != dst:
        continue
    udp = ip[(ip[0] & 15) * 4:]
    b = udp[8:]
    if struct.unpack("!H", udp[2:4])[0] != port or len(b) < 20 or b[0] != 0xB7:
        continue
    print("%x" % struct.unpack("!Q", b[12:20])[0])
    break' "$pip" "$PERF_CPORT" || true
}

# check_near WHAT GOT WANT [SLACK]: GOT is within WANT*0.95 .. WANT+SLACK
# (default 50): the victim counted roughly what was sent.
check_near() {
  local what=$1 got=$2 want=$3 slack=${4:-50}
  ((got * 100 >= want * 95 && got <= want + slack)) ||
    fabric_fail "$what: counted $got, sent $want (A's non-zero drops, challenges and restarts: $(server_drops))"
  fabric_log "$what: $got (sent $want)"
}

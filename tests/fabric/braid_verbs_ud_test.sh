#!/usr/bin/env bash
# braid over braid0's UD queue pairs (the verbs_ud backend, with
# libbraid-verbs.so preloaded; braid0's own endpoints run over kernel UDP
# between the hosts) sprays across the fabric's spines: each of the outer
# endpoint's paths is a UD address handle with its own GRH flow label, and
# braid0 sends each flow label's datagrams from one UDP source port, as a
# RoCE v2 NIC does. With 16 outer paths, at least 12 of braid0's 16 source
# ports carry the data and every one of the 4 spines gets its share; with 2
# outer paths the data stays on (about) 2 ports — the flow label, not
# braid0's own spraying, decides the port.
#
# braid0's 16 source ports are pinned to a window that `braid-fabric path`
# predicts to be exactly 4 per spine (as braid_spread_test does), and each
# port's data bytes (datagrams over 1000 bytes: not acks) are counted by
# nftables in the client's namespace.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/braid_lib.sh"
fabric_require_root
braid_require_perf
if [[ -z ${BRAID_VERBS_LIB:-} || ! -f $BRAID_VERBS_LIB ]]; then
  echo "SKIP: libbraid-verbs.so not built (BRAID_VERBS_LIB)"
  exit 77
fi
# The help text is read whole first: under pipefail, grep -q closing the
# pipe early would fail the pipeline and skip the test at random.
perf_help=$("$PERF" --help 2>&1 || true)
if [[ $perf_help != *verbs_ud* ]]; then
  echo "SKIP: braid-perf has no verbs_ud backend"
  exit 77
fi
fabric_init bfbud

readonly BRAID0_PORT=20000
fab up --spines 4 --mtu 9000 >/dev/null
base=$(BRAID_BALANCE_DPORT=$BRAID0_PORT braid_balanced_base 0 1 16)
[[ -n $base ]] || fabric_fail "no 16-port window spreads evenly (hash seed changed?)"
fabric_log "braid0 source ports $base..$((base + 15)): 4 per spine predicted"
braid_pin_ports 0 "$base" 16
braid_pin_ports 1 "$base" 16

# Per-port counters of data datagrams leaving host 0's braid0 (the table is
# made again for each run: that zeroes the counters).
{
  echo "table inet bfbud {"
  echo "  chain out {"
  echo "    type filter hook output priority 0; policy accept;"
  for ((p = base; p < base + 16; p++)); do
    echo "    udp sport $p udp dport $BRAID0_PORT meta length > 1000 counter"
  done
  echo "  }"
  echo "}"
} >"$FABRIC_TMP/count.nft"

# ud_env HOST: braid0's settings for a process in HOST's namespace.
ud_env() {
  echo "LD_PRELOAD=$BRAID_VERBS_LIB BRAID_VERBS_BIND=$(fab addr --host "$1")" \
    "BRAID_VERBS_PORT_BASE=$BRAID0_PORT BRAID_VERBS_PATHS=16" \
    "BRAID_VERBS_ENTROPY_SOCKETS=16 BRAID_VERBS_MTU=9000"
}

# ud_run OUTER_PATHS: one 3-second bw run, client on host 0, server on 1.
# The outer endpoint has one entropy (flow label 1..N) per path, so N <= 16
# labels map to N distinct braid0 paths (label % 16).
ud_run() {
  local paths=$1 n addr
  rm -f "$FABRIC_TMP/server.err"
  # shellcheck disable=SC2046
  "$FABRIC" exec --name "$FABRIC_NAME" --host 1 -- env $(ud_env 1) \
    "$PERF" --server --backend verbs_ud --ud-device braid0 --paths "$paths" \
    --entropy-sockets "$paths" --cc none >"$FABRIC_TMP/server.out" 2>"$FABRIC_TMP/server.err" &
  PERF_SERVER_PID=$!
  FABRIC_BG_PIDS+=("$PERF_SERVER_PID")
  for ((n = 0; n < 250; n++)); do
    grep -q "listening" "$FABRIC_TMP/server.err" 2>/dev/null && break
    kill -0 "$PERF_SERVER_PID" 2>/dev/null ||
      fabric_fail "server did not start: $(cat "$FABRIC_TMP/server.err")"
    sleep 0.02
  done
  addr=$(sed -n 's/.*listening on //p' "$FABRIC_TMP/server.err")
  [[ $addr == \[*\]/0x* ]] || fabric_fail "server printed no UD address: $(cat "$FABRIC_TMP/server.err")"
  fab exec --host 0 -- nft delete table inet bfbud 2>/dev/null || true
  fab exec --host 0 -- nft -f "$FABRIC_TMP/count.nft" || fabric_fail "nft rules"
  PERF_RC=0
  # shellcheck disable=SC2046
  fab exec --host 0 -- env $(ud_env 0) "$PERF" --client "$addr" \
    --backend verbs_ud --ud-device braid0 --paths "$paths" \
    --entropy-sockets "$paths" --cc none --test bw -s 64k -D 3 --json \
    >"$FABRIC_TMP/client.json" 2>"$FABRIC_TMP/client.err" || PERF_RC=$?
  perf_wait_server
  perf_check_ok "verbs_ud over braid0, $paths outer paths"
  fab exec --host 0 -- nft -j list table inet bfbud >"$FABRIC_TMP/count.json"
  python3 -c '
import json, sys
bytes_ = []
for item in json.load(open(sys.argv[1]))["nftables"]:
    rule = item.get("rule")
    if not rule: continue
    for e in rule["expr"]:
        if "counter" in e: bytes_.append(e["counter"]["bytes"])
print(" ".join(str(b) for b in sorted(bytes_, reverse=True)))' \
    "$FABRIC_TMP/count.json" >"$FABRIC_TMP/ports.txt" || fabric_fail "bad nft JSON"
}

# 16 outer paths: the data covers at least 12 ports, and every spine.
fab counters --reset
ud_run 16
read -r -a by_port <"$FABRIC_TMP/ports.txt"
total=0
for b in "${by_port[@]}"; do total=$((total + b)); done
((total > 10000000)) || fabric_fail "too little data to judge: $total bytes"
used=0
for b in "${by_port[@]}"; do
  ((b * 50 >= total)) && used=$((used + 1))  # at least 2 % of the data
done
fabric_log "16 outer paths: data bytes per braid0 port: ${by_port[*]} ($used ports with >= 2 %)"
((used >= 12)) || fabric_fail "only $used of 16 braid0 source ports carried >= 2 % of the data"
perf_spread_snapshot
spine_total=0
declare -a got=()
for k in 0 1 2 3; do
  got[k]=$(perf_link_counter "$k" 0 up_pkts)
  spine_total=$((spine_total + got[k]))
done
fabric_log "packets per spine (host 0 -> 1): ${got[*]}"
for k in 0 1 2 3; do
  ((got[k] * 10 >= spine_total)) ||
    fabric_fail "spine $k carried ${got[k]} of $spine_total packets (< 10 %)"
done

# 2 outer paths: two flow labels, so (about) two ports carry the data.
ud_run 2
read -r -a by_port <"$FABRIC_TMP/ports.txt"
total=0
for b in "${by_port[@]}"; do total=$((total + b)); done
((total > 1000000)) || fabric_fail "too little data to judge: $total bytes"
top2=$((by_port[0] + by_port[1]))
fabric_log "2 outer paths: data bytes per braid0 port: ${by_port[*]}"
((top2 * 10 >= total * 9)) ||
  fabric_fail "2 flow labels spread over more than 2 ports: top two carry $top2 of $total bytes"
fabric_pass

#!/usr/bin/env bash
# A/B of braid's bulk goodput: two braid-perf variants (two binaries, or one
# binary with two flag sets) measured ALTERNATELY, one `--test bw` run each
# per round, the order swapped every other round. Prints each round's B/A
# goodput ratio and their median with a distribution-free interval
# (bench/compare_stats.py). Use it to judge a change to the data path on a
# noisy machine; instruction counts (callgrind) only rank candidates: a
# change that runs fewer instructions can still be slower (a struct copy
# that stalled on store forwarding once cost 3-5 %).
#
#   bench/bw_ab.sh --a PATH/braid-perf [--b PATH/braid-perf]
#                  [--args-a "--flag ..."] [--args-b "--flag ..."]
#                  [--rounds 8] [--seconds 1.5] [--size 65536] [--pin]
#
# --b defaults to --a. --args-a/--args-b are braid-perf flags for both
# sides of that variant. --pin runs every client on CPU 0 and every server
# on CPU 1. Each measurement starts its own server and stops it by its PID;
# every process has a time limit.
set -euo pipefail

A=""
B=""
ARGS_A=""
ARGS_B=""
ROUNDS=8
SECS=1.5
SIZE=65536
PIN=()
SRV_PIN=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --a) A="$2"; shift 2 ;;
    --b) B="$2"; shift 2 ;;
    --args-a) ARGS_A="$2"; shift 2 ;;
    --args-b) ARGS_B="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --seconds) SECS="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --pin) PIN=(taskset -c 0); SRV_PIN=(taskset -c 1); shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bw_ab.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$B" ]] || B="$A"
[[ -x "$A" && -x "$B" ]] || { echo "bw_ab.sh: --a (and --b) must name braid-perf binaries" >&2; exit 2; }
(( ROUNDS >= 2 )) || { echo "bw_ab.sh: --rounds must be at least 2" >&2; exit 2; }

WORK="$(mktemp -d /tmp/bw_ab.XXXXXX)"
SERVER=""
finish() {
  if [[ -n "$SERVER" ]]; then
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
  fi
}
trap 'finish; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# gbps BINARY "FLAGS": one bw run; prints its goodput, or "nan" if it failed.
gbps() {
  local bin="$1" extra="$2" addr="" i
  # shellcheck disable=SC2086  # the flag list is word-split on purpose
  timeout 30 ${SRV_PIN[@]+"${SRV_PIN[@]}"} "$bin" --server --bind 127.0.0.1:0 \
    --time-limit 25 $extra >/dev/null 2>"$WORK/server.err" &
  SERVER=$!
  for i in $(seq 60); do
    addr="$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$WORK/server.err")"
    [[ -n "$addr" ]] && break
    sleep 0.05
  done
  if [[ -z "$addr" ]]; then
    finish
    echo nan
    return
  fi
  # shellcheck disable=SC2086
  timeout 30 ${PIN[@]+"${PIN[@]}"} "$bin" --client "$addr" --time-limit 25 \
    --test bw -s "$SIZE" -D "$SECS" --json $extra 2>/dev/null |
    python3 -c 'import json,sys
try:
    print(json.load(sys.stdin)["results"][0]["gbps"])
except Exception:
    print("nan")'
  finish
}

echo "bw_ab.sh: $ROUNDS rounds of ${SIZE}-byte bw for ${SECS} s; A: $A $ARGS_A; B: $B $ARGS_B"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
VA=() VB=()
for r in $(seq "$ROUNDS"); do
  if (( r % 2 == 1 )); then
    a=$(gbps "$A" "$ARGS_A"); b=$(gbps "$B" "$ARGS_B")
  else
    b=$(gbps "$B" "$ARGS_B"); a=$(gbps "$A" "$ARGS_A")
  fi
  echo "round $r: A $a  B $b Gbit/s"
  VA+=("$a") VB+=("$b")
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$(dirname "$0")/compare_stats.py" ab "${VA[*]}" "${VB[*]}"

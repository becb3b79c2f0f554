#!/usr/bin/env bash
# A/B of braid's 64 B ping-pong latency against raw UDP, alternating in one
# run: each round measures udp-blast's ping-pong, then braid-perf binary A,
# then braid-perf binary B (both sides busy-polling, loopback). Prints the
# per-round ratios to raw and their medians (bench/compare_stats.py). Use it
# to judge a change to the latency path on a noisy machine: A and B see the
# same conditions.
#
#   bench/lat_ab.sh --a PATH/braid-perf --b PATH/braid-perf
#                   [--blast PATH/udp-blast] [--rounds 7] [--iters 5000]
#                   [--env-a "VAR=1 ..."] [--env-b "VAR=1 ..."] [--pin]
#                   [--args-a "--flag ..."] [--args-b "--flag ..."]
#
# --env-a/--env-b set environment variables for that variant's processes
# (for experiments behind a getenv switch); --args-a/--args-b add braid-perf
# flags to both sides of that variant (A and B may then be one binary). --pin runs every client on CPU 0
# and every server on CPU 1 (all three tools alike). Every server is started for one
# measurement and stopped by its PID; each process has a time limit.
set -euo pipefail

A=""
B=""
BLAST=""
ROUNDS=7
ITERS=5000
ENV_A=""
ENV_B=""
ARGS_A=""
ARGS_B=""
SRV=()
CLI=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --a) A="$2"; shift 2 ;;
    --b) B="$2"; shift 2 ;;
    --blast) BLAST="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --env-a) ENV_A="$2"; shift 2 ;;
    --env-b) ENV_B="$2"; shift 2 ;;
    --args-a) ARGS_A="$2"; shift 2 ;;
    --args-b) ARGS_B="$2"; shift 2 ;;
    --pin) SRV=(taskset -c 1); CLI=(taskset -c 0); shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "lat_ab.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$A" && -x "$B" ]] || { echo "lat_ab.sh: --a and --b must name braid-perf binaries" >&2; exit 2; }
if [[ -z "$BLAST" ]]; then
  BLAST="$(dirname "$B")/../../bench/udp_blast/udp-blast"
fi
[[ -x "$BLAST" ]] || { echo "lat_ab.sh: udp-blast not found (--blast)" >&2; exit 2; }

SERVER_PID=""
stop_server() {
  if [[ -n "$SERVER_PID" ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap stop_server EXIT INT TERM

PORT=$((20000 + RANDOM % 20000))
FLAGS=(--mtu 1500 --gso --gro --paths 16 --poll)

raw_p50() {
  PORT=$((PORT + 1))
  timeout 20 ${SRV[@]+"${SRV[@]}"} "$BLAST" server -b "127.0.0.1:$PORT" --busy-poll --once >/dev/null 2>&1 &
  SERVER_PID=$!
  sleep 0.2
  timeout 20 ${CLI[@]+"${CLI[@]}"} "$BLAST" client -c "127.0.0.1:$PORT" lat -s 64 -n "$ITERS" \
    --busy-poll --gso --gro --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["p50_us"])'
  stop_server
}

braid_p50() {  # braid_p50 BINARY "ENV ..." "FLAGS ..."
  local bin="$1" envs="$2" extra="$3"
  PORT=$((PORT + 1))
  # shellcheck disable=SC2086  # the env list is word-split on purpose
  env $envs timeout 20 ${SRV[@]+"${SRV[@]}"} "$bin" --server --bind "127.0.0.1:$PORT" --time-limit 15 \
    "${FLAGS[@]}" $extra >/dev/null 2>&1 &
  SERVER_PID=$!
  sleep 0.2
  # shellcheck disable=SC2086
  env $envs timeout 20 ${CLI[@]+"${CLI[@]}"} "$bin" --client "127.0.0.1:$PORT" --time-limit 15 \
    "${FLAGS[@]}" $extra --test lat -s 64 -n "$ITERS" --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["lat_p50_us"])'
  sleep 0.1
  stop_server
}

echo "lat_ab.sh: $ROUNDS rounds, $ITERS round trips each; load: $(cut -d' ' -f1-3 /proc/loadavg)"
RAW=() VA=() VB=()
for r in $(seq "$ROUNDS"); do
  raw=$(raw_p50)
  a=$(braid_p50 "$A" "$ENV_A" "$ARGS_A")
  b=$(braid_p50 "$B" "$ENV_B" "$ARGS_B")
  # A failed run prints nothing: keep its place in the round as "nan".
  raw=${raw:-nan} a=${a:-nan} b=${b:-nan}
  echo "round $r: raw p50 $raw us, A $a us, B $b us"
  RAW+=("$raw") VA+=("$a") VB+=("$b")
done
python3 "$(dirname "$0")/compare_stats.py" vs-raw "${RAW[*]}" "${VA[*]}" "${VB[*]}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

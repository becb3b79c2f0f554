#!/usr/bin/env bash
# Raw-UDP baseline ("limit of the path") with udp-blast, on loopback or
# between two addresses. Prints one JSON line per measurement (--json) or a
# table. Starts its own server (by PID) and always stops it.
#
#   bench/udp_baseline.sh [--bin build/bench/udp_blast/udp-blast]
#                         [--addr 127.0.0.1:19400] [--seconds 3]
#                         [--sizes "64 512 1472"] [--sockets 1] [--json]
#
# Run a server elsewhere and add --remote to measure a real path (no local
# server is started then).
set -euo pipefail

BIN=""
ADDR="127.0.0.1:19400"
SECONDS_PER_RUN=3
SIZES="64 512 1472"
SOCKETS=1
JSON=0
REMOTE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN="$2"; shift 2 ;;
    --addr) ADDR="$2"; shift 2 ;;
    --seconds) SECONDS_PER_RUN="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --sockets) SOCKETS="$2"; shift 2 ;;
    --json) JSON=1; shift ;;
    --remote) REMOTE=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [[ -z "$BIN" ]]; then
  here="$(cd "$(dirname "$0")/.." && pwd)"
  for cand in "$here"/build*/bench/udp_blast/udp-blast; do
    [[ -x "$cand" ]] && BIN="$cand" && break
  done
fi
[[ -x "$BIN" ]] || { echo "udp-blast binary not found (use --bin)" >&2; exit 2; }

SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT INT TERM

if [[ $REMOTE -eq 0 ]]; then
  "$BIN" server -b "$ADDR" --json >/dev/null &
  SERVER_PID=$!
  sleep 0.3
fi

results=()
run() {  # run <args...>: one client run, JSON line appended to results
  local line
  line="$("$BIN" client -c "$ADDR" "$@" --json)"
  results+=("$line")
  [[ $JSON -eq 1 ]] && echo "$line"
  return 0
}

for size in $SIZES; do
  for gso in --gso --no-gso; do
    for gro in --gro --no-gro; do
      run bw -s "$size" -D "$SECONDS_PER_RUN" "$gso" "$gro" -e "$SOCKETS"
    done
  done
done
for size in 64 1472; do
  run lat -s "$size" -n 20000
done

if [[ $JSON -eq 0 ]]; then
  python3 - "${results[@]}" <<'PY'
import json, sys
rows = [json.loads(a) for a in sys.argv[1:]]
print(f"{'mode':4} {'size':>5} {'gso':>4} {'gro':>4} {'Gbit/s':>8} {'Mpps':>7} {'loss%':>6}   {'p50us':>7} {'p99us':>7} {'p999us':>7}")
for r in rows:
    if r["mode"] == "bw":
        print(f"bw   {r['size']:>5} {str(r['gso'])[0]:>4} {str(r['gro'])[0]:>4} {r['gbps']:8.3f} {r['pps']/1e6:7.3f} {100*r['loss']:6.2f}")
    else:
        print(f"lat  {r['size']:>5} {'':>4} {'':>4} {'':>8} {'':>7} {'':>6}   {r['p50_us']:7.2f} {r['p99_us']:7.2f} {r['p999_us']:7.2f}")
PY
fi

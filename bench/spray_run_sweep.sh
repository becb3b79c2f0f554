#!/usr/bin/env bash
# Goodput of 64 KiB messages over loopback for several --spray-run values
# (datagrams sent in a row on one path before the next), to choose the UDP
# backend's default. Values are measured alternately, round after round, and
# the median per value is printed with the counters that explain it: the
# client's CPU seconds (user, kernel) per GB of goodput, sender syscalls per
# datagram, datagrams per GSO super-datagram, acks per 100 data
# datagrams, retransmissions.
#
#   bench/spray_run_sweep.sh [--build DIR] [--runs "1 8 16 32 44 64 128"]
#                            [--rounds 3] [--seconds 2] [--block|--poll]
#                            [--paths 16] [--braid-args "..."]
set -euo pipefail

BUILD=""
RUNS="1 8 16 32 44 64 128"
ROUNDS=3
SECS=2
MODE=--block
PATHS=16
EXTRA=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --seconds) SECS="$2"; shift 2 ;;
    --block|--poll) MODE="$1"; shift ;;
    --paths) PATHS="$2"; shift 2 ;;
    --braid-args) EXTRA="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "spray_run_sweep.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
here="$(cd "$(dirname "$0")/.." && pwd)"
PERF="${BUILD:-$here/build}/tools/braid_perf/braid-perf"
[[ -x "$PERF" ]] || { echo "braid-perf not found at $PERF (--build DIR)" >&2; exit 2; }

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

for round in $(seq "$ROUNDS"); do
  for r in $RUNS; do
    # shellcheck disable=SC2086  # word-splitting of --braid-args is wanted
    "$PERF" --server --bind 127.0.0.1:0 --time-limit 30 "$MODE" --paths "$PATHS" \
      --spray-run "$r" $EXTRA >/dev/null 2>"$WORK/server.err" &
    SERVER_PID=$!
    addr=""
    for _ in $(seq 50); do
      addr="$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$WORK/server.err")"
      [[ -n "$addr" ]] && break
      sleep 0.05
    done
    # shellcheck disable=SC2086
    if out="$(timeout 40 /usr/bin/time -o "$WORK/cpu" -f '%U %S' "$PERF" --client "$addr" \
        --test bw -s 65536 -D "$SECS" "$MODE" --paths "$PATHS" --spray-run "$r" \
        --time-limit 30 --json --stats $EXTRA)"; then
      printf '%s\t%s\t%s\n' "$r" "$(tail -1 "$WORK/cpu")" "$out" >>"$WORK/results.tsv"
    else
      echo "spray-run $r round $round failed" >&2
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    echo "  round $round spray-run $r done" >&2
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}" \
  python3 - "$WORK/results.tsv" <<'PY'
import json, sys
from compare_stats import median
rows = {}
for line in open(sys.argv[1]):
    r, cpu, text = line.rstrip("\n").split("\t", 2)
    user, sys_ = (float(x) for x in cpu.split())
    d = json.loads(text)
    if not d.get("ok"):
        continue
    res = d["results"][0]
    ep = d["stats"]["endpoint"]
    gbytes = res["gbps"] * res["seconds"] / 8
    rows.setdefault(int(r), []).append({
        "gbps": res["gbps"],
        # client CPU seconds (user, kernel) per GB of goodput: what the
        # sender pays per byte, independent of how long it waited
        "user_s_per_gb": user / gbytes if gbytes else 0.0,
        "sys_s_per_gb": sys_ / gbytes if gbytes else 0.0,
        "tx_sys_per_dgram": res["client"]["tx_syscalls_per_datagram"],
        "segs_per_gso": ep["gso_segments"] / ep["gso_sends"] if ep["gso_sends"] else 0.0,
        "acks_per_100": 100.0 * ep["acks_received"] / max(1, ep["datagrams_sent"]),
        "retrans_per_1k": 1000.0 * ep["retransmits"] / max(1, ep["datagrams_sent"]),
    })
print("spray_run  runs  Gbit/s(median)  min..max     client user,sys s/GB  tx_syscalls/dgram  dgrams/GSO  acks/100dgrams  retrans/1k dgrams")
for r in sorted(rows):
    v = rows[r]
    med = lambda k: median([x[k] for x in v])
    g = [x["gbps"] for x in v]
    print(f"{r:9d}  {len(v):4d}  {med('gbps'):14.2f}  {min(g):5.2f}..{max(g):5.2f}  "
          f"{med('user_s_per_gb'):10.3f},{med('sys_s_per_gb'):.3f}  "
          f"{med('tx_sys_per_dgram'):17.3f}  {med('segs_per_gso'):10.1f}  "
          f"{med('acks_per_100'):14.2f}  {med('retrans_per_1k'):17.2f}")
PY

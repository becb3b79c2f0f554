#!/usr/bin/env bash
# Where a bulk sender's CPU goes, per gigabyte of goodput. Runs, back to
# back and each with its own server, the pinned client of
#   raw       udp-blast bw (MTU - 28 byte datagrams, GSO + GRO, busy-polling)
#   raw+copy  the same, copying each payload from a 2 MiB source first
#   raw+iov   the same, each datagram a header iovec plus its payload left
#             in place in a 2 MiB source (braid's layout from --mtu 9000 on)
#   braid     braid-perf --test bw -s 65536 --mtu MTU (busy-polling)
# under `perf record`, and prints for each the perf samples per GB of
# goodput, split into kernel and user space, then the costliest symbols.
# Samples per GB compare CPU cost per byte between tools measured in the
# same minute; the loopback goodput ratio target (braid >= 0.9 x raw) is
# a bound on braid's total: raw's total / 0.9.
#
#   bench/goodput_budget.sh [--build DIR] [--seconds 3] [--top 15] [--mtu 1500]
#
# Needs `perf` (Debian: linux-perf) and permission to sample the kernel
# (root, or kernel.perf_event_paranoid <= 1). Clients run on CPU 0 and
# servers on CPU 1; every process has a time limit and is stopped by PID.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$here/build-rel"
SECS=3
TOP=15
MTU=1500
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --seconds) SECS="$2"; shift 2 ;;
    --top) TOP="$2"; shift 2 ;;
    --mtu) MTU="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "goodput_budget.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! [[ $MTU =~ ^[0-9]+$ ]] || ((MTU < 576 || MTU > 65535)); then
  echo "goodput_budget.sh: --mtu must be an integer in 576..65535, got '$MTU'" >&2
  exit 2
fi
BLAST="$BUILD/bench/udp_blast/udp-blast"
PERF_TOOL="$BUILD/tools/braid_perf/braid-perf"
[[ -x "$BLAST" && -x "$PERF_TOOL" ]] || {
  echo "goodput_budget.sh: build udp-blast and braid-perf in $BUILD first" \
       "(ninja -C $BUILD udp-blast braid-perf)" >&2
  exit 2
}
command -v perf >/dev/null || {
  echo "goodput_budget.sh: needs perf (apt-get install linux-perf)" >&2
  exit 2
}

WORK="$(mktemp -d /tmp/goodput_budget.XXXXXX)"
SERVER=""
stop_server() {
  if [[ -n "$SERVER" ]]; then
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
  fi
}
trap 'stop_server; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

PORT=$((20000 + RANDOM % 20000))

# blast <name> [client args...]: one raw run; its goodput goes to
# $WORK/<name>.gbps.
blast() {
  local name="$1"; shift
  timeout 30 taskset -c 1 "$BLAST" server -b "127.0.0.1:$PORT" --busy-poll \
    --once --json >"$WORK/$name.server" 2>&1 &
  SERVER=$!
  sleep 0.3
  timeout 30 taskset -c 0 perf record -q -F 4999 -o "$WORK/$name.data" \
    "$BLAST" client -c "127.0.0.1:$PORT" bw -s "$((MTU - 28))" -D "$SECS" \
    --busy-poll --json \
    "$@" >"$WORK/$name.client" 2>"$WORK/$name.err"
  stop_server
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gbps"])' \
    "$WORK/$name.client" >"$WORK/$name.gbps"
}

# braid <name>: one braid-perf bw run.
braid() {
  local name="$1" addr=""
  timeout 40 taskset -c 1 "$PERF_TOOL" --server --bind 127.0.0.1:0 \
    --time-limit 35 >/dev/null 2>"$WORK/$name.server" &
  SERVER=$!
  for _ in $(seq 60); do
    addr="$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$WORK/$name.server")"
    [[ -n "$addr" ]] && break
    sleep 0.05
  done
  [[ -n "$addr" ]] || { echo "goodput_budget.sh: braid-perf server did not start" >&2; exit 1; }
  timeout 40 taskset -c 0 perf record -q -F 4999 -o "$WORK/$name.data" \
    "$PERF_TOOL" --client "$addr" --time-limit 35 --test bw -s 65536 \
    --mtu "$MTU" -D "$SECS" --json >"$WORK/$name.client" 2>"$WORK/$name.err"
  stop_server
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["gbps"])' \
    "$WORK/$name.client" >"$WORK/$name.gbps"
}

echo "goodput_budget.sh: MTU $MTU, $SECS s per run, clients on CPU 0, servers on CPU 1; $(date -u +%H:%M:%S) UTC" >&2
blast raw
blast rawcopy --copy-from 2M
blast rawiov --iov-from 2M
braid braid
for name in raw rawcopy rawiov braid; do
  perf report -i "$WORK/$name.data" --no-children --sort sym -n --stdio \
    2>/dev/null >"$WORK/$name.syms"
done

python3 - "$WORK" "$SECS" "$TOP" <<'PY'
import re, sys
work, secs, top = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
line = re.compile(r"\s*[\d.]+%\s+(\d+)\s+\[(.)\]\s+(.*)")
runs = [("raw", "raw udp-blast"), ("rawcopy", "raw + 1 user copy"),
        ("rawiov", "raw, 2 iovecs/datagram"), ("braid", "braid-perf bw 64 KiB")]
data = {}
for name, _ in runs:
    gbps = float(open(f"{work}/{name}.gbps").read())
    gb = gbps * secs / 8  # gigabytes of goodput in the run
    syms = {}
    for l in open(f"{work}/{name}.syms"):
        m = line.match(l)
        if m:
            syms[m.group(3).strip()] = (int(m.group(1)), m.group(2) == "k")
    data[name] = (gbps, gb, syms)
print("perf samples (4999 Hz) per GB of goodput, pinned client")
print(f"{'client':<24}{'Gbit/s':>8}{'kernel':>9}{'user':>8}{'total':>8}")
totals = {}
for name, label in runs:
    gbps, gb, syms = data[name]
    k = sum(n for n, kern in syms.values() if kern) / gb
    u = sum(n for n, kern in syms.values() if not kern) / gb
    totals[name] = k + u
    print(f"{label:<24}{gbps:8.2f}{k:9.0f}{u:8.0f}{k + u:8.0f}")
bound = totals["raw"] / 0.9
print(f"braid total for 0.9 x raw: <= {bound:.0f} per GB; measured {totals['braid']:.0f}"
      f" (goodput ratio {data['braid'][0] / data['raw'][0]:.3f})")
gbps, gb, syms = data["braid"]
print(f"\nbraid client, top {top} symbols (samples per GB; [k] kernel):")
for s, (n, kern) in sorted(syms.items(), key=lambda x: -x[1][0])[:top]:
    print(f"{n / gb:8.1f}  {'[k]' if kern else '   '} {s[:90]}")
PY

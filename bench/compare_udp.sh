#!/usr/bin/env bash
# braid vs raw UDP on loopback, measured ALTERNATELY in one run (the loopback
# figures). Each round runs, in this order, with the same datagram size
# (MTU - 28) and the same GSO/GRO settings on both tools, both sides
# busy-polling:
#
#   raw  bw   udp-blast, datagrams of MTU-28 bytes, -D SECONDS
#   raw  bw   the same with --copy-from 2M (context: raw UDP plus the one
#             user-space copy per datagram braid makes; not a target)
#   raw  bw   the same with --iov-from 2M (context: no copy, each datagram
#             a header iovec + a payload iovec, the zero-copy layout)
#   braid bw  braid-perf, 64 KiB messages, -D SECONDS
#   raw  lat  udp-blast ping-pong, 64 B, then again with the client's socket
#             connected (no route lookup per send; braid connects its
#             source-port sockets to their first peer, UdpOptions::connect)
#   braid lat braid-perf ping-pong, 64 B
#   raw  bw64 udp-blast, 64 B datagrams (context for msg/s)
#   braid rate braid-perf, 64 B messages one way
#   braid bw  with --loss P on both sides (data and ack paths)
#   braid lat with --loss P on both sides
#
# (--block: both tools wait in poll/epoll instead) then prints the median of each figure over the rounds and the ratios the
# targets ask for, plus one --block bw run for syscalls per datagram. For the
# goodput, latency and loss ratios it also prints each round's ratio and, for the
# median of those, a distribution-free ~95 % interval (bench/compare_stats.py)
# that says whether the rounds settle the figure: met, short or undecided.
# Every server is started by this script for one measurement and stopped by
# its PID; a trap stops whatever is left. The whole run is bounded (default
# budget 170 s; each process also has its own time limit).
#
#   bench/compare_udp.sh [--build DIR] [--rounds 3] [--seconds 1.5]
#                        [--lat-iters 5000] [--mtu 1500] [--no-gso] [--no-gro]
#                        [--loss 0.01] [--paths 16] [--json] [--keep DIR]
#                        [--nice N]   (run both tools at this nice level, e.g.
#                                      -10 on a shared, busy machine; root)
#                        [--block]    (both tools block in poll/epoll instead
#                                      of busy-polling; for loaded machines)
#                        [--pin]      (every client on CPU 0, every server on
#                                      CPU 1, both tools alike; without it the
#                                      scheduler may put both busy-pollers on
#                                      one core now and then, which makes
#                                      2-core runs bimodal)
#                        [--braid-args "--cc none ..."]  (extra braid-perf
#                                      flags for both sides, for diagnosis)
#                        [--only bw,lat,rate,loss]  (run only these pairs;
#                                      default all; figures of the others n/a)
set -euo pipefail

BUILD=""
ROUNDS=3
SECS=1.5
LAT_ITERS=5000
MTU=1500
GSO=--gso
GRO=--gro
LOSS=0.01
PATHS=16
JSON=0
KEEP=""
BUDGET=170
NICE=0
BRAID_ARGS=""
BLOCK=0
PIN=0
ONLY="bw,lat,rate,loss"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --seconds) SECS="$2"; shift 2 ;;
    --lat-iters) LAT_ITERS="$2"; shift 2 ;;
    --mtu) MTU="$2"; shift 2 ;;
    --gso|--no-gso) GSO="$1"; shift ;;
    --gro|--no-gro) GRO="$1"; shift ;;
    --loss) LOSS="$2"; shift 2 ;;
    --paths) PATHS="$2"; shift 2 ;;
    --json) JSON=1; shift ;;
    --keep) KEEP="$2"; shift 2 ;;
    --budget) BUDGET="$2"; shift 2 ;;
    --nice) NICE="$2"; shift 2 ;;
    --braid-args) BRAID_ARGS="$2"; shift 2 ;;
    --block) BLOCK=1; shift ;;
    --pin) PIN=1; shift ;;
    --only) ONLY="$2"; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) echo "compare_udp.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")/.." && pwd)"
find_bin() {  # find_bin <relative path>: in --build, else the newest build*/
  local rel="$1" best="" cand
  if [[ -n "$BUILD" ]]; then
    [[ -x "$BUILD/$rel" ]] && echo "$BUILD/$rel"
    return 0
  fi
  for cand in "$here"/build*/"$rel"; do
    [[ -x "$cand" ]] || continue
    if [[ -z "$best" || "$cand" -nt "$best" ]]; then best="$cand"; fi
  done
  echo "$best"
}
BLAST="$(find_bin bench/udp_blast/udp-blast)"
PERF="$(find_bin tools/braid_perf/braid-perf)"
[[ -x "$BLAST" ]] || { echo "udp-blast not found (build it, or --build DIR)" >&2; exit 2; }
[[ -x "$PERF" ]] || { echo "braid-perf not found (build it, or --build DIR)" >&2; exit 2; }

DGRAM=$((MTU - 28))
BLAST_POLL=(--busy-poll)
PERF_POLL=(--poll)
if [[ $BLOCK -eq 1 ]]; then BLAST_POLL=(); PERF_POLL=(--block); fi
RUN=(nice -n "$NICE")
SRV=("${RUN[@]}")
CLI=("${RUN[@]}")
if [[ $PIN -eq 1 ]]; then
  if (( $(nproc) < 2 )) || ! command -v taskset >/dev/null; then
    echo "compare_udp.sh: --pin needs 2 CPUs and taskset (util-linux)" >&2
    exit 2
  fi
  SRV=(taskset -c 1 "${RUN[@]}")
  CLI=(taskset -c 0 "${RUN[@]}")
fi
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
WORK="$(mktemp -d /tmp/compare_udp.XXXXXX)"
SERVER_PID=""
START=$SECONDS

stop_server() {
  if [[ -n "$SERVER_PID" ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
cleanup() {
  stop_server
  if [[ -n "$KEEP" ]]; then
    mkdir -p "$KEEP" && cp "$WORK"/* "$KEEP"/ 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# want <group>: true if --only names it.
want() { [[ ",$ONLY," == *",$1,"* ]]; }
over_budget() { (( SECONDS - START > BUDGET )); }

# A free-looking UDP port for udp-blast (braid-perf picks its own).
BLAST_PORT=$((20000 + RANDOM % 20000))

# record <tag> <json line>: appends to the results file.
record() { printf '%s\t%s\n' "$1" "$2" >> "$WORK/results.tsv"; }
# record_failed <tag> <tool>: a run that left no report. The placeholder
# keeps each later round's runs paired with their own round's; the
# summary counts it as failed (braid-perf) or skips it (udp-blast).
record_failed() { record "$1" "{\"tool\":\"$2\",\"ok\":false,\"results\":[]}"; }
# progress <tag> <start second>: one line on stderr per measurement.
progress() {
  [[ $JSON -eq 1 ]] || echo "  $1: $((SECONDS - $2)) s" >&2
}

# raw <tag> <client args...>: one udp-blast measurement with its own server.
raw() {
  local tag="$1"; shift
  over_budget && return 0
  local t0=$SECONDS
  "${SRV[@]}" "$BLAST" server -b "127.0.0.1:$BLAST_PORT" ${BLAST_POLL[@]+"${BLAST_POLL[@]}"} --json \
    >"$WORK/blast_server.out" 2>&1 &
  SERVER_PID=$!
  local i
  for i in $(seq 60); do  # until the server's socket is bound (<= 3 s)
    if command -v ss >/dev/null; then
      [[ -n "$(ss -Hlun "sport = :$BLAST_PORT" 2>/dev/null)" ]] && break
    elif (( i >= 4 )); then
      break
    fi
    sleep 0.05
  done
  local out
  if out="$(timeout 30 "${CLI[@]}" "$BLAST" client -c "127.0.0.1:$BLAST_PORT" "$@" ${BLAST_POLL[@]+"${BLAST_POLL[@]}"} --json 2>"$WORK/blast_client.err")"; then
    record "$tag" "$out"
  else
    echo "compare_udp.sh: udp-blast $tag failed: $(cat "$WORK/blast_client.err")" >&2
    record_failed "$tag" udp-blast
  fi
  stop_server
  progress "$tag" "$t0"
}

# braid <tag> <server extra args> -- <client args...>
braid() {
  local tag="$1"; shift
  local sargs=()
  while [[ "$1" != "--" ]]; do sargs+=("$1"); shift; done
  shift
  over_budget && return 0
  local t0=$SECONDS
  : >"$WORK/perf_server.err"
  "${SRV[@]}" "$PERF" --server --bind 127.0.0.1:0 --time-limit 40 --json "${sargs[@]}" \
    >"$WORK/perf_server.out" 2>"$WORK/perf_server.err" &
  SERVER_PID=$!
  local addr="" i
  for i in $(seq 50); do
    addr="$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$WORK/perf_server.err")"
    [[ -n "$addr" ]] && break
    sleep 0.05
  done
  if [[ -z "$addr" ]]; then
    echo "compare_udp.sh: braid-perf server did not start: $(cat "$WORK/perf_server.err")" >&2
    record_failed "$tag" braid-perf
    stop_server
    return 0
  fi
  local out rc=0
  out="$(timeout 45 "${CLI[@]}" "$PERF" --client "$addr" --time-limit 40 --json "$@" 2>"$WORK/perf_client.err")" || rc=$?
  if [[ -n "$out" ]]; then
    record "$tag" "$out"
  else
    record_failed "$tag" braid-perf
  fi
  if [[ $rc -ne 0 ]]; then
    echo "compare_udp.sh: braid-perf $tag exited $rc: $(tail -3 "$WORK/perf_client.err")" >&2
  fi
  # The server exits by itself after the client's Bye; give it a moment.
  for i in $(seq 20); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  stop_server
  progress "$tag" "$t0"
}

# shellcheck disable=SC2206  # word-splitting of --braid-args is wanted
COMMON=(--mtu "$MTU" "$GSO" "$GRO" --paths "$PATHS" "${PERF_POLL[@]}" $BRAID_ARGS)
IMP=(--loss "$LOSS")
for round in $(seq "$ROUNDS"); do
  [[ $JSON -eq 1 ]] || echo "round $round/$ROUNDS ($((SECONDS - START)) s)" >&2
  if want bw; then
    raw raw_bw bw -s "$DGRAM" -D "$SECS" "$GSO" "$GRO"
    # Context, not a target: raw UDP plus the one user-space copy per
    # datagram a transport with per-datagram headers makes, from a source
    # as large as braid-perf's bw window (32 x 64 KiB).
    raw raw_bw_copy bw -s "$DGRAM" -D "$SECS" "$GSO" "$GRO" --copy-from 2M
    # Context: the same data left in place, header + payload iovec per
    # datagram. The better of these two is the most a transport that puts a
    # header on every datagram can reach with no protocol work at all.
    raw raw_bw_iov bw -s "$DGRAM" -D "$SECS" "$GSO" "$GRO" --iov-from 2M
    braid braid_bw "${COMMON[@]}" -- --test bw -s 65536 -D "$SECS" "${COMMON[@]}"
  fi
  if want lat; then
    raw raw_lat lat -s 64 -n "$LAT_ITERS"
    raw raw_lat_conn lat -s 64 -n "$LAT_ITERS" --connect
    braid braid_lat "${COMMON[@]}" -- --test lat -s 64 -n "$LAT_ITERS" "${COMMON[@]}"
  fi
  if want rate; then
    raw raw_bw64 bw -s 64 -D "$SECS" "$GSO" "$GRO"
    braid braid_rate "${COMMON[@]}" -- --test rate -s 64 -D "$SECS" "${COMMON[@]}"
  fi
  if want loss; then
    braid braid_bw_loss "${COMMON[@]}" "${IMP[@]}" -- --test bw -s 65536 -D "$SECS" "${COMMON[@]}" "${IMP[@]}"
    braid braid_lat_loss "${COMMON[@]}" "${IMP[@]}" -- --test lat -s 64 -n "$LAT_ITERS" "${COMMON[@]}" "${IMP[@]}"
  fi
done
# Syscalls per datagram with blocking waits (busy-polling counts empty polls).
want bw && braid braid_bw_block "${COMMON[@]}" --block -- --test bw -s 65536 -D 1 "${COMMON[@]}" --block
over_budget && echo "compare_udp.sh: time budget of $BUDGET s reached; later runs skipped" >&2

LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
PYTHONPATH="$here/bench${PYTHONPATH:+:$PYTHONPATH}" python3 - "$WORK/results.tsv" "$JSON" "$ROUNDS" "$MTU" "$GSO" "$GRO" "$LOSS" "$PATHS" "$((SECONDS - START))" "$NICE" "$LOAD_BEFORE" "$LOAD_AFTER" "$BRAID_ARGS" "$BLOCK" "$PIN" <<'PY'
import json, sys
from compare_stats import judged, median, median_ci, per_round, ratio
path, as_json, rounds, mtu, gso, gro, loss, paths, elapsed, nice, load0, load1, bargs, block, pin = sys.argv[1:]
runs = {}
try:
    for line in open(path):
        tag, text = line.rstrip("\n").split("\t", 1)
        runs.setdefault(tag, []).append(json.loads(text))
except FileNotFoundError:
    pass

def braid_row(r):
    return r["results"][0] if r.get("results") else None

def med(tag, field):
    vals = []
    for r in runs.get(tag, []):
        row = braid_row(r) if r.get("tool") == "braid-perf" else r
        if row is None or field not in row:
            continue
        if r.get("tool") == "braid-perf" and not row.get("ok", False):
            continue  # a failed run does not count as a measurement
        vals.append(row[field])
    return median(vals), len(vals)

def series(tag, field):
    """Per-run values in run order (one per round); None for a failed run."""
    out = []
    for r in runs.get(tag, []):
        row = braid_row(r) if r.get("tool") == "braid-perf" else r
        ok = row is not None and field in row and (
            r.get("tool") != "braid-perf" or row.get("ok", False))
        out.append(row[field] if ok else None)
    return out

def failed(tag):
    return sum(1 for r in runs.get(tag, []) if r.get("tool") == "braid-perf"
               and not r.get("ok", False))

fig = {}
fig["raw_bw_gbps"], _ = med("raw_bw", "gbps")
fig["braid_bw_gbps"], _ = med("braid_bw", "gbps")
fig["raw_bw_copy_gbps"], _ = med("raw_bw_copy", "gbps")
fig["raw_bw_iov_gbps"], _ = med("raw_bw_iov", "gbps")
fig["raw_lat_p50_us"], _ = med("raw_lat", "p50_us")
fig["raw_lat_p99_us"], _ = med("raw_lat", "p99_us")
fig["raw_lat_conn_p50_us"], _ = med("raw_lat_conn", "p50_us")
fig["braid_lat_p50_us"], _ = med("braid_lat", "lat_p50_us")
fig["braid_lat_p99_us"], _ = med("braid_lat", "lat_p99_us")
fig["raw_64b_pps"], _ = med("raw_bw64", "pps")
fig["braid_rate_msg_per_s"], _ = med("braid_rate", "msg_per_s")
fig["braid_bw_loss_gbps"], _ = med("braid_bw_loss", "gbps")
fig["braid_lat_loss_p99_us"], _ = med("braid_lat_loss", "lat_p99_us")
fig["braid_lat_loss_p50_us"], _ = med("braid_lat_loss", "lat_p50_us")

best_hdr = max([v for v in (fig["raw_bw_copy_gbps"], fig["raw_bw_iov_gbps"]) if v is not None], default=None)
ceiling = ratio(best_hdr, fig["raw_bw_gbps"])

# The targets, (comparison, bound): used for the medians and for the
# per-round intervals alike.
T_GOODPUT, T_LATENCY, T_RATE = (">=", 0.9), ("<=", 1.3), (">=", 1.0)
T_LOSS_GOODPUT, T_LOSS_P99 = (">=", 0.85), ("<=", 3.0)
ratios = [
    ("64 KiB goodput braid/raw", ratio(fig["braid_bw_gbps"], fig["raw_bw_gbps"]), *T_GOODPUT),
    ("64 B one-way latency p50 braid/raw", ratio(fig["braid_lat_p50_us"], fig["raw_lat_p50_us"]), *T_LATENCY),
    ("  same, raw client socket connected", ratio(fig["braid_lat_p50_us"], fig["raw_lat_conn_p50_us"]), *T_LATENCY),
    ("64 B messages/s (millions)", None if fig["braid_rate_msg_per_s"] is None else fig["braid_rate_msg_per_s"] / 1e6, *T_RATE),
    (f"64 KiB goodput {float(loss)*100:g}% loss / lossless", ratio(fig["braid_bw_loss_gbps"], fig["braid_bw_gbps"]), *T_LOSS_GOODPUT),
    (f"64 B p99 {float(loss)*100:g}% loss / lossless", ratio(fig["braid_lat_loss_p99_us"], fig["braid_lat_p99_us"]), *T_LOSS_P99),
]
block_rows = [braid_row(r) for r in runs.get("braid_bw_block", []) if braid_row(r)]
sysc = {}
if block_rows:
    b = block_rows[0]
    c, sv = b["client"], b["server"]
    dd = max(1, c["datagrams_sent"])  # data datagrams, incl. retransmissions
    sysc = {
        "client_tx_syscalls_per_data_datagram": c["tx_syscalls"] / dd,
        "server_rx_syscalls_per_data_datagram": sv["rx_syscalls"] / dd,
        "server_tx_syscalls_per_data_datagram": sv["tx_syscalls"] / dd,
        "client_allocations_per_message": c["allocations_per_message"],
        "server_allocations_per_message": sv["allocations_per_message"],
    }
# Round-by-round ratios: the machine's speed drifts between rounds, and the
# spread says how far one median can be trusted.
rounds_bw = per_round(series("braid_bw", "gbps"), series("raw_bw", "gbps"))
rounds_lat = per_round(series("braid_lat", "lat_p50_us"),
                       series("raw_lat", "p50_us"))
failures = {t: failed(t) for t in runs if failed(t)}
counts = {t: len(v) for t, v in runs.items()}

rounds_loss_bw = per_round(series("braid_bw_loss", "gbps"),
                           series("braid_bw", "gbps"))
rounds_loss_p99 = per_round(series("braid_lat_loss", "lat_p99_us"),
                            series("braid_lat", "lat_p99_us"))
ci_bw = median_ci(rounds_bw)
ci_lat = median_ci(rounds_lat)
ci_loss_bw = median_ci(rounds_loss_bw)
ci_loss_p99 = median_ci(rounds_loss_p99)

if as_json == "1":
    print(json.dumps({"tool": "compare_udp", "rounds": int(rounds), "mtu": int(mtu),
                      "datagram": int(mtu) - 28, "gso": gso == "--gso", "gro": gro == "--gro",
                      "loss": float(loss), "paths": int(paths), "elapsed_s": int(elapsed),
                      "nice": int(nice), "braid_args": bargs,
                      "polling": "block" if block == "1" else "busy", "pinned": pin == "1", "loadavg_before": load0, "loadavg_after": load1,
                      "medians": fig, "ratios": {n: v for n, v, _, _ in ratios},
                      "context": {"goodput_braid_over_raw_with_copy": ratio(fig["braid_bw_gbps"], fig["raw_bw_copy_gbps"]),
                                  "goodput_raw_with_copy_over_raw": ratio(fig["raw_bw_copy_gbps"], fig["raw_bw_gbps"]),
                                  "goodput_raw_with_iovecs_over_raw": ratio(fig["raw_bw_iov_gbps"], fig["raw_bw_gbps"]),
                                  "header_ceiling_over_raw": ceiling},
                      "per_round": {"goodput_braid_over_raw": rounds_bw,
                                    "latency_p50_braid_over_raw": rounds_lat,
                                    "loss_goodput_over_lossless": rounds_loss_bw,
                                    "loss_p99_over_lossless": rounds_loss_p99},
                      "per_round_median_ci": {k: None if c is None else dict(zip(("median", "lo", "hi", "coverage"), c)) for k, c in (
                          ("goodput_braid_over_raw", ci_bw), ("latency_p50_braid_over_raw", ci_lat),
                          ("loss_goodput_over_lossless", ci_loss_bw), ("loss_p99_over_lossless", ci_loss_p99))},
                      "syscalls": sysc, "runs": counts, "failed_runs": failures}))
    sys.exit(0)

def f(v, spec):
    return "n/a" if v is None else format(v, spec)

print(f"braid vs raw UDP on loopback: {rounds} rounds alternating, MTU {mtu} "
      f"(datagram {int(mtu)-28} B), {gso[2:]}, {gro[2:]}, {paths} paths, "
      f"{'blocking' if block == '1' else 'busy-polling'} both sides, "
      f"{'clients on CPU 0 and servers on CPU 1, ' if pin == '1' else ''}"
      f"loss runs at {float(loss)*100:g}% on both sides; {elapsed} s")
print(f"nice {nice}; load average before {load0}, after {load1}"
      + (f"; extra braid-perf flags: {bargs}" if bargs else ""))
print()
print("medians")
print(f"  raw  bw  {int(mtu)-28} B datagrams   {f(fig['raw_bw_gbps'], '8.3f')} Gbit/s")
print(f"  raw  bw  same + 1 user copy   {f(fig['raw_bw_copy_gbps'], '8.3f')} Gbit/s  (--copy-from 2M)")
print(f"  raw  bw  same, 2 iovecs/dgram  {f(fig['raw_bw_iov_gbps'], '8.3f')} Gbit/s  (--iov-from 2M)")
print(f"  braid bw 64 KiB messages      {f(fig['braid_bw_gbps'], '8.3f')} Gbit/s")
print(f"  braid bw 64 KiB, loss         {f(fig['braid_bw_loss_gbps'], '8.3f')} Gbit/s")
print(f"  raw  lat 64 B  p50/p99        {f(fig['raw_lat_p50_us'], '8.2f')} / {f(fig['raw_lat_p99_us'], '.2f')} us")
print(f"  raw  lat 64 B, connected p50  {f(fig['raw_lat_conn_p50_us'], '8.2f')} us")
print(f"  braid lat 64 B p50/p99        {f(fig['braid_lat_p50_us'], '8.2f')} / {f(fig['braid_lat_p99_us'], '.2f')} us")
print(f"  braid lat 64 B, loss p50/p99  {f(fig['braid_lat_loss_p50_us'], '8.2f')} / {f(fig['braid_lat_loss_p99_us'], '.2f')} us")
print(f"  raw  64 B datagrams/s         {f(fig['raw_64b_pps'], '12.0f')}")
print(f"  braid 64 B messages/s         {f(fig['braid_rate_msg_per_s'], '12.0f')}")
print()
print(f"{'figure':42} {'measured':>9}  target")
for name, v, op, target in ratios:
    verdict = "n/a" if v is None else ("met" if (v >= target if op == ">=" else v <= target) else "SHORT")
    print(f"{name:42} {f(v, '9.3f')}  {op} {target:<5} {verdict}")
rc = ratio(fig["braid_bw_gbps"], fig["raw_bw_copy_gbps"])
cr = ratio(fig["raw_bw_copy_gbps"], fig["raw_bw_gbps"])
if rc is not None:
    print(f"context: goodput braid / raw with one user copy per datagram {rc:.3f}; "
          f"that copy alone costs raw UDP {f(None if cr is None else 1 - cr, '.3f')} of its goodput")
if ceiling is not None:
    print(f"context: raw UDP with a header on every datagram, no protocol work, reaches "
          f"{ceiling:.3f} of raw (better of the copy and the 2-iovec runs); "
          f"braid reaches {f(ratio(fig['braid_bw_gbps'], best_hdr), '.3f')} of that")
def fr(vals):
    return " ".join("fail" if v is None else f"{v:.3f}" for v in vals)
if rounds_bw:
    print(f"per round: goodput braid/raw {fr(rounds_bw)}")
if rounds_lat:
    print(f"per round: latency p50 braid/raw {fr(rounds_lat)}")
if rounds_loss_bw:
    print(f"per round: goodput with loss / lossless {fr(rounds_loss_bw)}")
if rounds_loss_p99:
    print(f"per round: p99 with loss / lossless {fr(rounds_loss_p99)}")
for name, ci, op, target in (("goodput braid/raw", ci_bw, *T_GOODPUT),
                             ("latency p50 braid/raw", ci_lat, *T_LATENCY),
                             ("goodput with loss / lossless", ci_loss_bw, *T_LOSS_GOODPUT),
                             ("p99 with loss / lossless", ci_loss_p99, *T_LOSS_P99)):
    if ci is not None:
        m, lo, hi, cov = ci
        print(f"median of the per-round {name} {m:.3f}, {cov*100:.1f} % interval "
              f"[{lo:.3f}, {hi:.3f}] (order statistics): {op} {target} "
              f"{judged(ci, op, target)}")
if sysc:
    print()
    print("steady state (one --block 64 KiB bw run): " +
          ", ".join(f"{k} {v:.3f}" for k, v in sysc.items()))
if failures:
    print()
    print("FAILED braid-perf runs (excluded from medians): " +
          ", ".join(f"{t} x{n}" for t, n in failures.items()))
PY

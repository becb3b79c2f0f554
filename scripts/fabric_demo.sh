#!/usr/bin/env bash
# The A/B demo over a REAL routed network (docs/fabric.md): braid's multipath
# spraying vs the single-path go-back-N baseline, both run by braid-perf
# across the namespace leaf-spine fabric (tools/braid-fabric: 2 hosts,
# 2 leaves, 4 spines, MTU 9000, the kernel's own ECMP on the 5-tuple) under:
#   clean | 1 % loss on one spine | one spine blackholed mid-run |
#   one spine congested (tbf tail-drop bottleneck with ECN marking)
# It prints one table (goodput, latency p50/p99, retransmissions, per-spine
# spread of the data packets) and writes out/fabric_demo.png (gnuplot).
# The impaired spine is always the one the gbn baseline's single path
# hashes to, so both modes meet the impairment.
#
# Two regimes. CPU-bound: the links have no rate of their own, so the hosts'
# and the namespaces' forwarding CPU (2 vCPUs) is the bottleneck. Link-bound
# (rows "link-..."): every spine's leaf->spine ports are shaped to
# BRAID_DEMO_LINK_RATE (tbf, default 2 Gbit/s, a 512 KB port buffer), so, as
# in a real fabric, a spine link is the bottleneck: one path (gbn, RoCE-like)
# gets at most one spine's rate and pays its go-back-N re-sends out of it,
# while spraying uses all four and repairs selectively.
#
# Without root: says so and runs the simulator's A/B demo plus a loopback
# A/B with braid-perf's injected loss instead.
#
# Environment: BRAID_BUILD_DIR (default build), BRAID_DEMO_SKIP_BUILD=1 (use
# the build dir as it is), BRAID_DEMO_SECONDS (per run, default 4),
# BRAID_DEMO_LINK_RATE (tbf rate per spine link, default 2gbit; "off" skips
# the link-bound regime).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${BRAID_BUILD_DIR:-build}
SECS=${BRAID_DEMO_SECONDS:-4}
LINK_RATE=${BRAID_DEMO_LINK_RATE:-2gbit}
PERF_BIN=$ROOT/$B/tools/braid_perf/braid-perf
BLAST_BIN=$ROOT/$B/bench/udp_blast/udp-blast

build() {
  [[ ${BRAID_DEMO_SKIP_BUILD:-0} == 1 ]] && return 0
  echo "building into $B/ ..."
  BRAID_BUILD_DIR=$B scripts/build.sh >/dev/null
}

# ------------------------------------------------------------ without root
if [[ $EUID -ne 0 ]]; then
  echo "fabric_demo: the namespace fabric needs root; running the A/B on the"
  echo "simulator and on loopback (injected loss) instead."
  build
  echo
  echo "== braid-sim --ab-demo (simulated 4-spine fabric)"
  "$B/tools/braid_sim/braid-sim" --ab-demo --messages 300
  if [[ -x $PERF_BIN ]]; then
    echo
    echo "== loopback, 1 % injected loss each way (braid-perf --loss 0.01)"
    pids=()
    trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT INT TERM
    for mode in spray gbn; do
      "$PERF_BIN" --server --bind 127.0.0.1:19515 --mode "$mode" --loss 0.01 --block \
        2>/dev/null &
      pids=($!)
      sleep 0.3
      echo "-- $mode"
      "$PERF_BIN" --client 127.0.0.1:19515 --test bw -s 64k -D "$SECS" --mode "$mode" \
        --loss 0.01 --block --time-limit $((SECS + 20)) || echo "   ($mode run failed)"
      wait "${pids[0]}" 2>/dev/null || true
      pids=()
    done
  fi
  exit 0
fi

# ------------------------------------------------------------ as root
build
for bin in "$PERF_BIN" "$BLAST_BIN"; do
  [[ -x $bin ]] || { echo "fabric_demo: $bin is not built" >&2; exit 1; }
done
command -v gnuplot >/dev/null || echo "fabric_demo: no gnuplot; no chart" >&2

export BRAID_PERF=$PERF_BIN BRAID_FABRIC_PROBE=/bin/true
# shellcheck source=tests/fabric/lib.sh
source "$ROOT/tests/fabric/lib.sh"
# shellcheck source=tests/fabric/braid_lib.sh
source "$ROOT/tests/fabric/braid_lib.sh"
FABRIC_TEST=fabric_demo
fabric_init bfdemo  # traps EXIT/INT/TERM: kills our PIDs, tears the fabric down
mkdir -p "$ROOT/out"
RES=$FABRIC_TMP/results.tsv
: >"$RES"
T0=$SECONDS

echo "bringing up the fabric (2 hosts, 4 spines, MTU 9000) ..."
fab up --hosts 2 --spines 4 --mtu 9000 >/dev/null
SPRAY_BASE=$(braid_balanced_base 0 1 16)
[[ -n $SPRAY_BASE ]] || fabric_fail "no evenly spread 16-port window"
GBN_PORT=41000
BAD=$(fabric_spine_of 0 1 $GBN_PORT $PERF_DPORT)
echo "spray: 16 paths from source ports $SPRAY_BASE..$((SPRAY_BASE + 15)) (4 per spine);" \
  "gbn: 1 path, source port $GBN_PORT -> spine $BAD (the impaired spine)"

pin_for() {  # pin_for MODE
  if [[ $1 == spray ]]; then
    braid_pin_ports 0 "$SPRAY_BASE" 16
    braid_pin_ports 1 "$SPRAY_BASE" 16
  else
    braid_pin_ports 0 $GBN_PORT 1
    braid_pin_ports 1 $GBN_PORT 1
  fi
}

# Rate of wire bytes arriving at host 1, every 10 ms, into $FABRIC_TMP/rate.NAME;
# notes when $FABRIC_TMP/event appears (the blackhole).
start_sampler() {  # start_sampler NAME (COND.MODE)
  rm -f "$FABRIC_TMP/event"
  fab exec --host 1 -- python3 -c '
import os, sys, time
out = open(sys.argv[1], "w"); ev = sys.argv[2]; end = time.monotonic() + float(sys.argv[3])
seen = False; t0 = time.monotonic()
def rx():
    for line in open("/proc/net/dev"):
        if line.strip().startswith("eth0:"):
            return int(line.split(":")[1].split()[0])
    return 0
while time.monotonic() < end:
    t = time.monotonic() - t0
    out.write("%.4f %d\n" % (t, rx()))
    if not seen and os.path.exists(ev):
        seen = True; out.write("# event %.4f\n" % t)
    time.sleep(0.01)
' "$FABRIC_TMP/rate.$1" "$FABRIC_TMP/event" $((SECS + 4)) &
  SAMPLER_PID=$!
  FABRIC_BG_PIDS+=("$SAMPLER_PID")
}

# run COND MODE [impairment action during the run]: one braid-perf run;
# appends a row to $RES.
run() {
  local cond=$1 mode=$2 action=${3:-} paths=16 spread rc
  [[ $mode == gbn ]] && paths=1
  pin_for "$mode"
  fab counters --reset
  perf_server 1 --paths $paths --entropy-sockets $paths --mode "$mode" --mtu 9000 --block
  [[ $cond == *blackhole ]] && start_sampler "$cond.$mode"
  perf_client_bg 0 1 --test bw -s 64k -D "$SECS" --paths $paths --entropy-sockets $paths --mode "$mode" \
    --mtu 9000 --block --time-limit $((SECS + 6))
  if [[ -n $action ]]; then
    sleep "$(awk -v s="$SECS" 'BEGIN { print s / 2 }')"
    $action
    touch "$FABRIC_TMP/event"
  fi
  perf_client_wait
  rc=$PERF_RC
  perf_wait_server
  [[ $cond == *blackhole ]] && { wait "$SAMPLER_PID" 2>/dev/null || true; }
  cp "$FABRIC_TMP/client.json" "$ROOT/out/fabric_demo.$cond.$mode.json" 2>/dev/null || true
  perf_spread_snapshot
  spread=$(for k in 0 1 2 3; do perf_link_counter "$k" 0 up_pkts; done | paste -sd' ')
  python3 - "$FABRIC_TMP/client.json" "$cond" "$mode" "$rc" "$spread" >>"$RES" <<'PY'
import json, sys
path, cond, mode, rc, spread = sys.argv[1:6]
try:
    r = json.load(open(path)); x = r["results"][0]
    e = x["errors"]
    sent = x["client"]["datagrams_sent"]
    rtx = x["client"]["retransmits"]
    lost = x["iters"] - x["server_received"] if x["iters"] >= x["server_received"] else 0
    dup = e["server_duplicates"] + e["client_duplicates"]
    verdict = "ok" if r["ok"] and rc == "0" else ("time-limit" if e["time_limit"] else "FAIL")
    row = [cond, mode, "%.3f" % x["gbps"], "%.0f" % x["lat_p50_us"], "%.0f" % x["lat_p99_us"],
           str(rtx), "%.2f" % (100.0 * rtx / sent if sent else 0), str(dup), str(e["server_missing"]), verdict]
except Exception as ex:  # no report: the run died
    row = [cond, mode, "0", "-", "-", "-", "-", "-", "-", "no-report(rc=%s)" % rc]
n = [int(v) for v in spread.split()]
t = sum(n)
row.append("/".join("%d" % round(100.0 * v / t) for v in n) if t else "-")
print("\t".join(row))
PY
  echo "  $(tail -n 1 "$RES" | tr '\t' ' ')"
}

blackhole_on() { fab impair --spine "$BAD" --dir both --blackhole; }

# The link-bound regime's shaping of spine K (or all): leaf->spine ports at
# LINK_RATE, a 512 KB port buffer (tail drop), a 256 KB token bucket.
shape() { fab impair --spine "$1" --dir up --rate "$LINK_RATE" --burst 256k --limit 512k; }
# Takes spine BAD back to the regime's baseline after an impairment.
unimpair() {  # unimpair REGIME
  fab impair --spine "$BAD" --restore
  [[ $1 == link ]] && shape "$BAD"
  return 0
}

# Raw UDP across the same fabric, into BLAST_OUT (Gbit/s): SOCKETS source
# sockets round robin from source port BASE (runs in this shell, so the
# server's PID is in the trap's list).
blast() {  # blast BASE SOCKETS SECONDS
  braid_pin_ports 0 "$1" "$2"
  fab exec --host 1 -- "$BLAST_BIN" server -b "$(fab addr --host 1):9300" --once --json \
    >"$FABRIC_TMP/blast_server.json" 2>/dev/null &
  FABRIC_BG_PIDS+=($!)
  sleep 0.3
  fab exec --host 0 -- "$BLAST_BIN" client -c "$(fab addr --host 1):9300" bw -s 8972 -D "$3" \
    -e "$2" --json >"$FABRIC_TMP/blast.json" 2>"$FABRIC_TMP/blast.err" || true
  BLAST_OUT=$(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["gbps"])' \
    "$FABRIC_TMP/blast.json" 2>/dev/null || echo 0)
}

# clean, 1 % loss on spine BAD, spine BAD blackholed mid-run: spray and gbn.
conditions() {  # conditions REGIME (cpu|link); row names get "link-" in link
  local r=$1 pre=""
  [[ $r == link ]] && pre="link-"
  for mode in spray gbn; do run "${pre}clean" "$mode"; done
  fab impair --spine "$BAD" --dir up --loss 1
  for mode in spray gbn; do run "${pre}loss1" "$mode"; done
  unimpair "$r"
  for mode in spray gbn; do
    run "${pre}blackhole" "$mode" blackhole_on
    unimpair "$r"
  done
}

echo "runs of ${SECS} s, 64 KiB messages; CPU-bound regime (links unshaped):"
blast "$SPRAY_BASE" 16 "$SECS"
BLAST_GBPS=$BLAST_OUT
echo "  clean udp-blast (raw UDP, 16 sockets, 8972-byte datagrams): $BLAST_GBPS Gbit/s"
conditions cpu
# Congested: spine BAD's up links shaped to 20 Mbit/s (tail drop), CE marks
# above 200 packets/s (an ECN virtual queue ahead of the bottleneck).
fab impair --spine "$BAD" --dir up --rate 20mbit --burst 64k --limit 128k --ecn-limit 200 --ecn-burst 8
for mode in spray gbn; do run congested "$mode"; done
fab impair --spine "$BAD" --restore

LINK_BLAST_GBPS=n/a
if [[ $LINK_RATE != off ]]; then
  echo "link-bound regime: every spine's leaf->spine ports shaped to $LINK_RATE (tbf):"
  shape all
  blast "$SPRAY_BASE" 16 "$SECS"
  LINK_BLAST_GBPS=$BLAST_OUT
  echo "  link-clean udp-blast: $LINK_BLAST_GBPS Gbit/s"
  # One spine alone (one socket, on the gbn path's spine): what one path gets.
  blast $GBN_PORT 1 2
  ONE_SPINE_GBPS=$BLAST_OUT
  echo "  one spine (udp-blast, 1 socket): $ONE_SPINE_GBPS Gbit/s"
  conditions link
  fab impair --spine all --restore
fi

# Blackhole recovery: rate in 50 ms windows of the spray run's sampler.
recovery() {  # recovery COND
  python3 - "$FABRIC_TMP/rate.$1.spray" <<'PY' 2>/dev/null || echo "n/a"
import sys
pts, ev = [], None
for line in open(sys.argv[1]):
    if line.startswith("# event"):
        ev = float(line.split()[2]); continue
    t, b = line.split(); pts.append((float(t), int(b)))
def rate(a, b):  # bytes/s between times a and b
    xs = [p for p in pts if a <= p[0] <= b]
    return (xs[-1][1] - xs[0][1]) / (xs[-1][0] - xs[0][0]) if len(xs) > 1 and xs[-1][0] > xs[0][0] else 0
before = rate(ev - 1.0, ev)
t = ev
while t < pts[-1][0] - 0.05:
    if rate(t, t + 0.05) >= 0.7 * before:
        print("%.0f ms (pre-blackhole %.3f Gbit/s)" % ((t - ev) * 1000, before * 8e-9)); break
    t += 0.01
else:
    print("never within the run (pre-blackhole %.3f Gbit/s)" % (before * 8e-9))
PY
}
RECOVERY=$(recovery blackhole)
LINK_RECOVERY=n/a
[[ $LINK_RATE != off ]] && LINK_RECOVERY=$(recovery link-blackhole)

echo
echo "braid A/B over the namespace fabric (4 spines, MTU 9000, impaired spine $BAD, ${SECS} s runs)"
printf '%-10s %-5s %9s %9s %9s %7s %6s %4s %4s %-10s %s\n' condition mode Gbit/s p50_us p99_us rtx rtx% dup lost verdict "spread% s0/s1/s2/s3"
while IFS=$'\t' read -r c m g p50 p99 rtx rr dup lost v sp; do
  printf '%-10s %-5s %9s %9s %9s %7s %6s %4s %4s %-10s %s\n' "$c" "$m" "$g" "$p50" "$p99" "$rtx" "$rr" "$dup" "$lost" "$v" "$sp"
done <"$RES"
echo "udp-blast (raw UDP) clean: $BLAST_GBPS Gbit/s; link-bound ($LINK_RATE per spine link): $LINK_BLAST_GBPS Gbit/s, one spine ${ONE_SPINE_GBPS:-n/a} Gbit/s"
echo "spray recovery after the blackhole (first 50 ms window >= 0.7x pre-blackhole wire rate): $RECOVERY; link-bound: $LINK_RECOVERY"
# The fabric target ratios, per regime.
python3 - "$RES" "$BLAST_GBPS" "$LINK_BLAST_GBPS" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    try:
        rows[(f[0], f[1])] = float(f[2])
    except ValueError:
        pass
def ratio(a, b):
    return "%.3f" % (a / b) if a is not None and b else "n/a"
for pre, blast in (("", sys.argv[2]), ("link-", sys.argv[3])):
    g = lambda c, m: rows.get((pre + c, m))
    try:
        blast = float(blast)
    except ValueError:
        blast = None
    if g("clean", "spray") is None:
        continue
    print("%-10s clean spray/udp-blast %s (>= 0.8), loss1 spray/clean spray %s (>= 0.85), "
          "loss1 spray/gbn %s (>= 2)" % ("link-bound" if pre else "CPU-bound",
          ratio(g("clean", "spray"), blast), ratio(g("loss1", "spray"), g("clean", "spray")),
          ratio(g("loss1", "spray"), g("loss1", "gbn"))))
PY
cp "$RES" "$ROOT/out/fabric_demo.tsv"

if command -v gnuplot >/dev/null; then
  awk -F'\t' '{ g[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
    END { for (i = 0; i < n; i++) print order[i], g[order[i], "spray"] + 0, g[order[i], "gbn"] + 0 }' \
    "$RES" >"$FABRIC_TMP/bars.dat"
  have_ts=0
  [[ -s $FABRIC_TMP/rate.blackhole.spray && -s $FABRIC_TMP/rate.blackhole.gbn ]] && have_ts=1
  for m in spray gbn; do
    [[ -s $FABRIC_TMP/rate.blackhole.$m ]] || continue
    awk '/^#/ { next } { if (n++ && $1 - t >= 0.05) { printf "%.3f %.4f\n", $1, ($2 - b) * 8 / ($1 - t) / 1e9; t = $1; b = $2 } else if (n == 1) { t = $1; b = $2 } }' \
      "$FABRIC_TMP/rate.blackhole.$m" >"$FABRIC_TMP/ts.$m"
  done
  EV=$(awk '/^# event/ { print $3 }' "$FABRIC_TMP/rate.blackhole.spray" 2>/dev/null || true)
  gnuplot <<GP || echo "fabric_demo: gnuplot failed" >&2
set terminal pngcairo size 1100,450 font ",10"
set output "$ROOT/out/fabric_demo.png"
set multiplot layout 1,$((1 + have_ts)) title "braid spray vs go-back-N over the namespace fabric (4 spines, MTU 9000; impaired spine $BAD)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "goodput, Gbit/s"
set yrange [0:*]
set key top right
set title "goodput per condition (udp-blast clean: $BLAST_GBPS Gbit/s)"
plot "$FABRIC_TMP/bars.dat" using 2:xtic(1) title "spray (16 paths)", "" using 3 title "gbn (1 path)"
if ($have_ts) {
  set title "blackhole at t=${EV:-?} s: wire rate into host 1 (50 ms windows)"
  set xlabel "seconds"
  set ylabel "Gbit/s"
  plot "$FABRIC_TMP/ts.spray" using 1:2 with lines lw 2 title "spray", "$FABRIC_TMP/ts.gbn" using 1:2 with lines lw 2 title "gbn"
}
unset multiplot
GP
  [[ -s $ROOT/out/fabric_demo.png ]] && echo "chart: out/fabric_demo.png"
fi
echo "total $((SECONDS - T0)) s; tearing the fabric down"
